#!/usr/bin/env bash
# Makes the images of compose.yaml's other services (postgres:15-bookworm, redis:7-bookworm, haproxy:2.6) on a
# machine that reaches no image registry (this project's test machines), from Debian 12's own packages
# (deploy/images/). A machine that can pull the official images does not need this. Does nothing for an image
# that exists.
# Needs root, debootstrap and podman (make container-tools installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/debian-base-image.sh debian:bookworm
for pair in postgres=postgres:15-bookworm redis=redis:7-bookworm haproxy=haproxy:2.6; do
  dir=${pair%%=*} image=${pair#*=}
  if podman image exists "$image"; then continue; fi
  echo "making $image from Debian's packages" >&2
  podman build --quiet --pull=never --network host -t "$image" "deploy/images/$dir" >/dev/null
  echo "made $image" >&2
done

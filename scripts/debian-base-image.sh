#!/usr/bin/env bash
# Makes debian:bookworm, the base of the images this project makes on a machine that reaches no image registry
# (this project's test machines): Debian 12 (bookworm, minbase) from the machine's own Debian mirror, with
# debootstrap, with the machine's Debian sources (the release, its updates and its security fixes), as the
# official image has. scripts/node-base-image.sh and scripts/service-images.sh start from it. A machine that can pull
# the official image does not need this. Does nothing when the image exists.
# Needs root, debootstrap and podman (make container-tools installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-debian:bookworm}
if podman image exists "$image"; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
echo "making $image: debootstrap bookworm (about 90 s)" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || { cat "$work/debootstrap.log" >&2; exit 1; }
rm "$rootfs/etc/apt/sources.list"
cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log
tar -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$image" >/dev/null
echo "made $image" >&2

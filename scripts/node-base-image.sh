#!/usr/bin/env bash
# Makes the base image the Containerfile starts from, node:24-bookworm-slim, on a machine that reaches no image
# registry (this project's test machines): Debian 12 (debian:bookworm, made by scripts/debian-base-image.sh),
# the Node that .node-version pins, npm, and the `node` user (uid 1000) the official image has.
# A machine that can pull the official image does not need this. Does nothing when the image exists.
# Needs root, debootstrap and podman (make container-tools installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
image=${1:-node:24-bookworm-slim}
if podman image exists "$image"; then exit 0; fi
home=$(scripts/install-node.sh "$(cat .node-version)")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
scripts/debian-base-image.sh debian:bookworm
mkdir "$rootfs"
base=$(podman create debian:bookworm)
podman export "$base" | tar -C "$rootfs" -x
podman rm "$base" >/dev/null
cp "$home/bin/node" "$rootfs/usr/local/bin/node"
cp -R "$home/include" "$rootfs/usr/local/"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -R "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
tar -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$(cat .node-version)" \
  --change 'CMD ["node"]' - "$image" >/dev/null
echo "made $image" >&2

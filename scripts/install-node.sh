#!/usr/bin/env bash
# Installs Node.js <version> from the npm registry into .tools/node-<version> (once, about 5 s) and prints the
# folder that holds bin/node and include/node (the headers node-gyp builds native addons against).
# The package node-<platform>-<arch> is the official build of that Node, published to the registry.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/install-node.sh <version>}
package=node-$(node -p 'process.platform + "-" + process.arch')
home=$PWD/.tools/node-$version/node_modules/$package
if [ ! -x "$home/bin/node" ]; then
  npm install --prefix ".tools/node-$version" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "$package@$version" >&2
fi
echo "$home"

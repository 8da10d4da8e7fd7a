#!/usr/bin/env bash
# Builds the service as an operator would on Node.js <version> (22, 26: the lines beside the pinned one), in
# <folder>: the sources `make build` compiles, `npm ci --omit=dev` with that Node (better-sqlite3 compiled
# against its headers; again only when package-lock.json changed), then `npm run build`. Prints that Node's
# binary. tests/system/other-nodes.test.ts starts the result and runs the client scenarios against it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/build-on-node.sh <version> <folder>}
folder=${2:?usage: scripts/build-on-node.sh <version> <folder>}
home=$(scripts/install-node.sh "$version")
mkdir -p "$folder"
rm -rf "$folder/server" "$folder/generated" "$folder/openapi" "$folder/scripts" "$folder/dist"
cp -Rp package.json package-lock.json tsconfig.json tsconfig.build.json server generated openapi scripts "$folder/"
cd "$folder"
export PATH="$home/bin:$PATH" npm_config_nodedir="$home"
if [ ! -f node_modules/.installed ] || [ package-lock.json -nt node_modules/.installed ]; then
  npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2
  touch node_modules/.installed
fi
npm run build --silent >&2
echo "$home/bin/node"

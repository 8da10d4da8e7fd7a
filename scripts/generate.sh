#!/usr/bin/env bash
# Generates everything under generated/ from the contract, into the folder given (default: generated).
# `make generate` writes generated/; `make check-generated` writes a temporary folder and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-generated}
spec=openapi/user-records.yaml
bin=node_modules/.bin

# The generator jar ships inside an old release of the wrapper package (see openapitools.json): put it where
# the wrapper looks, so that it never tries to download one.
jar_dir=.tools/openapi-generator
if [ ! -f "$jar_dir/5.0.0-beta2.jar" ]; then
  mkdir -p "$jar_dir"
  cp node_modules/openapi-generator-jar/bin/openapi-generator.jar "$jar_dir/5.0.0-beta2.jar"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out/server"

"$bin/openapi-typescript" "$spec" --output "$out/api.d.ts" >/dev/null
node scripts/contract-module.mjs "$spec" contract >"$out/contract.ts"
node scripts/contract-module.mjs "$spec" runtime >"$out/runtime-contract.ts"
node scripts/contract-module.mjs "$spec" headers >"$out/response-headers.ts"
"$bin/openapi-generator-cli" validate -i "$spec" >/dev/null
"$bin/openapi-generator-cli" generate -g typescript-fetch -i "$spec" -t openapi/templates -o "$scratch" \
  --global-property apis,supportingFiles >"$scratch.log" 2>&1 || { cat "$scratch.log" >&2; exit 1; }
rm -f "$scratch.log"
# typescript-fetch renders our templates as index.ts and apis/index.ts; its other files are not used.
cp "$scratch/index.ts" "$out/routes.ts"
cp "$scratch/apis/index.ts" "$out/server/handlers.ts"
# The MSW handlers' validators, compiled ahead by ajv from the schemas the in-memory service compiles. The
# script imports the service's TypeScript (and generated/ as it is in the tree: after a contract change, run
# `make generate`, which writes generated/ in order); esbuild bundles it, inside the tree so that its packages resolve.
"$bin/esbuild" scripts/validators-module.ts --bundle --platform=node --format=esm --packages=external \
  --outfile=.tools/validators-module.mjs --log-level=error
node .tools/validators-module.mjs >"$out/validators.ts"

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

# The sandbox variant: the production contract with the sandbox's controls (delay, Prefer, the reset), an
# OpenAPI Overlay applied as it is written (no sorting, no bundling).
sandbox="$out/user-records.sandbox.yaml"
# openapi-format exits 0 on an overlay it cannot read, applying nothing: its summary must name every action applied.
"$bin/openapi-format" "$spec" --overlayFile openapi/sandbox.overlay.yaml --no-sort --no-bundle -o "$sandbox" -vv \
  >"$scratch.log" 2>&1 || { cat "$scratch.log" >&2; exit 1; }
if ! grep -q 'Unused actions:[[:space:]]*0$' "$scratch.log" || grep -q 'Total actions:[[:space:]]*0$' "$scratch.log"; then
  cat "$scratch.log" >&2
  echo "openapi/sandbox.overlay.yaml was not applied whole: every action must parse and match its target." >&2
  exit 1
fi
sed -i "1i # Generated from $spec and openapi/sandbox.overlay.yaml by \`make generate\`. Do not edit." "$sandbox"

# The typed client's paths: production's, and the sandbox's for a client of the sandbox or the MSW handlers.
"$bin/openapi-typescript" "$spec" --output "$out/api.d.ts" >/dev/null
"$bin/openapi-typescript" "$sandbox" --output "$out/sandbox-api.d.ts" >/dev/null
# The whole documents, for a server in each mode; the sandbox's without prose, for the MSW handlers and the
# npx sandbox; the declared answer headers (the sandbox's are a superset), for the client.
node scripts/contract-module.mjs "$spec" contract >"$out/contract.ts"
node scripts/contract-module.mjs "$sandbox" sandbox >"$out/sandbox-contract.ts"
node scripts/contract-module.mjs "$sandbox" runtime >"$out/runtime-contract.ts"
node scripts/contract-module.mjs "$sandbox" headers >"$out/response-headers.ts"
"$bin/openapi-generator-cli" validate -i "$spec" >/dev/null
"$bin/openapi-generator-cli" validate -i "$sandbox" >/dev/null
# The route table and the handlers' interface come from the sandbox variant, which has every operation; a
# server not in sandbox mode mounts only the operations its own contract has.
"$bin/openapi-generator-cli" generate -g typescript-fetch -i "$sandbox" -t openapi/templates -o "$scratch" \
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

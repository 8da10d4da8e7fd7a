#!/usr/bin/env bash
# Regenerates from the contract into a temporary folder and fails on any difference with generated/.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
scripts/generate.sh "$scratch"
if ! diff -ru generated "$scratch"; then
  echo "generated/ is stale: run 'make generate' and commit the result." >&2
  exit 1
fi
echo "generated/ matches openapi/user-records.yaml and openapi/sandbox.overlay.yaml"

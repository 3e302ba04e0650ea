#!/usr/bin/env bash
# Proves the harness catches errors: the hand-written catalogs in fixtures/*.json (one per
# format and variant, shaped as in shared/spec/PROTOCOLS.md §1) must type-check against the
# SDKs' types, and every fixtures/bad/*.json must fail with the error EXPECT.tsv names.
# Needs no cargo build; one tsc run (about a second).
set -euo pipefail
cd "$(dirname "$0")"

# npm ci only when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --ignore-scripts --no-audit --no-fund
fi

rm -rf selftest-out
node gen.mjs fixtures selftest-out/good
node gen.mjs fixtures/bad selftest-out/bad
rc=0
node_modules/.bin/tsc -p tsconfig.selftest.json --pretty false > selftest-out/tsc.txt || rc=$?
node verify.mjs selftest-out/tsc.txt "$rc" \
  --pass selftest-out/good --fail selftest-out/bad --expect fixtures/bad/EXPECT.tsv

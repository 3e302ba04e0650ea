#!/usr/bin/env bash
# Exports the real catalogs with the toolsmith CLI and type-checks each against the official
# SDK's own TypeScript types (gen.mjs pastes the JSON as a typed object literal; tsc checks it).
#
#   tests/ts/check.sh [FORMAT...]     (default: every format that has an SDK type)
#
# openai, openai-responses and anthropic are exported twice: as is and with --strict
# (out/<format>-strict.json); gemini twice: parametersJsonSchema (the default) and, with
# --gemini-schema openapi, `parameters` in the OpenAPI 3.0 subset (out/gemini-openapi.json),
# the one whose body the SDK types field by field. A --strict export that the CLI refuses (a
# tool that cannot be strict) counts as failed; STRICT_ARGS adds arguments to the --strict
# exports only, e.g. STRICT_ARGS="--tag weather --tag files" to export a strict-capable subset.
# Ends with "N passed, M failed"; exits non-zero on any failure,
# a catalog the CLI cannot export included.
set -euo pipefail
cd "$(dirname "$0")"

ALL_FORMATS=(openai openai-responses anthropic gemini mcp)
STRICT_FORMATS=" openai openai-responses anthropic "
if [ "$#" -gt 0 ]; then formats=("$@"); else formats=("${ALL_FORMATS[@]}"); fi

npm ci --ignore-scripts --no-audit --no-fund

rm -rf out
mkdir -p out
failed=()
export_catalog() { # NAME ARGS...
  local name=$1
  shift
  echo "export: toolsmith catalog $* --out out/$name.json"
  if ! cargo run -q -p examples --bin toolsmith -- catalog "$@" --out "out/$name.json"; then
    echo "export of $name failed" >&2
    rm -f "out/$name.json"
    failed+=(--failed "$name")
  fi
}
for fmt in "${formats[@]}"; do
  export_catalog "$fmt" --format "$fmt"
  if [[ "$STRICT_FORMATS" == *" $fmt "* ]]; then
    # shellcheck disable=SC2086 # STRICT_ARGS is a list of words
    export_catalog "$fmt-strict" --format "$fmt" --strict ${STRICT_ARGS:-}
  fi
  if [ "$fmt" = gemini ]; then
    export_catalog gemini-openapi --format gemini --gemini-schema openapi
  fi
done

node gen.mjs out out
rc=0
node_modules/.bin/tsc -p tsconfig.json --pretty false > out/tsc.txt || rc=$?
node verify.mjs out/tsc.txt "$rc" --pass out "${failed[@]}"

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
# Then, per provider, the tool results of a few calls (`toolsmith call ID ARGS --as FORMAT`)
# go into out/result-<format>.json, checked like the catalogs.
# Ends with "N passed, M failed"; exits non-zero on any failure,
# a catalog the CLI cannot export included.
#
# Every export and call runs one `toolsmith` binary (no `cargo run` per call): TOOLSMITH_BIN_DIR's,
# else built here once (tests/bins.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
source tests/bins.sh
toolsmith=$(bins_dir toolsmith)/toolsmith
cd "$here"

ALL_FORMATS=(openai openai-responses anthropic gemini mcp)
STRICT_FORMATS=" openai openai-responses anthropic "
if [ "$#" -gt 0 ]; then formats=("$@"); else formats=("${ALL_FORMATS[@]}"); fi

# npm ci only when node_modules is missing or older than the lock file (as selftest.sh, which
# .ci/run runs first: one install per run).
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --ignore-scripts --no-audit --no-fund
fi

rm -rf out
mkdir -p out
failed=()
export_catalog() { # NAME ARGS...
  local name=$1
  shift
  echo "export: toolsmith catalog $* --out out/$name.json"
  if ! "$toolsmith" catalog "$@" --out "out/$name.json"; then
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

# Tool search (toolsmith catalog --tool-search): every tool deferred but two, the files and
# weather tools in namespaces (OpenAI Responses groups them; elsewhere they are warned about),
# one tool already loaded; out/<format>-search-<mode>.json. Native and client search where the
# provider has its own (OpenAI Responses, Anthropic), the generated `search_tools` elsewhere.
# Anthropic's also marks its last tool with cache_control (--cache-tools), as does
# out/anthropic-cached.json. Then the `allowed_tools` tool_choice: out/choice-<format>.json.
SEARCH_ARGS=(--defer-all-except weather-tool,calculate --namespace files=files --namespace weather=weather --loaded text-stats)
for fmt in "${formats[@]}"; do
  case "$fmt" in
    openai-responses) modes=(native client) ;;
    anthropic) modes=(native client) ;;
    *) modes=(generated) ;;
  esac
  extra=()
  if [ "$fmt" = anthropic ]; then extra=(--cache-tools); fi
  for mode in "${modes[@]}"; do
    export_catalog "$fmt-search-$mode" --format "$fmt" --tool-search "$mode" "${SEARCH_ARGS[@]}" "${extra[@]}"
  done
  # The answer to a client-executed search (Responses: tool_search_output; Anthropic: a
  # tool_result of tool_reference blocks): out/answer-<format>.json.
  case "$fmt" in
    openai-responses | anthropic)
      export_catalog "answer-$fmt" --format "$fmt" --tool-search client "${SEARCH_ARGS[@]}" --answer-search "weather forecast for a city" ;;
  esac
  case "$fmt" in
    anthropic) export_catalog anthropic-cached --format anthropic --cache-tools ;;
    openai | openai-responses) export_catalog "choice-$fmt" --format "$fmt" --allowed-tools --defer-all-except weather-tool --loaded calculate ;;
  esac
done

# Tool results: out/result-<format>.json is a JSON array of what `toolsmith call` prints for
# each call below, in this order (gen.mjs labels them "result #0" ...). A call that fails to
# print counts as failed, as does a format whose array cannot be assembled.
RESULT_FORMATS=(openai openai-responses anthropic mcp)
RESULT_CALLS=(
  'weather-model-output|{"location":"Seattle"}'
  'weather-tool|{"location":"Nowhere"}'
  'convert-units|{"value": 100, "from": "C", "to": "F"}'
  'text-stats|{"text": "Hello world."}'
)
for fmt in "${RESULT_FORMATS[@]}"; do
  name="result-$fmt"
  parts=()
  ok=1
  for i in "${!RESULT_CALLS[@]}"; do
    call=${RESULT_CALLS[$i]}
    echo "call: toolsmith call ${call%%|*} '${call#*|}' --as $fmt"
    if "$toolsmith" call "${call%%|*}" "${call#*|}" --as "$fmt" > "out/$name.$i.part"; then
      parts+=("out/$name.$i.part")
    else
      echo "call #$i for $name failed" >&2
      ok=0
    fi
  done
  if [ "$ok" = 1 ] && node -e '
    const fs = require("node:fs");
    const [outFile, ...parts] = process.argv.slice(1);
    fs.writeFileSync(outFile, JSON.stringify(parts.map((p) => JSON.parse(fs.readFileSync(p, "utf8"))), null, 2) + "\n");
  ' "out/$name.json" "${parts[@]}"; then :; else
    rm -f "out/$name.json"
    failed+=(--failed "$name")
  fi
  rm -f out/"$name".*.part
done

node gen.mjs out out
rc=0
node_modules/.bin/tsc -p tsconfig.json --pretty false > out/tsc.txt || rc=$?
node verify.mjs out/tsc.txt "$rc" --pass out "${failed[@]}"

#!/usr/bin/env bash
# Start-up time (performance issue, goal 3): from process start to the first answered stateless
# `tools/call`, Toolsmith's MCP server against bare rmcp serving the same tools, in one run,
# with the ratio. Each measurement is the median of RUNS (default 15) starts; the servers
# alternate. Rows:
#   - `echo` alone, and with 1,000 generated tools (TOOLS=1000, bench/mcp/shared/generated.rs:
#     the same names, descriptions and three-parameter schemas on both sides);
#   - the example tools through the `toolsmith` binary (`serve --http --stateless
#     --json-response`, every feature the CLI links, calling `calculate`) against bare rmcp
#     with the same number of tools.
# Also prints each server's RSS right after its first answer. Not part of CI.
#
#   bench/mcp/startup.sh            # NO_BUILD=1 to use what is built; RUNS=30 for more runs
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=${RUNS:-15}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  (cd "$ROOT" && cargo build --release -p mcp-toolsmith-echo && cargo build --release -p examples --bin toolsmith) >&2
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
fi
ours=$TARGET_DIR/release/mcp-toolsmith-echo
cli=$TARGET_DIR/release/toolsmith
bare=$HERE/rmcp/target/release/mcp-bare-rmcp
flags=(ADDR --stateless --json-response)
examples=$("$cli" list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')

measure() { # measure TOOLS COMMAND...: the JSON line of startup.py
  python3 "$HERE/startup.py" "$RUNS" "$@"
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

echo "| tools | server | start to first answer (median of $RUNS) | RSS then | ours/rmcp |"
echo "|---|---|---:|---:|---:|"
row() { # row LABEL OURS_JSON RMCP_JSON OURS_NAME
  local label=$1 o=$2 r=$3 name=$4
  local om rm
  om=$(field "$o" median_ms) rm=$(field "$r" median_ms)
  printf '| %s | %s | %.1f ms | %d KiB | %s |\n' "$label" "$name" "$om" "$(field "$o" rss_kib)" \
    "$(awk -v a="$om" -v b="$rm" 'BEGIN { printf "%.2f×", a / b }')"
  printf '| %s | bare rmcp | %.1f ms | %d KiB | |\n' "$label" "$rm" "$(field "$r" rss_kib)"
}
for tools in 0 1000; do
  o=$(measure "$tools" "$ours" "${flags[@]}")
  r=$(measure "$tools" "$bare" "${flags[@]}")
  row "echo + $tools generated" "$o" "$r" "mcp-toolsmith-echo"
done
# The example tools: bare rmcp serves `echo` plus as many generated tools, so the counts match.
o=$(STARTUP_CALL='{"name": "calculate", "arguments": {"expression": "1 + 1"}}' \
  measure 0 "$cli" serve --http "${flags[@]}")
r=$(measure $((examples - 1)) "$bare" "${flags[@]}")
row "the $examples example tools" "$o" "$r" "toolsmith serve"

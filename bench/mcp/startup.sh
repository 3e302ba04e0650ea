#!/usr/bin/env bash
# Start-up time (performance issue, goal 3): from process start to the first answered stateless
# `tools/call`, Toolsmith's MCP server against bare rmcp serving the same tools, in one run,
# with the ratio. Each measurement is the median of RUNS (default 15) starts; the servers
# alternate. Rows:
#   - `echo` alone, and with 1,000 generated tools (TOOLS=1000, bench/mcp/shared/generated.rs:
#     the same names, descriptions and three-parameter schemas on both sides);
#   - the example tools served by a binary of their own (bench/mcp/examples: the `examples`
#     crate's tools and Toolsmith's MCP server, as a user deploys their tools), calling
#     `calculate`, against bare rmcp serving the same tools: their `tools/list` entries (names,
#     descriptions, schemas, annotations), taken from our server's listing and read from a
#     file at start (`TOOLS_FILE`), each answering with its arguments;
#   - the same tools through the `toolsmith` command line (`serve --http --stateless
#     --json-response`, every feature the CLI links: its store, pins and flags) against the
#     same bare rmcp.
# Also prints each server's RSS right after its first answer. Not part of CI.
#
#   bench/mcp/startup.sh            # NO_BUILD=1 to use what is built; RUNS=30 for more runs
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUNS=${RUNS:-15}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  (cd "$ROOT" && cargo build --release -p mcp-toolsmith-echo && cargo build --release -p mcp-toolsmith-examples && cargo build --release -p examples --bin toolsmith) >&2
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
fi
ours=$TARGET_DIR/release/mcp-toolsmith-echo
cli=$TARGET_DIR/release/toolsmith
own=$TARGET_DIR/release/mcp-toolsmith-examples
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
# The example tools. Bare rmcp serves their own `tools/list` entries, saved from our server.
listing=$(mktemp -t startup-listing.XXXXXX)
trap 'rm -f "$listing"' EXIT
python3 "$HERE/listing.py" "$own" "$listing"
export STARTUP_CALL='{"name": "calculate", "arguments": {"expression": "1 + 1"}}'
o=$(measure 0 "$own" "${flags[@]}")
r=$(TOOLS_FILE=$listing measure 0 "$bare" "${flags[@]}")
row "the $examples example tools" "$o" "$r" "mcp-toolsmith-examples"
o=$(measure 0 "$cli" serve --http "${flags[@]}")
row "the $examples example tools" "$o" "$r" "toolsmith serve"

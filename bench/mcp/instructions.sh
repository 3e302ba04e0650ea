#!/usr/bin/env bash
# Instructions per MCP `tools/call` (performance issue, goal 2), ours and bare rmcp's, under
# valgrind's callgrind: each server starts under valgrind, its counters are zeroed once it
# listens, one client (bench/mcp/loadgen) calls `echo` back to back for DURATION seconds, the
# counters are dumped, and the total is divided by the calls made. Deterministic where the
# wall clock of a shared machine is not, so an A/B of two trees holds; it counts user-space
# instructions only (not the kernel, not waiting). Not part of CI.
#
#   bash bench/mcp/instructions.sh          # MODE=stateless for --stateless --json-response
#                                           # NO_BUILD=1 to use what is built; DURATION=15
#                                           # OURS=fixture for the conformance fixture (lib.sh)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MODE=${MODE:-stateful}
DURATION=${DURATION:-15}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
for tool in valgrind callgrind_control callgrind_annotate jq; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install valgrind jq)" >&2; exit 1; }
done
source "$HERE/lib.sh"
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  build_ours
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
  cargo build --release --locked --manifest-path "$HERE/loadgen/Cargo.toml" >&2
fi
flags=()
[[ $MODE == stateless ]] && flags=(--stateless --json-response)
OUT=$(mktemp -d -t mcp-instructions.XXXXXX)
PID=""
trap '[[ -n $PID ]] && kill "$PID" 2>/dev/null || true' EXIT

count() { # count NAME COMMAND...: prints "NAME INSTRUCTIONS_PER_CALL CALLS"
  local name=$1 url
  shift
  valgrind --tool=callgrind --callgrind-out-file="$OUT/$name.out" "$@" 2>"$OUT/$name.log" >/dev/null &
  PID=$!
  url=$(wait_url "$OUT/$name.log") || exit 1
  callgrind_control -z "$PID" >/dev/null
  local calls
  calls=$("$HERE/loadgen/target/release/mcp-loadgen" --url "$url" --clients 1 --duration "$DURATION" --warmup 0 --threads 1 | jq .requests)
  callgrind_control -d "$PID" >/dev/null
  sleep 1
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  PID=""
  local total
  total=$(callgrind_annotate "$OUT/$name.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  echo "$name $((total / calls)) $calls"
}

# shellcheck disable=SC2046 # ours_cmd prints the command's words
ours=$(count ours $(ours_cmd "${flags[@]}"))
bare=$(count rmcp "$HERE/rmcp/target/release/mcp-bare-rmcp" 127.0.0.1:0 "${flags[@]}")
read -r _ oi oc <<<"$ours"
read -r _ ri rc <<<"$bare"
echo "ours: OURS=$OURS (${OURS_BIN##*/}); mode: $MODE, one client, ${DURATION}s under valgrind"
printf '| server | instructions per call | calls |\n|---|---:|---:|\n| ours | %d | %d |\n| rmcp | %d | %d |\n' "$oi" "$oc" "$ri" "$rc"
awk -v o="$oi" -v r="$ri" 'BEGIN { printf "ours/rmcp: %.2f× the instructions per call\n", o / r }'

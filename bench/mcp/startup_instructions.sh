#!/usr/bin/env bash
# Start-up in instructions (performance issue, goal 3): each server starts under valgrind's
# callgrind, one stateless `tools/call` of `echo` is sent as soon as it listens (polled), and the
# counters are dumped once it is answered: every user-space instruction from process start to
# the first answer (the dynamic loader, registering the tools, the runtime, the listener and
# the call). Deterministic where start-up's wall clock on a shared machine moves by 20–40 %
# between runs (bench/mcp/startup.sh measures that); the kernel's work (mapping and faulting in
# a larger binary's pages) is not counted. Ours (`mcp-toolsmith-echo`) and bare rmcp, with
# `echo` alone and with TOOLS generated tools (bench/mcp/shared/generated.rs) on both sides, then
# the example tools (bench/mcp/examples) against bare rmcp serving their `tools/list` entries.
# Not part of CI.
#
#   bash bench/mcp/startup_instructions.sh     # NO_BUILD=1 to use what is built; TOOLS="0 1000"
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
for tool in valgrind callgrind_control curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install valgrind curl)" >&2; exit 1; }
done
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  (cd "$ROOT" && cargo build --release -p mcp-toolsmith-echo && cargo build --release -p mcp-toolsmith-examples) >&2
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
fi
OUT=$(mktemp -d -t startup-instructions.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# count TOOLS BIN: the instructions from start to the first answered call (of `echo`, or
# STARTUP_CALL: '{"name": ..., "arguments": ...}')
count() {
  local tools=$1 bin=$2 port pid call=${STARTUP_CALL:-'{"name": "echo", "arguments": {"text": "hello"}}'}
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  TOOLS=$tools valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.%p" \
    "$bin" "127.0.0.1:$port" --stateless --json-response 2>"$OUT/valgrind.err" &
  pid=$!
  for _ in $(seq 1 3000); do
    if curl -sf -o "$OUT/answer" -X POST "http://127.0.0.1:$port/mcp" \
      -H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json' \
      -H 'MCP-Protocol-Version: 2025-11-25' \
      --data "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": $call}"; then
      break
    fi
    sleep 0.05
  done
  grep -q '"result"' "$OUT/answer" || { echo "$bin did not answer: $(cat "$OUT/answer" 2>/dev/null)" >&2; kill "$pid"; exit 1; }
  callgrind_control --dump=first "$pid" >/dev/null 2>&1
  sleep 1
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The dump taken at the first answer (callgrind writes FILE.1 for it).
  awk '/^summary:|^totals:/ { print $2; exit }' "$OUT/cg.$pid.1"
  rm -f "$OUT"/cg.*
}

echo "| tools | ours (mcp-toolsmith-echo) | bare rmcp | ours/rmcp |"
echo "|---|---:|---:|---:|"
for tools in ${TOOLS:-0 1000}; do
  o=$(count "$tools" "$TARGET_DIR/release/mcp-toolsmith-echo")
  r=$(count "$tools" "$HERE/rmcp/target/release/mcp-bare-rmcp")
  printf '| echo + %s generated | %s | %s | %s |\n' "$tools" "$o" "$r" "$(awk -v a="$o" -v b="$r" 'BEGIN { printf "%.2f×", a / b }')"
done
# The example tools from a server binary of their own (bench/mcp/examples), against bare rmcp
# serving their `tools/list` entries (TOOLS_FILE, saved from ours), calling `calculate`.
python3 "$HERE/listing.py" "$TARGET_DIR/release/mcp-toolsmith-examples" "$OUT/listing.json"
export STARTUP_CALL='{"name": "calculate", "arguments": {"expression": "1 + 1"}}'
o=$(count 0 "$TARGET_DIR/release/mcp-toolsmith-examples")
r=$(TOOLS_FILE=$OUT/listing.json count 0 "$HERE/rmcp/target/release/mcp-bare-rmcp")
printf '| the %s example tools (mcp-toolsmith-examples) | %s | %s | %s |\n' "$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$OUT/listing.json")" "$o" "$r" "$(awk -v a="$o" -v b="$r" 'BEGIN { printf "%.2f×", a / b }')"

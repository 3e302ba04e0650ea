#!/usr/bin/env bash
# Fairness between callers: caller Y's latency alone and while caller X floods the server with
# slow calls, with per-caller limits on and, for contrast, off. Not part of CI.
#
# The server (`toolsmith/src/fair.rs`) has one tool, `work`, whose calls share a pool of
# BACKEND (4) backend connections, each call holding one for `ms` milliseconds: the resource a
# caller's slow calls fill. X (connections from 127.0.0.2) runs X_CLIENTS (20) clients calling
# `work` with X_MS (200) ms back to back: 10x its concurrency limit of LIMIT (2). Y (127.0.0.3)
# runs Y_CLIENTS (2) clients calling `work` with Y_MS (5) ms. Without authorization the server
# tells callers apart by IP address (OAuth subjects take the same path, keyed by subject).
# X's clients honour the retry time of a refusal (`--refusals wait`), as a well-behaved client
# does; with X_REFUSALS=error they ignore it (a refusal counts as an X error and the client
# calls again 1 ms later: a hostile flood of cheap refusals). Y's treat a refusal as an error.
#
# For LIMITS in on off: a fresh server (on: --caller-concurrency LIMIT --caller-rate RATE),
# then Y alone, then Y while X floods (X starts 1 s before Y's warm-up). Prints Y's p50/p99 in
# both, the ratio flood/alone (goal with limits on: p99 ratio <= 2), and what X got done.
#
#   MODE=stateless (default: --stateless --json-response; refusals are 429) or stateful
#   (sessions; a refusal inside a session is a JSON-RPC error)
#   DURATION (5) WARMUP (1) seconds per run; LIMIT (2) RATE (1000) BACKEND (4)
#   X_CLIENTS (20) X_MS (200) Y_CLIENTS (2) Y_MS (5); NO_BUILD=1 skips the builds; OUT=DIR keeps
#   the raw JSON and logs (default: a temporary folder)
#
# Needs cargo, jq. Exit status 1 if Y had errors or the goal is missed with limits on.

set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
MODE=${MODE:-stateless}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
LIMIT=${LIMIT:-2}
RATE=${RATE:-1000}
BACKEND=${BACKEND:-4}
X_CLIENTS=${X_CLIENTS:-20}
X_MS=${X_MS:-200}
Y_CLIENTS=${Y_CLIENTS:-2}
Y_MS=${Y_MS:-5}
OUT=${OUT:-$(mktemp -d -t fairness.XXXXXX)}
mkdir -p "$OUT"
SERVER=$TARGET_DIR/release/mcp-toolsmith-fair
LOADGEN=$HERE/loadgen/target/release/mcp-loadgen
X_ADDR=127.0.0.2
Y_ADDR=127.0.0.3

source "$HERE/lib.sh"

for tool in cargo jq; do
  command -v "$tool" >/dev/null || { echo "fairness.sh needs $tool" >&2; exit 2; }
done
case $MODE in
  stateless) MODE_FLAGS=(--stateless --json-response) ;;
  stateful) MODE_FLAGS=() ;;
  *) echo "MODE must be stateless or stateful, not $MODE" >&2; exit 2 ;;
esac

if [[ -z "${NO_BUILD:-}" ]]; then
  (cd "$ROOT" && cargo build --release -p mcp-toolsmith-echo --bin mcp-toolsmith-fair) >&2
  cargo build --release --locked --manifest-path "$HERE/loadgen/Cargo.toml" >&2
fi

SERVER_PID=""
stop_server() {
  if [[ -n "$SERVER_PID" ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap stop_server EXIT

# loadgen URL FROM CLIENTS MS DURATION [FLAGS…]: one generator run, its JSON on stdout.
loadgen() {
  local url=$1 from=$2 clients=$3 ms=$4 duration=$5
  shift 5
  timeout $((duration + WARMUP + 30)) "$LOADGEN" --url "$url" --local-address "$from" --clients "$clients" \
    --tool work --args "{\"ms\": $ms}" --duration "$duration" --warmup "$WARMUP" "$@" 2>>"$OUT/loadgen.log"
}

Y_ERRORS=0
declare -A ROW
for limits in on off; do
  flags=("${MODE_FLAGS[@]}" --backend "$BACKEND")
  [[ $limits == on ]] && flags+=(--caller-concurrency "$LIMIT" --caller-rate "$RATE")
  "$SERVER" 127.0.0.1:0 "${flags[@]}" 2>"$OUT/server-$limits.log" &
  SERVER_PID=$!
  url=$(wait_url "$OUT/server-$limits.log")
  alone=$(loadgen "$url" "$Y_ADDR" "$Y_CLIENTS" "$Y_MS" "$DURATION") || true
  echo "$alone" >"$OUT/y-alone-$limits.json"
  # X runs through Y's whole run: started first, for Y's warm-up and window and a second more.
  loadgen "$url" "$X_ADDR" "$X_CLIENTS" "$X_MS" $((DURATION + WARMUP + 2)) --refusals "${X_REFUSALS:-wait}" >"$OUT/x-$limits.json" || true &
  x_pid=$!
  sleep 1
  flood=$(loadgen "$url" "$Y_ADDR" "$Y_CLIENTS" "$Y_MS" "$DURATION") || true
  echo "$flood" >"$OUT/y-flood-$limits.json"
  wait "$x_pid" || true
  stop_server
  x=$(cat "$OUT/x-$limits.json")
  for run in "$alone" "$flood"; do
    Y_ERRORS=$((Y_ERRORS + $(jq -r '.errors // 1' <<<"${run:-null}")))
  done
  ROW[$limits]=$(jq -nr --argjson a "${alone:-null}" --argjson f "${flood:-null}" --argjson x "${x:-null}" --arg l "$limits" '
    def r(v): if v == null then "-" else (v * 100 | round / 100 | tostring) end;
    [$l, r($a.p50_ms) + " / " + r($a.p99_ms), r($f.p50_ms) + " / " + r($f.p99_ms),
     (if $a.p50_ms and $f.p50_ms then r($f.p50_ms / $a.p50_ms) + "x" else "-" end),
     (if $a.p99_ms and $f.p99_ms then r($f.p99_ms / $a.p99_ms) + "x" else "-" end),
     ($x.requests // "-" | tostring), ($x.refused // "-" | tostring), ($x.errors // "-" | tostring)]
    | "| " + join(" | ") + " |"')
done

echo
echo "Fairness, $MODE: Y = $Y_CLIENTS clients calling work($Y_MS ms); X = $X_CLIENTS clients calling work($X_MS ms)"
echo "(limits on: --caller-concurrency $LIMIT --caller-rate $RATE; backend pool $BACKEND; ${DURATION}s after ${WARMUP}s warm-up)"
echo
echo "| limits | Y alone p50 / p99 ms | Y under X's flood p50 / p99 ms | p50 flood/alone | p99 flood/alone | X calls done in its window | X refused | X errors |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for limits in on off; do
  echo "${ROW[$limits]}"
done
echo
echo "raw JSON and logs: $OUT"

ratio=$(jq -r 'if .p99_ms and $a.p99_ms then .p99_ms / $a.p99_ms else 1e9 end' \
  --argjson a "$(cat "$OUT/y-alone-on.json" 2>/dev/null || echo null)" "$OUT/y-flood-on.json" 2>/dev/null || echo 1e9)
if [[ $Y_ERRORS -gt 0 ]]; then
  echo "Y had $Y_ERRORS error(s): see $OUT/loadgen.log" >&2
  exit 1
fi
if awk -v r="$ratio" 'BEGIN { exit !(r > 2) }'; then
  echo "goal missed: with limits on, Y's p99 under X's flood is ${ratio}x its p99 alone (goal <= 2x)" >&2
  exit 1
fi
echo "goal met: with limits on, Y's p99 under X's flood is $(printf '%.2f' "$ratio")x its p99 alone (goal <= 2x)"

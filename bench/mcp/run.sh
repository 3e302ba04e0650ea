#!/usr/bin/env bash
# MCP tools/call benchmark: Toolsmith's MCP server (the `mcp_fixture` example, rmcp) against the
# official TypeScript SDK (bench/mcp/ts/server.mjs), the same `echo` tool, over Streamable HTTP
# on loopback, driven by the same closed-loop load generator (bench/mcp/loadgen) in one run.
# Not part of CI. See bench/mcp/README.md.
#
# Environment (all optional):
#   DURATION=5        measured seconds per run
#   WARMUP=1          unmeasured seconds before each run's window
#   CLIENTS="1 16 64" concurrent clients
#   ROUNDS=1          how many times the whole client sweep is repeated
#   TS_MODE=stateful  or stateless (see ts/server.mjs)
#   TS_JSON=0         1: the TS server answers with JSON bodies instead of SSE
#   LOADGEN_THREADS   the generator's worker threads (default: the number of CPUs)
#   MAX_OTHER_CORES=0.25  a pair of runs during which other processes used more CPU is rerun
#   RETRIES=3         how many times at most (the last try is kept, marked *, if none was clean)
#   NO_BUILD=1        skip cargo build and npm ci (use what is there)
#   OURS_CMD          the command serving our side instead of the fixture; it must print
#                     "serving MCP on http://ADDR/mcp" on stderr
#   OUT=DIR           where raw JSON results and server logs go (default: a temporary folder)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
CLIENTS=${CLIENTS:-"1 16 64"}
ROUNDS=${ROUNDS:-1}
TS_MODE=${TS_MODE:-stateful}
TS_JSON=${TS_JSON:-0}
LOADGEN_THREADS=${LOADGEN_THREADS:-$(nproc)}
MAX_OTHER_CORES=${MAX_OTHER_CORES:-0.25}
RETRIES=${RETRIES:-3}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$(mktemp -d -t mcp-bench.XXXXXX)}
mkdir -p "$OUT"
LOADGEN=$HERE/loadgen/target/release/mcp-loadgen

for tool in cargo node npm jq; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 2; }
done

log() { echo "[bench] $*" >&2; }

if [[ "${NO_BUILD:-0}" != 1 ]]; then
  if [[ -z "${OURS_CMD:-}" ]]; then
    log "building mcp_fixture (release)"
    (cd "$ROOT" && cargo build --release -p examples --bin mcp_fixture) >&2
  fi
  log "building the load generator (release)"
  cargo build --release --locked --manifest-path "$HERE/loadgen/Cargo.toml" >&2
  log "npm ci (TypeScript SDK server)"
  (cd "$HERE/ts" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
OURS_CMD=${OURS_CMD:-"$TARGET_DIR/release/mcp_fixture --http 127.0.0.1:0"}

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME COMMAND...: runs COMMAND in the background, waits (at most 30 s) for its
# "serving MCP on http://ADDR/mcp" line on stderr and sets URL_<NAME>.
start() {
  local name=$1
  shift
  "$@" 2>"$OUT/$name.log" >/dev/null &
  local pid=$!
  PIDS+=("$pid")
  eval "PID_$name=$pid"
  local url=""
  for _ in $(seq 300); do
    url=$(grep -o 'serving MCP on http://[^ ]*/mcp' "$OUT/$name.log" | head -1 | sed 's/^serving MCP on //') || true
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || { log "$name exited:"; cat "$OUT/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n "$url" ]] || { log "$name did not print its address in 30 s"; cat "$OUT/$name.log" >&2; exit 1; }
  eval "URL_$name=\$url"
  log "$name: $url (pid $pid)"
}

# shellcheck disable=SC2086
start ours $OURS_CMD
start ts env PORT=0 MODE="$TS_MODE" JSON="$TS_JSON" node "$HERE/ts/server.mjs"

# Each run is bounded: warm-up + duration + the generator's 10 s request timeout + slack.
RUN_LIMIT=$(awk -v d="$DURATION" -v w="$WARMUP" 'BEGIN { printf "%d", d + w + 30 }')
FAILED=0
: >"$OUT/results.jsonl"
: >"$OUT/rejected.jsonl"
# CPU accounting, in clock ticks: all CPUs' busy time, a process's own time, and the time of
# this shell's reaped children (the generator runs). What is left of the busy time is other
# processes on the machine, which skew a run (see README.md).
HZ=$(getconf CLK_TCK)
busy_ticks() { local _c u n s i w irq sirq st _r; read -r _c u n s i w irq sirq st _r </proc/stat; echo $((u + n + s + irq + sirq + st)); }
proc_ticks() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }; s=${s##*) }; set -- $s; echo $((${12} + ${13})); }
child_ticks() { local s; s=$(cat "/proc/$$/stat"); s=${s##*) }; set -- $s; echo $((${14} + ${15})); }
now_ns() { date +%s%N; }

run() { # run SIDE CLIENTS ROUND
  local side=$1 clients=$2 round=$3 url pid
  eval "url=\$URL_$side; pid=\$PID_$side"
  kill -0 "$pid" 2>/dev/null || { log "the $side server died:"; cat "$OUT/$side.log" >&2; exit 1; }
  log "$side, $clients client(s), round $round: ${WARMUP}s warm-up + ${DURATION}s"
  local json b0 s0 o0 g0 w0
  b0=$(busy_ticks) s0=$(proc_ticks "$PID_ours") o0=$(proc_ticks "$PID_ts") g0=$(child_ticks) w0=$(now_ns)
  if ! json=$(timeout "$RUN_LIMIT" "$LOADGEN" --url "$url" --clients "$clients" --duration "$DURATION" \
    --warmup "$WARMUP" --threads "$LOADGEN_THREADS" 2>>"$OUT/loadgen.log"); then
    FAILED=1
    log "the generator reported errors against $side (see $OUT/loadgen.log)"
    tail -1 "$OUT/loadgen.log" >&2
  fi
  local db ds dt dg dw
  db=$(($(busy_ticks) - b0)) ds=$(($(proc_ticks "$PID_ours") - s0)) dt=$(($(proc_ticks "$PID_ts") - o0))
  dg=$(($(child_ticks) - g0)) dw=$(($(now_ns) - w0))
  [[ -n "$json" ]] || json='{"clients":'"$clients"',"requests":0,"rps":0,"p50_ms":null,"p99_ms":null,"errors":-1}'
  # Cores used over the run (warm-up included): the server under test, the generator, the
  # other server (idle, should be ~0) and everything else on the machine.
  echo "$json" | jq -c --arg side "$side" --argjson round "$round" --argjson hz "$HZ" --argjson wall_ns "$dw" \
    --argjson db "$db" --argjson dours "$ds" --argjson dts "$dt" --argjson dgen "$dg" '
    def cores($t): ($t / $hz) / ($wall_ns / 1e9) * 100 | round / 100;
    . + {side: $side, round: $round,
      server_cores: cores(if $side == "ours" then $dours else $dts end),
      idle_server_cores: cores(if $side == "ours" then $dts else $dours end),
      loadgen_cores: cores($dgen),
      other_cores: cores([$db - $dours - $dts - $dgen, 0] | max)}' >>"$OUT/pair.jsonl"
  sleep 0.5
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# Interleave the servers, alternating which goes first, so that drift (thermal, neighbours)
# hits both sides alike.
# A pair (both servers at one client count) during which other processes used more than
# MAX_OTHER_CORES is run again, up to RETRIES times; the last try is kept (and marked) if none
# was clean. Rejected tries go to rejected.jsonl.
flip=0
for round in $(seq "$ROUNDS"); do
  for clients in $CLIENTS; do
    if ((flip)); then order="ts ours"; else order="ours ts"; fi
    flip=$((1 - flip))
    for try in $(seq 0 "$RETRIES"); do
      : >"$OUT/pair.jsonl"
      for side in $order; do run "$side" "$clients" "$round"; done
      other=$(jq -s 'map(.other_cores) | max' "$OUT/pair.jsonl")
      if awk -v o="$other" -v m="$MAX_OTHER_CORES" 'BEGIN { exit !(o <= m) }'; then
        cat "$OUT/pair.jsonl" >>"$OUT/results.jsonl"
        break
      elif ((try == RETRIES)); then
        log "other processes used $other cores during every try; keeping the last (marked *)"
        jq -c '. + {disturbed: true}' "$OUT/pair.jsonl" >>"$OUT/results.jsonl"
      else
        log "other processes used $other cores (> $MAX_OTHER_CORES): running this pair again"
        cat "$OUT/pair.jsonl" >>"$OUT/rejected.jsonl"
        sleep 2
      fi
    done
  done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
SDK_VERSION=$(node -p "require('$HERE/ts/node_modules/@modelcontextprotocol/sdk/package.json').version")
CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
echo
echo "MCP tools/call over Streamable HTTP, loopback — $(date -u +%Y-%m-%d) — $(nproc) CPU(s) ($CPU), shared by both servers and the generator"
echo "ours: \`${OURS_CMD##*/}\` (rmcp $(grep -A1 '^name = "rmcp"$' "$ROOT/Cargo.lock" | sed -n 's/version = "\(.*\)"/\1/p'))," \
  "TS: @modelcontextprotocol/sdk $SDK_VERSION on Node $(node --version) ($TS_MODE, $([[ $TS_JSON == 1 ]] && echo JSON || echo SSE))," \
  "${DURATION}s measured after ${WARMUP}s warm-up per run, generator threads: $LOADGEN_THREADS," \
  "load average before/after: $LOAD_BEFORE / $LOAD_AFTER"
echo
# One row per round and client count, then (with several rounds) the median of each column.
TABLE='
  def f: if . == null then "–" else tostring end;
  def r2: if . == null then null else (. * 100 | round / 100) end;
  def lat: "\(.p50_ms | f) / \(.mean_ms | f) / \(.p99_ms | f)";
  def row($what; $o; $t):
    "| \($o.clients) | \($what) | \($o.rps) | \($o | lat) | \($t.rps) | \($t | lat) | " +
    "\(if $t.rps > 0 then ($o.rps / $t.rps | r2 | tostring) + "×" else "–" end) | " +
    "\(if $o.p99_ms != null and $t.p99_ms != null and $t.p99_ms > 0 then ($o.p99_ms / $t.p99_ms | r2 | tostring) else "–" end) | " +
    "\($o.server_cores | f) / \($t.server_cores | f) | \($o.loadgen_cores | f) / \($t.loadgen_cores | f) | " +
    "\($o.other_cores | f) / \($t.other_cores | f) | \($o.errors) / \($t.errors) |";
  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def med($runs): $runs | {clients: .[0].clients, rps: (map(.rps) | median),
    p50_ms: (map(.p50_ms) | median), mean_ms: (map(.mean_ms) | median), p99_ms: (map(.p99_ms) | median),
    server_cores: (map(.server_cores) | median), loadgen_cores: (map(.loadgen_cores) | median),
    other_cores: (map(.other_cores) | median), errors: (map(.errors) | add)};
  "| clients | round | ours rps | ours p50 / mean / p99 ms | TS rps | TS p50 / mean / p99 ms | rps ours/TS | p99 ours/TS | server cores ours / TS | generator cores (ours / TS run) | other cores (ours / TS run) | errors |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  (group_by([.round, .clients]) | sort_by(.[0].round, .[0].clients)[] |
    row((.[0].round | tostring) + (if any(.disturbed) then "*" else "" end);
      map(select(.side == "ours"))[0]; map(select(.side == "ts"))[0])),
  (if ([.[].round] | unique | length) > 1 then
    (group_by(.clients)[] | row("median"; med(map(select(.side == "ours"))); med(map(select(.side == "ts")))))
  else empty end)
'
jq -rs "$TABLE" "$OUT/results.jsonl"
REJECTED=$(($(wc -l <"$OUT/rejected.jsonl") / 2))
if ((REJECTED > 0)) || jq -se 'any(.[]; .disturbed == true)' "$OUT/results.jsonl" >/dev/null; then
  echo
  echo "$REJECTED pair(s) of runs were rerun because other processes used more than $MAX_OTHER_CORES cores;" \
    "rows marked * kept a disturbed try."
fi
echo
jq -rs '
  [.[] | select(.clients == 16)] | group_by(.round)[] |
  (map(select(.side == "ours"))[0]) as $o | (map(select(.side == "ts"))[0]) as $t |
  if $o == null or $t == null then empty
  elif $t.rps > 0 and $o.rps >= 3 * $t.rps and $o.p99_ms != null and $t.p99_ms != null and $o.p99_ms < $t.p99_ms
  then "goal (16 clients: ≥3× throughput, lower p99), round \($o.round): met"
  else "goal (16 clients: ≥3× throughput, lower p99), round \($o.round): NOT met" end
' "$OUT/results.jsonl"
log "raw results and logs: $OUT"
exit "$FAILED"

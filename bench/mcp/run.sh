#!/usr/bin/env bash
# MCP tools/call benchmark: Toolsmith's MCP server (bench/mcp/toolsmith, or with OURS=fixture
# the `mcp_fixture` example: rmcp behind Toolsmith's guards and runtime; see lib.sh) against bare rmcp serving the same tool with its own
# #[tool_router] (bench/mcp/rmcp) and the official TypeScript SDK (bench/mcp/ts/server.mjs), the
# same `echo` tool, over Streamable HTTP on loopback, driven by the same closed-loop load
# generator (bench/mcp/loadgen) in one run. Not part of CI. See bench/mcp/README.md.
#
# Environment (all optional):
#   DURATION=5        measured seconds per run
#   WARMUP=1          unmeasured seconds before each run's window
#   CLIENTS="1 16 64" concurrent clients
#   ROUNDS=1          how many times the whole client sweep is repeated
#   MODE=stateful     stateful: sessions, SSE answers (each SDK's default);
#                     stateless: no sessions, JSON bodies (--stateless --json-response)
#   SIDES="ours rmcp ts"  the servers measured
#   TS_MODE, TS_JSON  the TS server's own mode (default: from MODE; see ts/server.mjs)
#   LOADGEN_THREADS   the generator's worker threads (default: the number of CPUs)
#   MAX_OTHER_CORES=0.25  a pair of runs during which other processes used more CPU is rerun
#   RETRIES=3         how many times at most (the last try is kept, marked *, if none was clean)
#   NO_BUILD=1        skip cargo build and npm ci (use what is there)
#   OURS=echo         our side: echo (bench/mcp/toolsmith) or fixture (mcp_fixture), see lib.sh
#   OURS_CMD          the command serving our side instead of either; it must print
#                     "serving MCP on http://ADDR/mcp" on stderr
#   OUT=DIR           where raw JSON results and server logs go (default: a temporary folder)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
CLIENTS=${CLIENTS:-"1 16 64"}
ROUNDS=${ROUNDS:-1}
MODE=${MODE:-stateful}
case $MODE in
  stateful) FLAGS="" ;;
  stateless) FLAGS="--stateless --json-response" ;;
  *) echo "run.sh: MODE must be stateful or stateless, not $MODE" >&2; exit 2 ;;
esac
TS_MODE=${TS_MODE:-$MODE}
TS_JSON=${TS_JSON:-$([[ $MODE == stateless ]] && echo 1 || echo 0)}
SIDES=${SIDES:-"ours rmcp ts"}
LOADGEN_THREADS=${LOADGEN_THREADS:-$(nproc)}
MAX_OTHER_CORES=${MAX_OTHER_CORES:-0.25}
RETRIES=${RETRIES:-3}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$(mktemp -d -t mcp-bench.XXXXXX)}
mkdir -p "$OUT"
# shellcheck source=lib.sh
source "$HERE/lib.sh"
LOADGEN=$HERE/loadgen/target/release/mcp-loadgen
BARE=$HERE/rmcp/target/release/mcp-bare-rmcp

for tool in cargo node npm jq; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 2; }
done

log() { echo "[bench] $*" >&2; }

if [[ "${NO_BUILD:-0}" != 1 ]]; then
  if [[ -z "${OURS_CMD:-}" ]]; then
    log "building our server, OURS=$OURS (release)"
    build_ours
  fi
  log "building the load generator and the bare rmcp server (release)"
  cargo build --release --locked --manifest-path "$HERE/loadgen/Cargo.toml" >&2
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
  log "npm ci (TypeScript SDK server)"
  (cd "$HERE/ts" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
# shellcheck disable=SC2086 # the flags are words
OURS_CMD=${OURS_CMD:-$(ours_cmd $FLAGS)}

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

for side in $SIDES; do
  case $side in
    # shellcheck disable=SC2086
    ours) start ours $OURS_CMD ;;
    # shellcheck disable=SC2086
    rmcp) start rmcp "$BARE" 127.0.0.1:0 $FLAGS ;;
    ts) start ts env PORT=0 MODE="$TS_MODE" JSON="$TS_JSON" node "$HERE/ts/server.mjs" ;;
    *) log "unknown side $side (ours, rmcp, ts)"; exit 2 ;;
  esac
done

# Each run is bounded: warm-up + duration + the generator's 10 s request timeout + slack.
RUN_LIMIT=$(awk -v d="$DURATION" -v w="$WARMUP" 'BEGIN { printf "%d", d + w + 30 }')
FAILED=0
: >"$OUT/results.jsonl"
: >"$OUT/rejected.jsonl"
# CPU accounting, in clock ticks: all CPUs' busy time, a process's own time, and the time of
# this shell's reaped children (the generator runs). What is left of the busy time is other
# processes on the machine, which skew a run (see README.md).
# shellcheck source=cpu.sh
source "$HERE/cpu.sh"
now_ns() { date +%s%N; }

servers_ticks() { local t=0 side pid; for side in $SIDES; do eval "pid=\$PID_$side"; t=$((t + $(proc_ticks "$pid"))); done; echo "$t"; }

run() { # run SIDE CLIENTS ROUND
  local side=$1 clients=$2 round=$3 url pid
  eval "url=\$URL_$side; pid=\$PID_$side"
  kill -0 "$pid" 2>/dev/null || { log "the $side server died:"; cat "$OUT/$side.log" >&2; exit 1; }
  log "$side, $clients client(s), round $round: ${WARMUP}s warm-up + ${DURATION}s"
  local json b0 s0 a0 g0 w0
  b0=$(busy_ticks) s0=$(proc_ticks "$pid") a0=$(servers_ticks) g0=$(child_ticks) w0=$(now_ns)
  if ! json=$(timeout "$RUN_LIMIT" "$LOADGEN" --url "$url" --clients "$clients" --duration "$DURATION" \
    --warmup "$WARMUP" --threads "$LOADGEN_THREADS" 2>>"$OUT/loadgen.log"); then
    FAILED=1
    log "the generator reported errors against $side (see $OUT/loadgen.log)"
    tail -1 "$OUT/loadgen.log" >&2
  fi
  local db ds da dg dw
  db=$(($(busy_ticks) - b0)) ds=$(($(proc_ticks "$pid") - s0)) da=$(($(servers_ticks) - a0))
  dg=$(($(child_ticks) - g0)) dw=$(($(now_ns) - w0))
  [[ -n "$json" ]] || json='{"clients":'"$clients"',"requests":0,"rps":0,"p50_ms":null,"p99_ms":null,"errors":-1}'
  # Cores used over the run (warm-up included): the server under test, the generator, the
  # idle servers (should be ~0) and everything else on the machine.
  echo "$json" | jq -c --arg side "$side" --argjson round "$round" --argjson hz "$HZ" --argjson wall_ns "$dw" \
    --argjson db "$db" --argjson ds "$ds" --argjson da "$da" --argjson dgen "$dg" '
    def cores($t): ($t / $hz) / ($wall_ns / 1e9) * 100 | round / 100;
    . + {side: $side, round: $round,
      server_cores: cores($ds),
      idle_server_cores: cores($da - $ds),
      loadgen_cores: cores($dgen),
      other_cores: cores([$db - $da - $dgen, 0] | max)}' >>"$OUT/set.jsonl"
  sleep 0.5
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# Interleave the servers, rotating which goes first, so that drift (thermal, neighbours) hits
# every side alike.
# A set (every server at one client count) during which other processes used more than
# MAX_OTHER_CORES is run again, up to RETRIES times; the last try is kept (and marked) if none
# was clean. Rejected tries go to rejected.jsonl.
read -r -a order <<<"$SIDES"
for round in $(seq "$ROUNDS"); do
  for clients in $CLIENTS; do
    for try in $(seq 0 "$RETRIES"); do
      : >"$OUT/set.jsonl"
      for side in "${order[@]}"; do run "$side" "$clients" "$round"; done
      other=$(jq -s 'map(.other_cores) | max' "$OUT/set.jsonl")
      if awk -v o="$other" -v m="$MAX_OTHER_CORES" 'BEGIN { exit !(o <= m) }'; then
        cat "$OUT/set.jsonl" >>"$OUT/results.jsonl"
        break
      elif ((try == RETRIES)); then
        log "other processes used $other cores during every try; keeping the last (marked *)"
        jq -c '. + {disturbed: true}' "$OUT/set.jsonl" >>"$OUT/results.jsonl"
      else
        log "other processes used $other cores (> $MAX_OTHER_CORES): running this set again"
        cat "$OUT/set.jsonl" >>"$OUT/rejected.jsonl"
        sleep 2
      fi
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
SDK_VERSION=$(node -p "require('$HERE/ts/node_modules/@modelcontextprotocol/sdk/package.json').version" 2>/dev/null || echo "?")
CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
RMCP_VERSION=$(grep -A1 '^name = "rmcp"$' "$ROOT/Cargo.lock" | sed -n 's/version = "\(.*\)"/\1/p')
echo
echo "MCP tools/call over Streamable HTTP, loopback — $(date -u +%Y-%m-%d) — $(nproc) CPU(s) ($CPU), shared by the servers and the generator"
echo "mode: $MODE; ours: \`${OURS_CMD##*/}\` (rmcp $RMCP_VERSION), rmcp: bare rmcp $RMCP_VERSION \`#[tool_router]\`," \
  "TS: @modelcontextprotocol/sdk $SDK_VERSION on Node $(node --version) ($TS_MODE, $([[ $TS_JSON == 1 ]] && echo JSON || echo SSE))," \
  "${DURATION}s measured after ${WARMUP}s warm-up per run, generator threads: $LOADGEN_THREADS," \
  "load average before/after: $LOAD_BEFORE / $LOAD_AFTER"
echo
# One row per round and client count, then (with several rounds) the median of each column.
# Latencies are p50 / p99 in ms; ratios are ours against bare rmcp and against TS.
TABLE='
  def f: if . == null then "–" else tostring end;
  def r2: if . == null then null else (. * 100 | round / 100) end;
  def ratio($a; $b): if $a == null or $b == null or $b == 0 then "–" else ($a / $b | r2 | tostring) + "×" end;
  def cell($s): if $s == null then "– | –" else "\($s.rps) | \($s.p50_ms | f) / \($s.p99_ms | f)" end;
  def row($what; $o; $r; $t):
    "| \(($o // $r // $t).clients) | \($what) | \(cell($o)) | \(cell($r)) | \(cell($t)) | " +
    "\(ratio($o.rps; $r.rps)) | \(ratio($o.p99_ms; $r.p99_ms)) | \(ratio($o.rps; $t.rps)) | " +
    "\($o.server_cores | f) / \($r.server_cores | f) / \($t.server_cores | f) | " +
    "\([$o.other_cores, $r.other_cores, $t.other_cores] | map(select(. != null)) | max | f) | " +
    "\($o.errors | f) / \($r.errors | f) / \($t.errors | f) |";
  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def med($runs): if ($runs | length) == 0 then null else $runs | {clients: .[0].clients, rps: (map(.rps) | median),
    p50_ms: (map(.p50_ms) | median), p99_ms: (map(.p99_ms) | median),
    server_cores: (map(.server_cores) | median), other_cores: (map(.other_cores) | median),
    errors: (map(.errors) | add)} end;
  def side($s): map(select(.side == $s))[0];
  "| clients | round | ours rps | ours p50 / p99 ms | rmcp rps | rmcp p50 / p99 ms | TS rps | TS p50 / p99 ms | rps ours/rmcp | p99 ours/rmcp | rps ours/TS | server cores ours / rmcp / TS | other cores (max) | errors ours / rmcp / TS |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  (group_by([.round, .clients]) | sort_by(.[0].round, .[0].clients)[] |
    row((.[0].round | tostring) + (if any(.disturbed) then "*" else "" end); side("ours"); side("rmcp"); side("ts"))),
  (if ([.[].round] | unique | length) > 1 then
    (group_by(.clients)[] | row("median"; med(map(select(.side == "ours"))); med(map(select(.side == "rmcp"))); med(map(select(.side == "ts")))))
  else empty end)
'
jq -rs "$TABLE" "$OUT/results.jsonl"
SETS=$(wc -w <<<"$SIDES")
REJECTED=$(($(wc -l <"$OUT/rejected.jsonl") / SETS))
if ((REJECTED > 0)) || jq -se 'any(.[]; .disturbed == true)' "$OUT/results.jsonl" >/dev/null; then
  echo
  echo "$REJECTED set(s) of runs were rerun because other processes used more than $MAX_OTHER_CORES cores;" \
    "rows marked * kept a disturbed try."
fi
echo
# The performance issue's goals at 16 clients, per round and on the medians: at least 0.9× bare
# rmcp's throughput, at most 1.2× its p99, at least 5× the TypeScript SDK's throughput.
jq -rs '
  def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
  def judge($what; $o; $r; $t):
    if $o == null then empty else
    [ (if $r == null then "vs rmcp: not measured"
       elif $o.rps >= 0.9 * $r.rps and $o.p99_ms != null and $r.p99_ms != null and $o.p99_ms <= 1.2 * $r.p99_ms
       then "vs rmcp (≥0.9× rps, ≤1.2× p99): met" else "vs rmcp (≥0.9× rps, ≤1.2× p99): NOT met" end),
      (if $t == null then "vs TS: not measured"
       elif $t.rps > 0 and $o.rps >= 5 * $t.rps then "vs TS (≥5× rps): met" else "vs TS (≥5× rps): NOT met" end) ]
    | "16 clients, \($what): " + join("; ") end;
  [.[] | select(.clients == 16)] as $runs |
  ($runs | group_by(.round)[] | judge("round \(.[0].round)"; map(select(.side == "ours"))[0];
      map(select(.side == "rmcp"))[0]; map(select(.side == "ts"))[0])),
  (if ([$runs[].round] | unique | length) > 1 then
    judge("median"; ($runs | map(select(.side == "ours")) | {rps: (map(.rps) | median), p99_ms: (map(.p99_ms) | median)});
      ($runs | map(select(.side == "rmcp")) | if length == 0 then null else {rps: (map(.rps) | median), p99_ms: (map(.p99_ms) | median)} end);
      ($runs | map(select(.side == "ts")) | if length == 0 then null else {rps: (map(.rps) | median)} end))
  else empty end)
' "$OUT/results.jsonl"
log "raw results and logs: $OUT"
exit "$FAILED"

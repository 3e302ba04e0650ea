#!/usr/bin/env bash
# Stateless tools/call throughput of Toolsmith's MCP server with 1 and with 3 instances on one
# PostgreSQL store (the `mcp_fixture` example's `echo` tool, `--store postgres://…
# --stateless --json-response`), driven by the same load generator as run.sh; client n talks to
# instance n % count, as a round-robin load balancer would. Not part of CI. See README.md.
#
# The cores are accounted per run from /proc: the instances, PostgreSQL's processes, the
# generator and everything else. On a machine with few cores the instances share them, so the
# ratio 3:1 is bounded by the cores, not by the store: read it with the core columns.
#
# Environment (all optional):
#   TOOLSMITH_TEST_POSTGRES  the database (default postgres://postgres@127.0.0.1:5432/test);
#                            the runs use a schema of their own, dropped at the end
#   CLIENTS=16  DURATION=5  WARMUP=1  ROUNDS=1  INSTANCES="1 3"  NO_BUILD=1  OUT=DIR
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DB=${TOOLSMITH_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}
CLIENTS=${CLIENTS:-16}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
ROUNDS=${ROUNDS:-1}
INSTANCES=${INSTANCES:-"1 3"}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$(mktemp -d -t mcp-instances.XXXXXX)}
LOADGEN=$HERE/loadgen/target/release/mcp-loadgen
FIXTURE=$TARGET_DIR/release/mcp_fixture
SCHEMA=ts_bench_instances_$$
mkdir -p "$OUT"
log() { echo "[instances] $*" >&2; }

for tool in cargo jq psql; do
  command -v "$tool" >/dev/null || { echo "instances.sh: $tool is required" >&2; exit 2; }
done
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  log "building mcp_fixture and the load generator (release)"
  (cd "$ROOT" && cargo build --release -p examples --bin mcp_fixture) >&2
  cargo build --release --locked --manifest-path "$HERE/loadgen/Cargo.toml" >&2
fi

sep='?'; [[ $DB == *\?* ]] && sep='&'
STORE="${DB}${sep}options=-c%20search_path%3D${SCHEMA}"
# The integrity key every instance on one store shares.
export TOOLSMITH_STORE_KEY=${TOOLSMITH_STORE_KEY:-bench-instances-key-0123456789abcdef}
PIDS=()
stop_all() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_all
  psql "$DB" -qc "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start N: N instances on the store; sets URLS (comma-separated).
start() {
  URLS=""
  local i url pid
  for i in $(seq "$1"); do
    "$FIXTURE" --store "$STORE" --http 127.0.0.1:0 --stateless --json-response 2>"$OUT/instance-$1-$i.log" >/dev/null &
    pid=$!
    PIDS+=("$pid")
    url=""
    for _ in $(seq 300); do
      url=$(grep -o 'serving MCP on http://[^ ]*/mcp' "$OUT/instance-$1-$i.log" | head -1 | sed 's/^serving MCP on //') || true
      [[ -n "$url" ]] && break
      kill -0 "$pid" 2>/dev/null || { log "instance $i exited:"; cat "$OUT/instance-$1-$i.log" >&2; exit 1; }
      sleep 0.1
    done
    [[ -n "$url" ]] || { log "instance $i did not print its address in 30 s"; exit 1; }
    URLS+="${URLS:+,}$url"
  done
}

# shellcheck source=cpu.sh
source "$HERE/cpu.sh"
sum_ticks() { local t=0 pid; for pid in "$@"; do t=$((t + $(proc_ticks "$pid"))); done; echo "$t"; }
postgres_pids() { pgrep -x postgres || pgrep -f '^postgres' || true; }

: >"$OUT/results.jsonl"
RUN_LIMIT=$(awk -v d="$DURATION" -v w="$WARMUP" 'BEGIN { printf "%d", d + w + 30 }')
for round in $(seq "$ROUNDS"); do
  for n in $INSTANCES; do
    start "$n"
    log "$n instance(s), $CLIENTS clients, round $round: ${WARMUP}s warm-up + ${DURATION}s"
    # shellcheck disable=SC2207
    pg=($(postgres_pids))
    b0=$(busy_ticks) s0=$(sum_ticks "${PIDS[@]}") p0=$(sum_ticks "${pg[@]}") g0=$(child_ticks) w0=$(date +%s%N)
    json=$(timeout "$RUN_LIMIT" "$LOADGEN" --url "$URLS" --clients "$CLIENTS" --duration "$DURATION" --warmup "$WARMUP" \
      2>>"$OUT/loadgen.log") || log "the generator reported errors (see $OUT/loadgen.log)"
    db=$(($(busy_ticks) - b0)) ds=$(($(sum_ticks "${PIDS[@]}") - s0)) dp=$(($(sum_ticks "${pg[@]}") - p0))
    dg=$(($(child_ticks) - g0)) dw=$(($(date +%s%N) - w0))
    [[ -n "$json" ]] || json='{"requests":0,"rps":0,"p50_ms":null,"p99_ms":null,"errors":-1}'
    echo "$json" | jq -c --argjson n "$n" --argjson round "$round" --argjson hz "$HZ" --argjson w "$dw" \
      --argjson db "$db" --argjson ds "$ds" --argjson dp "$dp" --argjson dg "$dg" '
      def cores($t): ($t / $hz) / ($w / 1e9) * 100 | round / 100;
      del(.url) + {instances: $n, round: $round, server_cores: cores($ds), postgres_cores: cores($dp),
        loadgen_cores: cores($dg), other_cores: cores([$db - $ds - $dp - $dg, 0] | max)}' >>"$OUT/results.jsonl"
    stop_all
    sleep 1
  done
done

echo
echo "stateless tools/call (echo), $CLIENTS clients, one PostgreSQL store — $(date -u +%Y-%m-%d) — $(nproc) CPU(s)," \
  "${DURATION}s measured after ${WARMUP}s warm-up, $ROUNDS round(s)"
echo
echo "| instances | rps (median) | p50 ms | p99 ms | errors | instances' cores | PostgreSQL cores | generator cores | other cores |"
echo "|---|---|---|---|---|---|---|---|---|"
jq -rs 'group_by(.instances)[] | sort_by(.rps) as $r | $r[($r | length) / 2 | floor] as $m
  | "| \($m.instances) | \($m.rps) | \($m.p50_ms) | \($m.p99_ms) | \(map(.errors) | add) | \($m.server_cores) | \($m.postgres_cores) | \($m.loadgen_cores) | \($m.other_cores) |"' \
  "$OUT/results.jsonl"
jq -rs 'group_by(.instances) | map(sort_by(.rps) | .[(length / 2) | floor]) | if length == 2 then
  "\nthroughput 3:1 = \((.[1].rps / .[0].rps * 100 | round) / 100)×; p99 3:1 = \((.[1].p99_ms / .[0].p99_ms * 100 | round) / 100)×" else empty end' \
  "$OUT/results.jsonl"
echo
echo "raw results and logs: $OUT"

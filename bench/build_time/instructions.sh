#!/usr/bin/env bash
# Instructions rustc executes for the incremental rebuild of a crate of N `#[tool]` fns (default
# 50) after an edit of tool 1's body, ours (`lean`: tool-core without default features) and the
# same tools with rmcp's `#[tool]` (the crates of bench/build_time/run.sh). Deterministic where
# the wall clock of run.sh is not, so an A/B holds on a shared machine (performance issue,
# goal 4: incremental at most 1.2x rmcp's).
#
# Each crate is generated and built once with incremental compilation on, then run.sh's edits
# are replayed from saved states: tool 1's `saturating_mul(1)` becomes `saturating_mul(101)`
# (the first edit after a full build, which shifts everything after it), and from the state
# that edit left, `saturating_mul(102)` (an edit of the same length: run.sh's "incremental"
# median). Each measurement restores the saved target directory (incremental directory and
# outputs), writes the edited source and runs the exact rustc command cargo ran for the crate
# (its environment included, taken from `cargo build -vv`): under valgrind's cachegrind without
# cache simulation for the instruction count (proc-macro expansion, which runs inside rustc,
# included; all of rustc's threads counted), and under /usr/bin/time for the CPU time of the
# same-length edit, REPS (default 5) alternating repetitions per side, medians.
# Nothing is added to the command: what a developer's `cargo build` runs after the edit.
#
#   bash bench/build_time/instructions.sh [N]     # KEEP=/tmp/dir keeps the crates and builds
#   KINDS="lean rmcp" REPS=5 bash bench/build_time/instructions.sh 50
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-50}
reps=${REPS:-5}
kinds=${KINDS:-lean rmcp}
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
if [ -n "${KEEP:-}" ]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# Generate the crates (with the workspace's Cargo.lock), then prime each: one incremental build,
# its rustc command kept and its target directory saved.
GENERATE_ONLY=$work bash "$root/bench/build_time/run.sh" "$n"
for kind in $kinds; do
  dir=$work/$kind
  crate=tools_$kind
  (cd "$dir" && cargo fetch -q &&
    CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=1 cargo build -vv >"$dir/build.log" 2>&1) ||
    { cat "$dir/build.log" >&2; exit 1; }
  # The `Running `...`` line of the crate itself, without its backquotes.
  grep "Running \`.*--crate-name $crate " "$dir/build.log" | sed 's/^ *Running `//; s/`$//' >"$dir/rustc.sh"
  [ -s "$dir/rustc.sh" ] || { echo "no rustc command for $crate" >&2; exit 1; }
  cp "$dir/src/lib.rs" "$dir/lib.rs.1"
  sed '0,/saturating_mul(1)/s//saturating_mul(101)/' "$dir/lib.rs.1" >"$dir/lib.rs.101"
  sed '0,/saturating_mul(1)/s//saturating_mul(102)/' "$dir/lib.rs.1" >"$dir/lib.rs.102"
  rm -rf "$dir/primed.1" "$dir/primed.101"
  cp -a "$dir/target" "$dir/primed.1"
  # The state after the first edit, for the edits of the same length that follow it.
  cp "$dir/lib.rs.101" "$dir/src/lib.rs"
  (cd "$dir" && bash -c "exec env $(cat "$dir/rustc.sh")" >/dev/null 2>&1)
  cp -a "$dir/target" "$dir/primed.101"
done

# Restore a primed state and write the edited source: `first` is the first edit after a full
# build (1 -> 101, shifting what follows by two bytes), `next` an edit of the same length after
# it (101 -> 102), what run.sh's "incremental" median times.
prepare() { # dir first|next
  local dir=$1
  rm -rf "$dir/target"
  if [ "$2" = first ]; then
    cp -a "$dir/primed.1" "$dir/target"
    cp "$dir/lib.rs.101" "$dir/src/lib.rs"
  else
    cp -a "$dir/primed.101" "$dir/target"
    cp "$dir/lib.rs.102" "$dir/src/lib.rs"
  fi
}

declare -A instr cpu wall
for edit in first next; do
  for kind in $kinds; do
    dir=$work/$kind
    prepare "$dir" $edit
    (cd "$dir" && valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      --trace-children=yes bash -c "exec env $(cat "$dir/rustc.sh")" >/dev/null 2>"$dir/valgrind.log") ||
      { tail -20 "$dir/valgrind.log" >&2; exit 1; }
    # One count per process valgrind followed (bash and env exec into rustc: rustc's).
    instr[$kind.$edit]=$(grep -o 'I *refs: *[0-9,]*' "$dir/valgrind.log" | tr -d ', ' | cut -d: -f2 |
      awk '{ s += $1 } END { print s }')
  done
done
# CPU time: alternating sides, REPS edits each.
for r in $(seq 1 "$reps"); do
  for kind in $kinds; do
    dir=$work/$kind
    prepare "$dir" next
    t=$( (cd "$dir" && /usr/bin/time -f "%e %U %S" bash -c "exec env $(cat "$dir/rustc.sh")" >/dev/null 2>"$dir/time.log"; tail -1 "$dir/time.log"))
    wall[$kind]+="$(echo "$t" | awk '{print $1}') "
    cpu[$kind]+="$(echo "$t" | awk '{printf "%.2f", $2 + $3}') "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf '%-6s %16s %16s %8s %8s   %s\n' crate "instr. first" "instr. next" "cpu s" "wall s" "cpu s per next edit"
for kind in $kinds; do
  printf '%-6s %16d %16d %8s %8s   %s\n' "$kind" "${instr[$kind.first]}" "${instr[$kind.next]}" \
    "$(echo "${cpu[$kind]}" | median)" "$(echo "${wall[$kind]}" | median)" "${cpu[$kind]}"
done
if [ -n "${instr[lean.next]:-}" ] && [ -n "${instr[rmcp.next]:-}" ]; then
  awk -v lf="${instr[lean.first]}" -v rf="${instr[rmcp.first]}" -v l="${instr[lean.next]}" -v r="${instr[rmcp.next]}" \
    -v cl="$(echo "${cpu[lean]}" | median)" -v cr="$(echo "${cpu[rmcp]}" | median)" \
    'BEGIN { printf "lean/rmcp: instructions %.3fx first edit, %.3fx next edits; cpu time %.2fx\n", lf / rf, l / r, cl / cr }'
fi

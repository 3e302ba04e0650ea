# CPU accounting from /proc, in clock ticks, for the bench scripts (sourced by run.sh and
# instances.sh): all CPUs' busy time, a process's own time, and the time of the sourcing
# shell's reaped children (the generator runs).
# shellcheck shell=bash
HZ=$(getconf CLK_TCK)
busy_ticks() { local _c u n s i w irq sirq st _r; read -r _c u n s i w irq sirq st _r </proc/stat; echo $((u + n + s + irq + sirq + st)); }
proc_ticks() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }; s=${s##*) }; set -- $s; echo $((${12} + ${13})); }
child_ticks() { local s; s=$(cat "/proc/$$/stat"); s=${s##*) }; set -- $s; echo $((${14} + ${15})); }

# Sourced by bench/instructions.sh and bench/guard.sh: per_call BIN MODE FEW MANY prints the
# instructions per call of `BIN MODE N` (the call_loop example), counted by valgrind's cachegrind
# without cache simulation for FEW and MANY calls, the difference divided by MANY - FEW (start-up
# and registry building cancel out). Prints nothing when valgrind gives no count.
per_call() {
  local bin=$1 mode=$2 few=$3 many=$4 a b
  refs() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" "$mode" "$1" 2>&1 |
      awk '/I *refs/ { gsub(",", "", $NF); print $NF }'
  }
  a=$(refs "$few")
  b=$(refs "$many")
  [ -n "$a" ] && [ -n "$b" ] && echo $(( (b - a) / (many - few) ))
}

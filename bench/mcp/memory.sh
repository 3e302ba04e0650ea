#!/usr/bin/env bash
# Resident memory of the MCP servers of bench/mcp (performance issue, goal 5): Toolsmith's
# (stateful; OURS=echo or fixture, see lib.sh) and bare rmcp's (bench/mcp/rmcp), idle after start and with
# SESSIONS (default 1000) open sessions, in one run, with the ratio. RSS is VmRSS from
# /proc/PID/status, read after a short settle. Not part of CI.
#
#   bench/mcp/memory.sh            # NO_BUILD=1 to use what is built; SESSIONS=500 for fewer
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SESSIONS=${SESSIONS:-1000}
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=$(mktemp -d -t mcp-memory.XXXXXX)
source "$HERE/lib.sh"
if [[ "${NO_BUILD:-0}" != 1 ]]; then
  build_ours
  cargo build --release --locked --manifest-path "$HERE/rmcp/Cargo.toml" >&2
fi
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# How many of a binary's pages an idle process holds depends on how the file entered the page
# cache (a binary just linked or copied sits in larger folios than one read back from disk), so
# each binary is dropped from the cache before it starts: both sides then fault their pages in
# the same way, whatever happened to the files before (EVICT=0 to keep the cache as it is).
evict() {
  [[ "${EVICT:-1}" == 1 ]] || return 0
  python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

measure() { # measure NAME COMMAND...: prints "NAME IDLE_KIB SESSIONS_KIB"
  local name=$1
  shift
  evict "$1"
  "$@" 2>"$OUT/$name.log" >/dev/null &
  local pid=$! url
  PIDS+=("$pid")
  url=$(wait_url "$OUT/$name.log") || exit 1
  sleep 1
  local idle opened full
  idle=$(rss_kib "$pid")
  opened=$(python3 "$HERE/sessions.py" "$url" "$SESSIONS")
  [[ $opened == "$SESSIONS" ]] || { echo "$name: opened $opened of $SESSIONS sessions" >&2; exit 1; }
  sleep 1
  full=$(rss_kib "$pid")
  kill "$pid"
  echo "$name $idle $full"
}

# shellcheck disable=SC2046 # ours_cmd prints the command's words
ours=$(measure ours $(ours_cmd))
bare=$(measure rmcp "$HERE/rmcp/target/release/mcp-bare-rmcp" 127.0.0.1:0)
read -r _ oi of <<<"$ours"
read -r _ ri rf <<<"$bare"
echo "ours: OURS=$OURS (${OURS_BIN##*/})"
echo "| server | RSS idle | RSS with $SESSIONS sessions | per session |"
echo "|---|---:|---:|---:|"
for row in "ours $oi $of" "rmcp $ri $rf"; do
  read -r n i f <<<"$row"
  awk -v n="$n" -v i="$i" -v f="$f" -v s="$SESSIONS" 'BEGIN { printf "| %s | %.1f MiB | %.1f MiB | %.1f KiB |\n", n, i/1024, f/1024, (f-i)/s }'
done
awk -v oi="$oi" -v of="$of" -v ri="$ri" -v rf="$rf" 'BEGIN {
  printf "ours/rmcp: idle %.2f×, with sessions %.2f× (goal ≤ 1.2×)\n", oi/ri, of/rf }'

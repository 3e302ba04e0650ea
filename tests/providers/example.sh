#!/usr/bin/env bash
# Runs one of the seed's provider snippets as a program (examples/src/bin/PROGRAM.rs) against
# the fake that tests/providers/run.sh serves (FAKE_URL, FAKE_KEY), and compares its output
# with tests/providers/expected/PROGRAM.txt (the output the guide's providers chapter shows).
#
#   FAKE_URL=… FAKE_KEY=… bash tests/providers/example.sh PROGRAM PROVIDER
#
# The program is TOOLSMITH_BIN_DIR's (run.sh sets it), else built here (tests/bins.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh
program=$1 provider=$2
bin_dir=$(bins_dir "$program")
upper=$(tr '[:lower:]' '[:upper:]' <<<"$provider")
out=$(env "${upper}_API_KEY=$FAKE_KEY" "$bin_dir/$program" --base-url "$FAKE_URL" 2>&1)
diff -u "tests/providers/expected/$program.txt" - <<<"$out"

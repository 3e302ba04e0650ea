#!/usr/bin/env bash
# Runs one of the seed's provider snippets as a program (examples/src/bin/PROGRAM.rs) against
# the fake that tests/providers/run.sh serves (FAKE_URL, FAKE_KEY), and compares its output
# with tests/providers/expected/PROGRAM.txt (the output the README shows).
#
#   FAKE_URL=… FAKE_KEY=… bash tests/providers/example.sh PROGRAM PROVIDER
set -euo pipefail
cd "$(dirname "$0")/../.."
program=$1 provider=$2
upper=$(tr '[:lower:]' '[:upper:]' <<<"$provider")
out=$(env "${upper}_API_KEY=$FAKE_KEY" "target/debug/$program" --base-url "$FAKE_URL" 2>&1)
diff -u "tests/providers/expected/$program.txt" - <<<"$out"

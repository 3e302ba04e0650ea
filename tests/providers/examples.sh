#!/usr/bin/env bash
# The seed's provider snippets as runnable programs (examples/src/bin/{composio_usage,
# composio_connections,arcade_usage}.rs), each run against a fresh local fake of its API
# (`serve_fake`, tool-providers' example) with the key in the environment and --base-url, its
# output compared with tests/providers/expected/<program>.txt (the output the README shows).
# Exits non-zero on any difference.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q -p tool-providers --example serve_fake
cargo build -q -p examples --bin composio_usage --bin composio_connections --bin arcade_usage
key() { sed -n 's/^const KEY: &str = "\([^"]*\)";$/\1/p' "tool-providers/tests/$1.rs"; }
status=0
run() { # PROGRAM PROVIDER
  local program=$1 provider=$2 dir server upper
  dir=$(mktemp -d)
  target/debug/examples/serve_fake "$provider" --key "$(key "$provider")" --url-file "$dir/url" --secs 120 >"$dir/log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do [ -s "$dir/url" ] && break; sleep 0.1; done
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$provider")
  if env "${upper}_API_KEY=$(key "$provider")" "target/debug/$program" --base-url "$(cat "$dir/url")" >"$dir/out" 2>&1 &&
    diff -u "tests/providers/expected/$program.txt" "$dir/out"; then
    echo "example $program: ok"
  else
    echo "example $program: FAILED" >&2
    cat "$dir/out" >&2
    status=1
  fi
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$dir"
}
run composio_usage composio
run composio_connections composio
run arcade_usage arcade
exit $status

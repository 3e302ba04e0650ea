# Shared by run.sh, memory.sh and instructions.sh (sourced, not run): which binary serves our
# side, and waiting for a server to listen.
#
#   OURS=echo     (default) bench/mcp/toolsmith: the `echo` tool alone, tool-core with its `mcp`
#                 feature alone, as a user serving one tool builds it
#   OURS=fixture  examples/src/bin/mcp_fixture.rs: the conformance fixture (22 tools, prompts and
#                 resources) with every feature the `toolsmith` CLI links (stores, OAuth, TLS,
#                 OpenTelemetry)
# Both serve the same `echo` tool through the same server, guards and runtime. Needs ROOT and
# TARGET_DIR set.

OURS=${OURS:-echo}
case $OURS in
  echo) OURS_PACKAGE=(-p mcp-toolsmith-echo) OURS_BIN=$TARGET_DIR/release/mcp-toolsmith-echo OURS_HTTP=() ;;
  fixture) OURS_PACKAGE=(-p examples --bin mcp_fixture) OURS_BIN=$TARGET_DIR/release/mcp_fixture OURS_HTTP=(--http) ;;
  *) echo "OURS must be echo or fixture, not $OURS" >&2; exit 2 ;;
esac

# Builds our side (release).
build_ours() {
  (cd "$ROOT" && cargo build --release "${OURS_PACKAGE[@]}") >&2
}

# The command serving our side on a free loopback port, with the given flags
# (`--stateless --json-response`), as words on one line.
ours_cmd() {
  echo "$OURS_BIN ${OURS_HTTP[*]} 127.0.0.1:0 $*"
}

# wait_url LOG: prints the URL a server wrote to LOG ("serving MCP on http://ADDR/mcp") once it
# is there (at most 60 s); fails, printing the log, if it never is.
wait_url() {
  local log=$1 url=""
  for _ in $(seq 600); do
    url=$(grep -o 'serving MCP on http://[^ ]*/mcp' "$log" | head -1 | sed 's/^serving MCP on //') || true
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    sleep 0.1
  done
  echo "the server did not start:" >&2
  cat "$log" >&2
  return 1
}

#!/usr/bin/env bash
# The MCP client the conformance suite tests, as the suite runs it:
#
#   conformance client --command "bash tests/conformance/client.sh" --scenario NAME
#   conformance client --command "bash tests/conformance/client.sh" --requirements 2026-07-28
#
# (`conformance` is the suite run.sh installs: node .../@modelcontextprotocol/conformance/dist/index.js.)
# Not yet a CI stage: the client passes tools_call, initialize, sse-retry, the SEP-2243 header
# scenarios and json-schema-ref-no-deref, and no `auth/*` scenario (no OAuth client yet).
#
# The suite starts the scenario's server, appends its URL to the command and sets
# MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT). This drives the real `toolsmith`
# binary, nothing written for the test: it imports the server with `--import-mcp`, lists its
# tools, and calls each one with one input generated from the tool's own schema (`toolsmith
# check --cases 1 --include-side-effects`), which is what an agent importing a server does.
# `toolsmith` is TOOLSMITH_BIN, else TOOLSMITH_BIN_DIR's, else target/debug's (built by the
# caller: tests/bins.sh). Exits with `toolsmith`'s status.
set -uo pipefail
url=${!#}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TOOLSMITH_BIN:-${TOOLSMITH_BIN_DIR:-$here/target/debug}/toolsmith}
name=conformance
listed=$("$bin" --import-mcp "$name=$url" list --json) || exit
# The imported tools only (`NAME_<tool>`), not the binary's own.
mapfile -t ids < <(sed -n "s/^ *\"id\": \"\(${name}_[^\"]*\)\",\{0,1\}\$/\1/p" <<<"$listed")
echo "client.sh: imported ${#ids[@]} tool(s) from $url: ${ids[*]}" >&2
[ ${#ids[@]} -eq 0 ] && exit 0
"$bin" --import-mcp "$name=$url" check --cases 1 --include-side-effects --timeout 20 "${ids[@]}"

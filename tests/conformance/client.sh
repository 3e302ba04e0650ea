#!/usr/bin/env bash
# The MCP client the conformance suite tests, as the suite runs it:
#
#   conformance client --command "bash tests/conformance/client.sh" --scenario NAME
#   conformance client --command "bash tests/conformance/client.sh" --requirements 2026-07-28
#
# (`conformance` is the suite run.sh installs: node .../@modelcontextprotocol/conformance/dist/index.js.)
# run.sh runs the client scenarios through it (CI stage `conformance`).
#
# The suite starts the scenario's server, appends its URL to the command and sets
# MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT). This drives the real `toolsmith`
# binary, nothing written for the test: it imports the server with `--import-mcp`, lists its
# tools, and calls each one with one input generated from the tool's own schema (`toolsmith
# check --cases 1 --include-side-effects`), which is what an agent importing a server does.
# `toolsmith` is TOOLSMITH_BIN, else TOOLSMITH_BIN_DIR's, else target/debug's (built by the
# caller: tests/bins.sh). Exits with `toolsmith`'s status.
#
# For `json-schema-2020-12-preservation`, the focal tool's schema as imported (`toolsmith schema`)
# is then passed to the scenario's echo tool (`toolsmith call`), as the scenario asks.
#
# A call refused for want of a scope (step-up) names the `mcp login … --scope …` to run: the
# script runs it, as the user would, and checks again. An import refused naming `mcp login`
# (the server now names another authorization server) is logged in again the same way.
#
# An `auth/*` scenario's server wants OAuth: the script first logs in as a user would, with
# `toolsmith mcp login` into a store of its own, and `--follow-authorization-url` in place of
# the person at the browser (the suite's authorization server approves without one). The
# client the scenario's context names (MCP_CONFORMANCE_CONTEXT's `client_id`, `client_secret`)
# is used as a pre-registered one, or with the client-credentials grant for the
# `client-credentials-*` scenarios; the secret goes through a variable, as a user would pass it.
# `auth/wif-jwt-bearer` logs in with the workload JWT the context gives (`--jwt-bearer-assertion-file`),
# `auth/enterprise-managed-authorization` with the context's ID token and identity provider
# (`--enterprise-id-token-file`, `--idp-issuer`, `--idp-client-id`).
set -uo pipefail
url=${!#}
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${TOOLSMITH_BIN:-${TOOLSMITH_BIN_DIR:-$here/target/debug}/toolsmith}
name=conformance
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
store=(--store "$dir/store.sqlite3")
scenario=${MCP_CONFORMANCE_SCENARIO:-}
context() {
    python3 -c 'import json, os, sys; print(json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}").get(sys.argv[1], ""))' "$1"
}
if [[ $scenario == auth/* ]]; then
    login=("$bin" "${store[@]}" mcp login "$name" "$url" --timeout 20)
    client_id=$(context client_id)
    CONFORMANCE_CLIENT_SECRET=$(context client_secret)
    export CONFORMANCE_CLIENT_SECRET
    if [[ $scenario == auth/client-credentials-jwt ]]; then
        # private_key_jwt: the key the scenario gives, in a file as a user would keep it.
        context private_key_pem >"$dir/client-key.pem"
        login+=(--client-credentials --client-id "$client_id" --client-key-file "$dir/client-key.pem")
    elif [[ $scenario == auth/wif-jwt-bearer ]]; then
        # Workload identity: the workload's JWT (the context's valid one), in a file as a
        # platform would keep it.
        context valid_jwt >"$dir/workload.jwt"
        login+=(--client-id "$client_id" --jwt-bearer-assertion-file "$dir/workload.jwt")
    elif [[ $scenario == auth/enterprise-managed-authorization ]]; then
        # Enterprise-managed: the user's ID token from the enterprise identity provider, in a
        # file; exchanged there as its client, then presented as the MCP server's client.
        context idp_id_token >"$dir/id-token.jwt"
        login+=(--client-id "$client_id" --client-secret-env CONFORMANCE_CLIENT_SECRET
            --enterprise-id-token-file "$dir/id-token.jwt" --idp-issuer "$(context idp_issuer)"
            --idp-client-id "$(context idp_client_id)")
    elif [[ $scenario == auth/client-credentials-* ]]; then
        login+=(--client-credentials --client-id "$client_id" --client-secret-env CONFORMANCE_CLIENT_SECRET)
    else
        login+=(--follow-authorization-url)
        [ -n "$client_id" ] && login+=(--client-id "$client_id")
        [ -n "$CONFORMANCE_CLIENT_SECRET" ] && login+=(--client-secret-env CONFORMANCE_CLIENT_SECRET)
    fi
    "${login[@]}" >&2 || exit
fi
list() { "$bin" "${store[@]}" --import-mcp "$name=$url" list --json 2>"$dir/list-err"; }
listed=$(list)
status=$?
cat "$dir/list-err" >&2
if [[ $status -ne 0 && $scenario == auth/* ]] && grep -q -- "mcp login $name " "$dir/list-err"; then
    # The import was refused naming the login to run (e.g. the server now names another
    # authorization server, SEP-2352): as a user would, log in again and list once more.
    "${login[@]}" >&2 || exit
    listed=$(list)
    status=$?
    cat "$dir/list-err" >&2
fi
[ $status -eq 0 ] || exit $status
# The imported tools only (`NAME_<tool>`), not the binary's own.
mapfile -t ids < <(sed -n "s/^ *\"id\": \"\(${name}_[^\"]*\)\",\{0,1\}\$/\1/p" <<<"$listed")
echo "client.sh: imported ${#ids[@]} tool(s) from $url: ${ids[*]}" >&2
[ ${#ids[@]} -eq 0 ] && exit 0
check() {
    # (Warnings shown: a refused step-up is one, whatever `check` makes of the call's error.)
    RUST_LOG=${RUST_LOG:-warn} "$bin" "${store[@]}" --import-mcp "$name=$url" check --cases 1 --include-side-effects --timeout 20 "${ids[@]}" \
        >"$dir/out" 2>"$dir/err"
    local status=$?
    cat "$dir/out"
    cat "$dir/err" >&2
    return $status
}
check
status=$?
if [[ $scenario == json-schema-2020-12-preservation ]]; then
    # The scenario's own steps: the focal tool's input schema, as the import holds it
    # (`toolsmith schema`), passed verbatim to its echo tool (`toolsmith call`), after `check`'s
    # generated calls so that the echo it observes last is this one.
    schema=$("$bin" "${store[@]}" --import-mcp "$name=$url" schema "${name}_json_schema_2020_12_tool") || exit
    echo_args=$(python3 -c 'import json, sys; print(json.dumps({"schema": json.load(sys.stdin)["input"]}))' <<<"$schema") || exit
    "$bin" "${store[@]}" --import-mcp "$name=$url" call "${name}_json_schema_echo" "$echo_args" || exit
fi
# Step-up: a call refused for a scope the login lacks fails naming `mcp login … --scope …` with
# the scopes to ask for (a warning too: `check` counts a tool's error as an answer); as a user
# would, log in again with them and try once more.
mapfile -t scopes < <(cat "$dir/out" "$dir/err" | grep -o -- "mcp login $name [^\`]*" | head -n 1 | grep -o -- '--scope [^ ]*')
[[ $scenario == auth/* && ${#scopes[@]} -gt 0 ]] || exit $status
# shellcheck disable=SC2206 # each `--scope SCOPE` is two words
"${login[@]}" ${scopes[*]} >&2 || exit
check

"""A cut result of a request served without a session (2026-07-28 over HTTP) belongs to its
caller: with OAuth, the token's subject. The same subject reads it in full from another
request; another subject is refused."""

from __future__ import annotations

from typing import Any

from oauth_server import AuthServer
from mcp_harness import Servers
from test_oauth import auth_server  # noqa: F401  (the local authorization server)
from test_oauth import serve
from test_tasks import ok, rpc, token_for


def link_of(result: dict[str, Any]) -> str | None:
    links = [c["uri"] for c in result.get("content", []) if c.get("type") == "resource_link"]
    return links[-1] if links else None


def test_a_cut_result_of_a_sessionless_request_belongs_to_the_token_subject(
    servers: Servers, auth_server: AuthServer  # noqa: F811
) -> None:
    url = serve(servers, auth_server, "--max-model-output", "48")
    alice = token_for(auth_server, url, "alice")
    result = ok(rpc(url, "tools/call", {"name": "weather-tool", "arguments": {"location": "Seattle"}}, alice, tasks=False))
    uri = link_of(result)
    assert not result.get("isError") and uri and uri.startswith("toolsmith://results/"), result

    # Another request (a fresh token for the same subject) reads the whole result.
    again = token_for(auth_server, url, "alice")
    read = ok(rpc(url, "resources/read", {"uri": uri}, again, tasks=False))
    whole = "".join(c.get("text", "") for c in read["contents"])
    assert "Seattle" in whole and "sunny" in whole, read

    # Another subject is refused, and learns nothing of the result.
    mallory = token_for(auth_server, url, "mallory")
    refused = rpc(url, "resources/read", {"uri": uri}, mallory, tasks=False)
    # Told exactly what a result never kept is told (no oracle of other callers' results).
    assert "error" in refused and "not kept here" in refused["error"]["message"], refused
    assert "sunny" not in str(refused), refused

"""`toolsmith serve --http` as an OAuth 2.1 resource server, through the official Python SDK's
OAuth client (`mcp.client.auth.OAuthClientProvider`).

A local authorization server (oauth_server.py) issues the tokens. The client starts without a
token, gets the 401 challenge, reads the Protected Resource Metadata, discovers the
authorization server, registers itself (RFC 7591), authorizes with PKCE (the server approves
at once) and exchanges the code for a JWT meant for this MCP server (RFC 8707), then lists and
calls tools with it, in both client modes.
"""

from __future__ import annotations

import socket
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from mcp_harness import TOOLSMITH_BIN, Servers, call, connect, text_of
from oauth_server import AuthServer

pytestmark = pytest.mark.anyio

REDIRECT = "http://127.0.0.1:1/callback"


class Memory:
    """Token storage for one client, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def oauth_client(url: str, scope: str | None = None) -> tuple[OAuthClientProvider, Memory]:
    """A provider whose "browser" follows the authorization URL once and takes the code from
    the redirect (the authorization server approves without a person)."""
    redirected: dict[str, Any] = {}

    async def redirect_handler(authorization_url: str) -> None:
        async with httpx2.AsyncClient() as http:
            r = await http.get(authorization_url)
        assert r.status_code == 302, r.text
        redirected.update({k: v[0] for k, v in parse_qs(urlparse(r.headers["location"]).query).items()})

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirected["code"], state=redirected.get("state"), iss=redirected.get("iss"))

    storage = Memory()
    metadata = OAuthClientMetadata(
        client_name="toolsmith-tests",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=scope,
    )
    return OAuthClientProvider(url, metadata, storage, redirect_handler, callback_handler), storage


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def auth_server():
    server = AuthServer()
    try:
        yield server
    finally:
        server.stop()


def serve(servers: Servers, auth: AuthServer, *extra: str) -> str:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [
        str(TOOLSMITH_BIN),
        *servers.toolsmith_args("--http", f"127.0.0.1:{port}", "--auth-issuer", auth.issuer, "--auth-resource", url, *extra),
    ]
    assert servers.start_http(argv).url == url
    return url


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_oauth_client_completes_its_flow_and_calls_tools(
    servers: Servers, auth_server: AuthServer, mode: str
) -> None:
    url = serve(servers, auth_server, "--required-scope", "mcp")
    provider, storage = oauth_client(url)
    async with create_mcp_http_client(auth=provider) as http:
        async with connect(streamable_http_client(url, http_client=http), mode) as client:
            tools = await client.list_tools()
            calc = await call(client, "calculate", {"expression": "(2.5 + 3) * 4"})
    assert tools.tools and not calc.is_error, text_of(calc)
    assert "22" in text_of(calc)
    # The client registered, asked for the scope the 401 challenge named, and got a token
    # bound to this server.
    assert storage.client is not None and storage.tokens is not None
    assert auth_server.issued and auth_server.issued[-1]["aud"] == url
    assert auth_server.issued[-1]["scope"] == "mcp"


async def test_a_403_insufficient_scope_makes_the_sdk_step_up(servers: Servers, auth_server: AuthServer) -> None:
    """A tool needing more than the first token grants: the server's 403 challenge names the
    scopes, the client authorizes again for them and retries."""
    url = serve(servers, auth_server, "--required-scope", "mcp", "--tool-scope", "calculate=calc.run")
    provider, storage = oauth_client(url)
    async with create_mcp_http_client(auth=provider) as http:
        async with connect(streamable_http_client(url, http_client=http), "legacy") as client:
            await client.list_tools()
            assert auth_server.issued[-1]["scope"] == "mcp", "the first token has the 401's scope only"
            calc = await call(client, "calculate", {"expression": "(2.5 + 3) * 4"})
    assert not calc.is_error and "22" in text_of(calc), text_of(calc)
    assert len(auth_server.issued) == 2
    assert set(auth_server.issued[-1]["scope"].split()) == {"mcp", "calc.run"}
    assert storage.tokens is not None and "calc.run" in (storage.tokens.scope or "")


async def test_a_token_for_another_resource_is_refused(servers: Servers, auth_server: AuthServer) -> None:
    url = serve(servers, auth_server)
    other = f"http://127.0.0.1:{free_port()}/mcp"
    import jwt
    import time

    token = jwt.encode(
        {"iss": auth_server.issuer, "sub": "alice", "aud": other, "scope": "mcp", "exp": int(time.time()) + 60},
        auth_server.key,
        algorithm="RS256",
        headers={"kid": auth_server.kid},
    )
    async with httpx2.AsyncClient() as http:
        r = await http.post(
            url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        )
    assert r.status_code == 401
    assert 'error="invalid_token"' in r.headers["www-authenticate"]
    assert "another resource" in r.headers["www-authenticate"]


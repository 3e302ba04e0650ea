"""`toolsmith serve --tool-search` through the official Python SDK: the deferred example tools
(`convert-units`, `convert-timezone`: `#[tool(defer_loading)]`) are listed only once a
`search_tools` call finds them, for the session that searched; a request without a session
(2026-07-28) names what it loaded in `_meta["io.toolsmith/loaded"]`; `--defer-all-except` is
the server's rule over the tools' own.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import types

from mcp_harness import TEST_TIMEOUT, Servers, call, connect, text_of

pytestmark = pytest.mark.anyio

DEFERRED = {"convert-units", "convert-timezone"}
LOADED_META = "io.toolsmith/loaded"
CONVERSION = {"value": 10, "from": "km", "to": "mi"}


async def names(client: Any, **kwargs: Any) -> set[str]:
    page = await client.list_tools(**kwargs)
    assert page.next_cursor is None
    return {t.name for t in page.tools}


async def search(client: Any, query: str, limit: int = 1) -> dict:
    result = await call(client, "search_tools", {"query": query, "limit": limit})
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_search_loads_tools_for_the_session(servers: Servers, transport: str) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    target = servers.toolsmith(transport, "--tool-search")
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(target, "legacy", message_handler=on_message) as client:
            listed = await names(client)
            assert "search_tools" in listed
            assert not listed & DEFERRED, listed

            refused = await call(client, "convert-units", CONVERSION)
            assert refused.is_error
            assert "search_tools" in text_of(refused), text_of(refused)

            found = await search(client, "convert a length from kilometres to miles")
            assert [t["name"] for t in found["tools"]] == ["convert-units"], found
            assert found["loaded"] == ["convert-units"], found
            with anyio.fail_after(10):
                await changed.wait()

            result = await call(client, "convert-units", CONVERSION)
            assert not result.is_error, text_of(result)
            assert "6.21" in text_of(result), text_of(result)
            assert await names(client) == listed | {"convert-units"}

            if transport == "http":
                # Another session on the same server loaded nothing.
                async with connect(target, "legacy") as other:
                    assert await names(other) == listed
                    assert (await call(other, "convert-units", CONVERSION)).is_error


async def test_a_request_without_a_session_names_what_it_loaded(servers: Servers) -> None:
    target = servers.toolsmith("http", "--tool-search")
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(target, "auto") as client:
            assert client.protocol_version >= "2026-07-28"
            found = await search(client, "convert a time to another timezone")
            assert found["loaded"] == ["convert-timezone"], found
            # Nothing kept between requests.
            assert "convert-timezone" not in await names(client)
            args = {"time": "2024-03-10T09:30:00+09:00", "to_timezone": "America/New_York"}
            assert (await call(client, "convert-timezone", args)).is_error

            meta = {LOADED_META: found["loaded"]}
            assert "convert-timezone" in await names(client, meta=meta)
            result = await call(client, "convert-timezone", args, meta=meta)
            assert not result.is_error, text_of(result)
            assert "2024-03-09" in text_of(result), text_of(result)


async def test_defer_all_except_is_the_servers_rule(servers: Servers) -> None:
    # `convert-units` declares `defer_loading`; the rule loads it up front and defers the rest.
    target = servers.toolsmith("stdio", "--tool-search", "--defer-all-except", "convert-units")
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(target, "legacy") as client:
            assert await names(client) == {"convert-units", "search_tools"}
            result = await call(client, "convert-units", CONVERSION)
            assert not result.is_error, text_of(result)
            refused = await call(client, "text-stats", {"text": "one two"})
            assert refused.is_error and "search_tools" in text_of(refused), text_of(refused)
            found = await search(client, "count the words of a text")
            assert found["loaded"] == ["text-stats"], found
            assert not (await call(client, "text-stats", {"text": "one two"})).is_error
            assert await names(client) == {"convert-units", "text-stats", "search_tools"}

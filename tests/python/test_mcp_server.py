"""The MCP server end to end, through the official Python SDK (`mcp` 2.3.0) as a real client.

`toolsmith serve` (the example tools) and `mcp_fixture` (progress, logging, cancellation,
list_changed fixtures) run as subprocesses, over stdio and over Streamable HTTP, and the client
connects in its default `auto` mode (which negotiates 2026-07-28 with this server) and in
`legacy` mode (the initialize handshake, 2025-11-25).

The exception classes in mcp_harness name the server bugs these tests found (all fixed), so a
regression fails with the bug's name and repro instead of a bare assertion.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import MCPError, types
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_harness import (
    BUG_STDIO_DEADLOCK,
    MCP_FIXTURE_BIN,
    TEST_TIMEOUT,
    Servers,
    StdioServerHung,
    call,
    connect,
    dump,
    text_of,
    toolsmith_cli,
)

pytestmark = pytest.mark.anyio

TRANSPORTS = ("stdio", "http")
MODES = ("auto", "legacy")


def cases(*, toolsmith: bool = True) -> list[Any]:
    """transport × mode. `toolsmith`: the case runs `toolsmith serve` (else `mcp_fixture`)."""
    del toolsmith  # both servers run every transport and mode
    return [pytest.param(t, m, id=f"{t}-{m}") for t in TRANSPORTS for m in MODES]


def toolsmith_target(servers: Servers, stdio_probe: tuple[bool, str], transport: str, *extra: str,
                     env: dict[str, str] | None = None) -> Any:
    if transport == "stdio" and not stdio_probe[0]:
        # Every stdio case would wait out its timeout; the session probe already saw the server hang.
        raise StdioServerHung(f"{BUG_STDIO_DEADLOCK}: {stdio_probe[1]}")
    return servers.toolsmith(transport, *extra, env=env)


class Elicitor:
    """An elicitation callback that records each request and answers with `answer(params)`."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return self.answer(params)


def schema_of(params: types.ElicitRequestParams) -> dict:
    s = params.requested_schema
    return s if isinstance(s, dict) else dump(s)


def pending(servers: Servers) -> list[dict]:
    out = toolsmith_cli("--store", str(servers.store), "pending", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------------------------
# tools/list


async def list_all(client: Any) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools
    raise AssertionError("tools/list never ended (100 pages)")


@pytest.mark.parametrize("transport,mode", cases())
async def test_list_tools_matches_catalog(servers, toolsmith_stdio, catalog, task_support, transport, mode):
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            tools = await list_all(client)
    listed = {t.name: dump(t) for t in tools}
    assert [t.name for t in tools] == list(catalog), "the listing is the catalog, in its order"
    # A 2025-11-25 session (`legacy`) also hears which tools may run as tasks; 2026-07-28 dropped
    # the field. (The catalog names no revision, so it has none.)
    assert task_support, "the examples have a background tool"
    for name, entry in listed.items():
        execution = entry.pop("execution", None)
        expected = {"taskSupport": task_support[name]} if mode == "legacy" and name in task_support else None
        assert execution == expected, name
    for name, entry in catalog.items():
        # Every field: name, title, description, inputSchema, outputSchema, annotations, _meta.
        assert listed[name] == entry, name
    assert listed["weather-mcp"]["_meta"] == {"category": "weather", "version": "1.0.0"}
    assert listed["write-file"]["annotations"]["destructiveHint"] is True


@pytest.mark.parametrize("transport,mode", cases())
async def test_list_tools_paginates(servers, toolsmith_stdio, catalog, transport, mode):
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport, "--page-size", "5"), mode) as client:
            first = await client.list_tools()
            tools = await list_all(client)
    assert len(first.tools) == 5 and first.next_cursor is not None
    assert [t.name for t in tools] == list(catalog)


# ---------------------------------------------------------------------------------------------
# tools/call: every example tool

TOOL_ARGS: dict[str, dict] = {
    "calculate": {"expression": "(2.5 + 3) * 4"},
    "convert-timezone": {"time": "2024-03-10T09:30:00+09:00", "to_timezone": "America/New_York"},
    "convert-units": {"value": 10, "from": "km", "to": "mi"},
    "json-query": {"document": {"store": {"book": [{"title": "A"}, {"title": "B"}]}}, "query": "$.store.book[*].title"},
    "lookup-customer": {"customerId": "cus_001", "internalPath": "/crm/eu/customers"},
    "search-files": {"query": "needle"},
    "text-stats": {"text": "The cat sat. The cat ran!\n\nA new paragraph."},
    "weather-hooks": {"location": "Seoul"},
    "weather-mcp": {"location": "Seoul"},
    "weather-model-output": {"location": "Seoul"},
    "weather-tool": {"location": "Seoul"},
    "write-file": {"path": "notes/new.txt", "content": "hello\n"},
    "example-output": {},
}

# Client-side tools (no body: the application answers their calls): listed like any tool, and a
# `tools/call` is an error result naming the call that waits (see test_client_side_call_*).
CLIENT_SIDE: dict[str, dict] = {
    "ask-confirmation": {"question": "Deploy now?", "confirmLabel": "Deploy"},
    "example-input-available": {"location": "Seoul"},
    "example-input-delta": {},
    "example-input-start": {},
}


def seed(root: Path) -> None:
    """What search-files finds under a context root."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "a.txt").write_text("a needle in a haystack\n")
    (root / "b.md").write_text("nothing here\n")


def cli_call(tmp: Path, tool: str, args: dict, *extra: str) -> dict:
    """`toolsmith call TOOL ARGS` in a fresh root of its own (so write-file writes a new file)."""
    root = Path(tmp) / f"cli-{tool}-{len(extra)}"
    root.mkdir()
    seed(root)
    out = toolsmith_cli("--store", str(Path(tmp) / "cli.sqlite3"), "call", tool, json.dumps(args),
                        "--context", json.dumps({"root": str(root)}), *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_example_tool_has_a_call_case(catalog):
    assert sorted([*TOOL_ARGS, *CLIENT_SIDE]) == sorted(catalog), "add valid arguments for new tools to TOOL_ARGS"


@pytest.mark.parametrize("tool", sorted(TOOL_ARGS))
@pytest.mark.parametrize("transport,mode", cases())
async def test_call_tool_matches_cli(servers, toolsmith_stdio, tmp_path, transport, mode, tool):
    args = TOOL_ARGS[tool]
    raw = cli_call(tmp_path, tool, args)  # the raw output
    message = cli_call(tmp_path, tool, args, "--as", "mcp")  # the MCP tool-result message
    seed(servers.root)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            await list_all(client)  # a client lists before it calls (and validates output against it)
            result = await call(client, tool, args)
    assert not result.is_error, text_of(result)
    assert result.structured_content == raw
    assert message["structuredContent"] == raw
    content = [dump(c) for c in result.content]
    expected = message["content"]
    if content != expected:
        # With a model output, the server adds the raw output as a JSON text block after it.
        assert content[:-1] == expected, content
        assert content[-1]["type"] == "text" and json.loads(content[-1]["text"]) == raw
    if tool == "write-file":
        assert (servers.root / "notes" / "new.txt").read_text() == "hello\n"


@pytest.mark.parametrize("tool", sorted(CLIENT_SIDE))
@pytest.mark.parametrize("transport,mode", cases())
async def test_client_side_call_is_an_error_naming_the_waiting_call(servers, toolsmith_stdio, transport, mode, tool):
    """An MCP client cannot answer a server's tool: the call waits in the server's store, the
    error result names it, and the application completes it there (here with the CLI)."""
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            listed = {t.name for t in await list_all(client)}
            result = await call(client, tool, CLIENT_SIDE[tool])
    assert tool in listed
    assert result.is_error
    text = text_of(result)
    assert "answered by the application" in text, text
    match = re.search(r"its call `([^`]+)` waits", text)
    assert match, text
    call_id = match.group(1)
    pending = toolsmith_cli("--store", str(servers.store), "pending", "--json")
    assert pending.returncode == 0, pending.stderr
    waiting = [c for c in json.loads(pending.stdout) if c["tool_call_id"] == call_id]
    assert [(c["tool_name"], c["kind"]) for c in waiting] == [(tool, "result")]
    answer = {"confirmed": True, "answeredAt": "2026-12-01T15:00:00Z"} if tool == "ask-confirmation" else None
    done = toolsmith_cli("--store", str(servers.store), "call", call_id, "--result", json.dumps(answer))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == answer


@pytest.mark.parametrize("transport,mode", cases())
async def test_bad_input_is_an_error_result_naming_the_path(servers, toolsmith_stdio, transport, mode):
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            wrong_type = await call(client, "calculate", {"expression": 5})
            missing = await call(client, "convert-units", {"value": 1, "from": "km"})
    assert wrong_type.is_error
    assert "/expression" in text_of(wrong_type) and 'is not of type "string"' in text_of(wrong_type)
    assert wrong_type.structured_content is None
    assert missing.is_error
    assert '"to" is a required property' in text_of(missing)


@pytest.mark.parametrize("transport,mode", cases())
async def test_unknown_tool_is_invalid_params(servers, toolsmith_stdio, transport, mode):
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            with pytest.raises(MCPError) as e:
                await client.call_tool("no-such-tool", {})
    assert e.value.error.code == types.INVALID_PARAMS
    assert "no-such-tool" in e.value.error.message


# ---------------------------------------------------------------------------------------------
# Approval and suspension through elicitation


@pytest.mark.parametrize("transport,mode", cases())
async def test_approval_approved_through_elicitation(servers, toolsmith_stdio, transport, mode):
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    elicit = Elicitor(lambda p: types.ElicitResult(action="accept", content={"approved": True}))
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode,
                           elicitation_callback=elicit) as client:
            result = await call(client, "write-file", {"path": "x.txt", "content": "new!", "overwrite": True})
    assert len(elicit.asked) == 1
    assert "write-file" in elicit.asked[0].message
    schema = schema_of(elicit.asked[0])
    assert schema["properties"]["approved"]["type"] == "boolean"
    assert schema["properties"]["reason"]["type"] == "string"
    assert schema["required"] == ["approved"]
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"path": "x.txt", "bytes_written": 4, "created": False}
    assert target_file.read_text() == "new!"
    assert pending(servers) == []


@pytest.mark.parametrize("transport,mode", cases())
async def test_approval_edited_through_elicitation(servers, toolsmith_stdio, transport, mode):
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    elicit = Elicitor(lambda p: types.ElicitResult(action="accept", content={"approved": True, "edit.content": "edited"}))
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode,
                           elicitation_callback=elicit) as client:
            result = await call(client, "write-file", {"path": "x.txt", "content": "new!", "overwrite": True})
    schema = schema_of(elicit.asked[0])
    assert schema["properties"]["edit.content"]["type"] == "string"
    assert schema["required"] == ["approved"]
    assert not result.is_error, text_of(result)
    assert target_file.read_text() == "edited", "the approver's arguments ran, not the model's"
    assert pending(servers) == []


DECLINES = {
    "declined": lambda p: types.ElicitResult(action="decline"),
    "approved-false": lambda p: types.ElicitResult(action="accept", content={"approved": False, "reason": "not today"}),
}


@pytest.mark.parametrize("answer", sorted(DECLINES))
@pytest.mark.parametrize("transport,mode", cases())
async def test_approval_declined_through_elicitation(servers, toolsmith_stdio, transport, mode, answer):
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    elicit = Elicitor(DECLINES[answer])
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode,
                           elicitation_callback=elicit) as client:
            await list_all(client)
            result = await call(client, "write-file", {"path": "x.txt", "content": "new!", "overwrite": True})
    assert len(elicit.asked) == 1
    assert "not approved" in text_of(result)
    if answer == "approved-false":
        assert "not today" in text_of(result)
    assert target_file.read_text() == "old"
    assert pending(servers) == []


@pytest.mark.parametrize("transport,mode", cases())
async def test_suspension_answered_through_elicitation(servers, toolsmith_stdio, transport, mode):
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    elicit = Elicitor(lambda p: types.ElicitResult(action="accept", content={"overwrite": True}))
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode,
                           elicitation_callback=elicit) as client:
            result = await call(client, "write-file", {"path": "x.txt", "content": "newer"})
    # The form is the tool's resume schema {overwrite: bool}; the message shows the suspend payload.
    assert len(elicit.asked) == 1
    schema = schema_of(elicit.asked[0])
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["overwrite"]
    assert schema["properties"]["overwrite"]["type"] == "boolean"
    assert schema["required"] == ["overwrite"]
    assert "x.txt" in elicit.asked[0].message
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"path": "x.txt", "bytes_written": 5, "created": False}
    assert target_file.read_text() == "newer"
    assert pending(servers) == []


@pytest.mark.parametrize("transport,mode", cases())
async def test_client_without_elicitation_gets_approval_required(servers, toolsmith_stdio, transport, mode):
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    args = {"path": "x.txt", "content": "new!", "overwrite": True}
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(toolsmith_target(servers, toolsmith_stdio, transport), mode) as client:
            result = await call(client, "write-file", args)
    assert result.is_error
    text = text_of(result)
    assert "requires approval" in text
    m = re.search(r"toolsmith call (mcp_\w+) --approve", text)
    assert m, text
    call_id = m.group(1)
    assert target_file.read_text() == "old"

    waiting = pending(servers)
    assert [(p["tool_call_id"], p["tool_name"], p["kind"], p["args"]) for p in waiting] == [
        (call_id, "write-file", "approval", args)]

    # The command the result names does approve and run it.
    out = toolsmith_cli("--store", str(servers.store), "call", call_id, "--approve")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"path": "x.txt", "bytes_written": 4, "created": False}
    assert target_file.read_text() == "new!"
    assert pending(servers) == []


# ---------------------------------------------------------------------------------------------
# Progress, logging, cancellation, list_changed (mcp_fixture)


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_progress_notifications_reach_the_callback(servers, transport, mode):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode) as client:
            result = await call(client, "test_tool_with_progress", {}, progress_callback=on_progress)
    assert not result.is_error, text_of(result)
    assert [(p, t) for p, t, _ in seen] == [(0, 100), (50, 100), (100, 100)]


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_log_messages_reach_the_logging_callback(servers, transport, mode):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    # 2026-07-28 opts in per request (log_level); a legacy session sets its level.
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode, logging_callback=on_log,
                           log_level="debug" if mode == "auto" else None) as client:
            if mode == "legacy":
                await client.set_logging_level("debug")
            result = await call(client, "test_tool_with_logging", {})
    assert not result.is_error, text_of(result)
    assert len(logs) >= 3, logs
    assert all(log.level in ("debug", "info", "notice", "warning") for log in logs), logs
    assert len({json.dumps(log.data, sort_keys=True) for log in logs}) == len(logs), "each message once"


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_cancelling_a_call_cancels_it_on_the_server(servers, tmp_path, transport, mode):
    cancel_log = tmp_path / "cancelled.log"
    env = {"MCP_FIXTURE_CANCEL_LOG": str(cancel_log)}
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport, env=env), mode) as client:
            with anyio.move_on_after(1.0) as scope:
                await call(client, "slow", {})
            assert scope.cancelled_caught, "`slow` finished instead of running for 30 s"
            # The server notices within a few seconds (poll until then; the deadline is the assertion).
            with anyio.fail_after(10):
                while not (cancel_log.exists() and cancel_log.read_text().strip()):
                    await anyio.sleep(0.05)
            # The session is still usable after a cancelled call.
            tools = await list_all(client)
    lines = cancel_log.read_text().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"cancelled \S+", lines[0]), lines
    assert "slow" in {t.name for t in tools}


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_tools_list_changed_after_add_tool(servers, transport, mode):
    changed = anyio.Event()

    async def on_message(message: Any) -> None:  # legacy sessions: a plain notification
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode, message_handler=on_message) as client:
            before = {t.name for t in await list_all(client)}
            assert "dynamic_echo" not in before
            if mode == "legacy":
                assert client.protocol_version < "2026-07-28"
                await call(client, "add_tool", {})
                with anyio.fail_after(10):
                    await changed.wait()
            else:
                # 2026-07-28 has no session to notify: changes come on a subscriptions/listen stream.
                assert client.protocol_version >= "2026-07-28"
                async with client.listen(tools_list_changed=True) as sub:
                    await call(client, "add_tool", {})
                    events = []
                    with anyio.fail_after(10):
                        async for event in sub:
                            events.append(event)
                            break
                assert isinstance(events[0], ToolsListChanged), events
            after = {t.name for t in await list_all(client)}
            assert after == before | {"dynamic_echo"}


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_fixture_approval_through_elicitation(servers, transport, mode):
    # The same approval path as toolsmith's, through the fixture server.
    elicit = Elicitor(lambda p: types.ElicitResult(action="accept", content={"approved": True}))
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode, elicitation_callback=elicit) as client:
            result = await call(client, "approve_me", {}, progress_callback=on_progress)
    assert len(elicit.asked) == 1 and "approve_me" in elicit.asked[0].message
    assert not result.is_error, text_of(result)
    assert text_of(result) == "approved and ran"
    # The approved call runs with the approving request's client: its progress arrives.
    assert seen == [(1.0, 1.0, "approved")], seen


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_a_tool_asks_its_user_mid_call(servers, transport, mode):
    # Up to 2025-11-25 each question is a request of the server's own; on 2026-07-28 (`auto`)
    # it is an input-required result, and the client's next call brings the answer back to the
    # still-running tool, which then reports its progress to that call.
    answers = iter(["one", "two"])
    elicit = Elicitor(lambda p: types.ElicitResult(
        action="accept", content={next(iter(schema_of(p)["properties"])): next(answers)}))
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode, elicitation_callback=elicit) as client:
            assert (client.protocol_version >= "2026-07-28") == (mode == "auto"), client.protocol_version
            result = await call(client, "ask_twice", {}, progress_callback=on_progress)
            assert not result.is_error, text_of(result)
            assert text_of(result) == "answers: one, two"
            # The server is free again: a plain call still works on the same client.
            again = await call(client, "echo", {"text": "after"})
            assert not again.is_error, text_of(again)
    assert [p.message for p in elicit.asked] == ["Question 1: your first answer?", "Question 2: your second answer?"]
    assert seen == [(1.0, 2.0, "asked 1 of 2")], seen


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_unanswered_mid_call_question_expires(servers, transport):
    # 2026-07-28: the server keeps the running call for its answer only so long (here 200 ms);
    # an answer that comes later finds no call, and the server is free for the next one.
    async def late(context, params):
        await anyio.sleep(1.5)
        return types.ElicitResult(action="accept", content={"first": "late"})

    env = {"MCP_FIXTURE_INPUT_TIMEOUT_MS": "200"}
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport, env=env), "auto", elicitation_callback=late) as client:
            assert client.protocol_version >= "2026-07-28"
            result = await call(client, "ask_twice", {})
            assert result.is_error
            assert "its wait for an answer expired" in text_of(result), text_of(result)
            again = await call(client, "echo", {"text": "after"})
            assert text_of(again) == "after"


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_a_tool_samples_the_clients_model_mid_call(servers, transport, mode):
    prompts = []

    async def sample(context, params):
        prompts.append(params.messages[0].content.text)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="42"), model="fake")

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode, sampling_callback=sample) as client:
            result = await call(client, "test_sampling", {"prompt": "The meaning of life?"})
    assert not result.is_error, text_of(result)
    assert text_of(result) == "LLM response: 42"
    assert prompts == ["The meaning of life?"]


@pytest.mark.parametrize("transport,mode", cases(toolsmith=False))
async def test_fixture_approval_without_elicitation(servers, transport, mode):
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode) as client:
            result = await call(client, "approve_me", {})
    assert result.is_error
    assert re.search(r"requires approval.*toolsmith call mcp_\w+ --approve", text_of(result), re.S), text_of(result)


# ---------------------------------------------------------------------------------------------
# HTTP: DNS rebinding and bearer tokens

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def raw_post(url: str, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, headers={**POST_HEADERS, **headers}, json=INITIALIZE, timeout=10)


def test_dns_rebinding_is_refused(servers):
    url = servers.toolsmith("http")
    port = url.split(":")[2].split("/")[0]
    evil = raw_post(url, {"Host": "evil.example.com", "Origin": "http://evil.example.com"})
    assert evil.status_code == 403, evil.text
    evil_origin = raw_post(url, {"Origin": "http://evil.example.com"})
    assert evil_origin.status_code == 403, evil_origin.text
    local = raw_post(url, {"Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"})
    assert local.status_code == 200, local.text


@pytest.mark.parametrize("mode", MODES)
async def test_stateless_json_response_server(servers, catalog, mode):
    """`serve --http --stateless --json-response`: no session, yet listing and calling work. A
    legacy request has no session to be asked through, so approval answers at once naming the
    waiting call; 2026-07-28 asks through an input-required result as always."""
    target_file = servers.root / "x.txt"
    target_file.write_text("old")
    url = servers.toolsmith("http", "--stateless", "--json-response")
    elicit = Elicitor(lambda p: types.ElicitResult(action="accept", content={"approved": True}))
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(url, mode, elicitation_callback=elicit) as client:
            tools = await list_all(client)
            calc = await call(client, "calculate", TOOL_ARGS["calculate"])
            write = await call(client, "write-file", {"path": "x.txt", "content": "new!", "overwrite": True})
    assert [t.name for t in tools] == list(catalog)
    assert not calc.is_error and calc.structured_content == cli_call(servers.tmp, "calculate", TOOL_ARGS["calculate"])
    if mode == "legacy":
        assert elicit.asked == [], "a legacy client was asked without a session"
        assert write.is_error and "stateless" in text_of(write), text_of(write)
        assert re.search(r"toolsmith call mcp_\w+ --approve", text_of(write)), text_of(write)
        assert target_file.read_text() == "old"
    else:
        assert len(elicit.asked) == 1
        assert not write.is_error, text_of(write)
        assert target_file.read_text() == "new!"


@pytest.mark.parametrize("mode", MODES)
async def test_gateway_serves_an_imported_servers_tools(servers, catalog, mode):
    """`toolsmith serve --http … --import-mcp fx=<mcp_fixture --stdio>`: the fixture's tools sit
    beside the linked ones as `fx_<tool>`, calls reach the fixture through the gateway, and the
    fixture adding (and removing) a tool changes what this client lists."""
    url = servers.toolsmith("http", "--import-mcp", f"fx={shlex.quote(str(MCP_FIXTURE_BIN))} --stdio")

    async def names_once(client: Any, settled: Any) -> set[str]:
        # The gateway follows the fixture's list_changed on its own time: list until it has.
        while not settled(names := {t.name for t in await list_all(client)}):
            await anyio.sleep(0.05)
        return names

    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(url, mode) as client:
            before = {t.name for t in await list_all(client)}
            echoed = await call(client, "fx_echo", {"text": "through the gateway"})
            calc = await call(client, "calculate", TOOL_ARGS["calculate"])
            await call(client, "fx_add_tool", {})
            after = await names_once(client, lambda n: "fx_dynamic_echo" in n)
            added = await call(client, "fx_dynamic_echo", {"text": "added at run time"})
            await call(client, "fx_remove_tool", {})
            final = await names_once(client, lambda n: "fx_dynamic_echo" not in n)
    assert set(catalog) <= before, sorted(set(catalog) - before)
    assert {"fx_echo", "fx_add_tool", "fx_remove_tool"} <= before and "fx_dynamic_echo" not in before
    assert not echoed.is_error and text_of(echoed) == "through the gateway", text_of(echoed)
    assert not calc.is_error and calc.structured_content == cli_call(servers.tmp, "calculate", TOOL_ARGS["calculate"])
    assert after == before | {"fx_dynamic_echo"}
    assert not added.is_error and text_of(added) == "added at run time"
    assert final == before


TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize("mode", MODES)
async def test_bearer_token_required(servers, catalog, mode):
    url = servers.toolsmith("http", "--auth-token-env", "TOOLSMITH_TEST_TOKEN", env={"TOOLSMITH_TEST_TOKEN": TOKEN})

    anonymous = raw_post(url, {})
    assert anonymous.status_code == 401, anonymous.text
    assert anonymous.headers.get("www-authenticate", "").startswith("Bearer")
    wrong = raw_post(url, {"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 401, wrong.text

    with anyio.fail_after(TEST_TIMEOUT):
        with pytest.raises(Exception) as refused:
            async with connect(url, mode):
                pass
        assert "401" in repr(refused.value) or "Unauthorized" in repr(refused.value), repr(refused.value)

        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            async with connect(streamable_http_client(url, http_client=http), mode) as client:
                tools = await list_all(client)
                bad = await call(client, "calculate", {"expression": 5})
    assert [t.name for t in tools] == list(catalog)
    assert bad.is_error and "/expression" in text_of(bad)



# ---------------------------------------------------------------------------------------------
# Bounded model output: a cut result links its full form, readable by its session only


def result_link(result: Any) -> str | None:
    links = [c for c in result.content if getattr(c, "type", None) == "resource_link"]
    return str(links[-1].uri) if links else None


@pytest.mark.parametrize("transport,mode", cases())
async def test_a_cut_result_is_read_in_full_through_its_link(servers, transport, mode):
    """`long_log` (max_model_output = "1KiB") returns ~100 KB: the model sees its head and tail,
    and the session that called reads the whole text from the linked resource. Over HTTP a
    2026-07-28 request has no session to read it back in, and no bearer token here: no link."""
    full = "".join(f"line {i}: ünïcödé\n" for i in range(4000))
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(servers.fixture(transport), mode) as client:
            result = await call(client, "long_log", {"lines": 4000})
            seen = result.content[0].text
            uri = result_link(result)
            read = await client.read_resource(uri) if uri else None
    assert not result.is_error
    assert len(seen.encode()) <= 1024 + 300, len(seen.encode())
    assert seen.startswith("line 0: ünïcödé\n") and seen.endswith("line 3999: ünïcödé\n"), seen
    assert f"of {len(full.encode())} bytes left out here" in seen, seen
    if transport == "http" and mode == "auto":
        assert uri is None, "a sessionless request without a token is offered no link"
        return
    assert uri is not None and uri.startswith("toolsmith://results/"), dump(result)
    assert uri in seen, "the marker says where the rest is"
    assert read is not None and read.contents[0].text == full


@pytest.mark.parametrize("mode", MODES)
async def test_a_cut_result_is_refused_to_another_session(servers, mode):
    """Two legacy HTTP sessions on one server: the second cannot read the first's result."""
    url = servers.fixture("http")
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(url, "legacy") as owner:
            result = await call(owner, "long_log", {"lines": 2000})
            uri = result_link(result)
            assert uri is not None, dump(result)
            async with connect(url, mode) as other:
                with pytest.raises(MCPError) as refused:
                    await other.read_resource(uri)
            whole = await owner.read_resource(uri)
    assert "not kept here" in str(refused.value), str(refused.value)
    assert whole.contents[0].text.endswith("line 1999: ünïcödé\n")

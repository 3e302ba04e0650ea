"""MCP tasks (the `io.modelcontextprotocol/tasks` extension, 2026-07-28): a call of a background
tool answered with a task handle, polled with `tasks/get`, answered with `tasks/update`, cancelled
with `tasks/cancel`.

The official Python SDK (mcp 2.3.0) has no tasks API (its method tables leave `tasks/*` out), so
these requests go over raw HTTP (httpx) to `mcp_fixture --store FILE --http … --stateless`, whose
`slow_task` and `approve_task` tools opted into the background. Every request is one HTTP
request of its own (2026-07-28 is stateless): a task read after `tools/call` answered is read
after the request that started it ended. With PostgreSQL (`TOOLSMITH_TEST_POSTGRES`), a task
started on one instance is read and cancelled on another.

Every wait has a deadline; nothing sleeps to decide an outcome.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2 as httpx
import jwt
import mcp_types as types
import pytest
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict

from mcp_harness import MCP_FIXTURE_BIN, HttpServer, Servers, connect, jsonrpc_answer
from oauth_server import AuthServer
from test_oauth import auth_server  # noqa: F401  (the local authorization server)
from test_oauth import serve as serve_oauth
from test_instances import database, env  # noqa: F401  (the PostgreSQL schema fixture)

PROTOCOL = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
DEADLINE = float(__import__("os").environ.get("TASKS_DEADLINE", "30"))  # seconds a task may take to reach the state a test waits for


def meta(tasks: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"elicitation": {}}
    if tasks:
        capabilities["extensions"] = {TASKS: {}}
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "test-tasks", "version": "1"},
    }


def rpc(url: str, method: str, params: dict[str, Any], token: str | None = None, tasks: bool = True) -> dict[str, Any]:
    """One 2026-07-28 request over raw HTTP; the JSON-RPC message it is answered with."""
    headers = {"MCP-Protocol-Version": PROTOCOL, "Mcp-Method": method,
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if method == "tools/call":
        headers["Mcp-Name"] = params["name"]
    elif method.startswith("tasks/"):
        headers["Mcp-Name"] = params["taskId"]
    elif method == "resources/read":
        headers["Mcp-Name"] = params["uri"]
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta(tasks)}}
    return jsonrpc_answer(httpx.post(url, headers=headers, json=body, timeout=DEADLINE))


def ok(message: dict[str, Any]) -> dict[str, Any]:
    assert "result" in message, message
    return message["result"]


def start(url: str, name: str, arguments: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    handle = ok(rpc(url, "tools/call", {"name": name, "arguments": arguments}, token))
    assert handle["resultType"] == "task", handle
    assert handle["taskId"].startswith("task_"), handle
    assert handle["pollIntervalMs"] > 0 and handle["createdAt"].endswith("Z"), handle
    return handle


def get(url: str, task_id: str, token: str | None = None) -> dict[str, Any]:
    return ok(rpc(url, "tasks/get", {"taskId": task_id}, token))


def wait_for(url: str, task_id: str, status: str, message: str = "", token: str | None = None) -> dict[str, Any]:
    """Polls `tasks/get` until the task has `status` (and a status message containing `message`)."""
    deadline = time.monotonic() + DEADLINE
    seen: dict[str, Any] = {}
    while time.monotonic() < deadline:
        seen = get(url, task_id, token)
        if seen["status"] == status and message in (seen.get("statusMessage") or ""):
            return seen
        assert seen["status"] in ("working", "input_required") or seen["status"] == status, seen
        time.sleep(seen.get("pollIntervalMs", 100) / 1000)
    raise AssertionError(f"task {task_id} never reached {status!r} {message!r} within {DEADLINE}s; last: {seen}")


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []))


def fixture(store: str, extra_env: dict[str, str] | None = None) -> HttpServer:
    argv = [str(MCP_FIXTURE_BIN), "--store", store, "--http", "127.0.0.1:0", "--stateless"]
    return HttpServer(argv, {**env(), **(extra_env or {})})


@pytest.fixture
def served(tmp_path: Path):
    """One fixture server on a SQLite store, and the file its cancelled calls are logged to."""
    log = tmp_path / "cancelled.log"
    server = fixture(str(tmp_path / "store.sqlite3"), {"MCP_FIXTURE_CANCEL_LOG": str(log)})
    server.cancel_log = log
    try:
        yield server
    finally:
        server.stop()


def test_the_server_advertises_the_extension(served):
    init = ok(rpc(served.url, "server/discover", {}))
    assert TASKS in init["capabilities"].get("extensions", {}), init


def test_a_task_is_created_polled_and_its_result_read(served):
    handle = start(served.url, "slow_task", {"seconds": 0.2})
    assert handle["status"] == "working", handle
    done = wait_for(served.url, handle["taskId"], "completed")
    assert not done["result"].get("isError"), done
    assert text_of(done["result"]) == "slept 0.2 s", done
    assert done["createdAt"] == handle["createdAt"] <= done["lastUpdatedAt"], (handle, done)
    # Read again, by a later request: the task outlives the request that started it.
    assert get(served.url, handle["taskId"])["result"] == done["result"]


def test_a_client_without_the_extension_gets_the_result_itself(served):
    result = ok(rpc(served.url, "tools/call", {"name": "slow_task", "arguments": {"seconds": 0}}, tasks=False))
    assert result.get("resultType") != "task", result
    assert text_of(result) == "slept 0 s", result


def test_a_running_task_is_cancelled(served):
    handle = start(served.url, "slow_task", {"seconds": 30})
    task_id = handle["taskId"]
    wait_for(served.url, task_id, "working", "Running")
    ack = ok(rpc(served.url, "tasks/cancel", {"taskId": task_id}))
    assert ack.get("resultType", "complete") == "complete", ack
    cancelled = wait_for(served.url, task_id, "cancelled")
    assert "result" not in cancelled, cancelled
    # The tool itself was stopped through its cancellation token (it logs that, at once).
    deadline = time.monotonic() + DEADLINE
    while not (served.cancel_log.exists() and "cancelled" in served.cancel_log.read_text()):
        assert time.monotonic() < deadline, "the running call was never cancelled"
        time.sleep(0.05)
    # Cancelling an ended task again is acknowledged (idempotent) and changes nothing.
    again = ok(rpc(served.url, "tasks/cancel", {"taskId": task_id}))
    assert again.get("resultType", "complete") == "complete", again
    assert get(served.url, task_id)["status"] == "cancelled"


def test_a_task_needing_approval_waits_for_input_then_completes(served):
    handle = start(served.url, "approve_task", {"note": "hi"})
    assert handle["status"] == "input_required", handle
    waiting = get(served.url, handle["taskId"])
    assert waiting["status"] == "input_required", waiting
    form = waiting["inputRequests"]["approval"]
    assert form["method"] == "elicitation/create" and "approve_task" in form["params"]["message"], form

    answer = {"approval": {"action": "accept", "content": {"approved": True}}}
    ack = ok(rpc(served.url, "tasks/update", {"taskId": handle["taskId"], "inputResponses": answer}))
    assert ack.get("resultType", "complete") == "complete", ack
    done = wait_for(served.url, handle["taskId"], "completed")
    assert text_of(done["result"]) == "approved: hi", done


def test_a_task_waiting_for_approval_is_cancelled(served):
    handle = start(served.url, "approve_task", {"note": "no"})
    ok(rpc(served.url, "tasks/cancel", {"taskId": handle["taskId"]}))
    assert get(served.url, handle["taskId"])["status"] == "cancelled"
    # Its call was declined: approving it now runs nothing.
    answer = {"approval": {"action": "accept", "content": {"approved": True}}}
    late = rpc(served.url, "tasks/update", {"taskId": handle["taskId"], "inputResponses": answer})
    assert "error" in late and "waits for no input" in late["error"]["message"], late
    assert get(served.url, handle["taskId"])["status"] == "cancelled"


def test_a_declined_task_completes_with_the_declined_answer(served):
    handle = start(served.url, "approve_task", {"note": "no"})
    answer = {"approval": {"action": "accept", "content": {"approved": False, "reason": "not today"}}}
    ok(rpc(served.url, "tasks/update", {"taskId": handle["taskId"], "inputResponses": answer}))
    done = get(served.url, handle["taskId"])
    assert done["status"] == "completed" and done["result"]["isError"] is True, done
    assert "not approved" in text_of(done["result"]) and "not today" in text_of(done["result"]), done


def token_for(auth: AuthServer, url: str, subject: str) -> str:
    claims = {"iss": auth.issuer, "sub": subject, "aud": url, "scope": "mcp", "exp": int(time.time()) + 300}
    return jwt.encode(claims, auth.key, algorithm="RS256", headers={"kid": auth.kid})


def test_another_caller_cannot_read_or_cancel_a_task(servers: Servers, auth_server: AuthServer):
    """Tasks belong to the token's subject: another subject is told there is no such task."""
    url = serve_oauth(servers, auth_server, "--stateless")
    (servers.root / "notes.txt").write_text("needle in a haystack")
    alice, mallory = token_for(auth_server, url, "alice"), token_for(auth_server, url, "mallory")
    handle = start(url, "search-files", {"query": "needle"}, alice)
    done = wait_for(url, handle["taskId"], "completed", token=alice)
    assert "notes.txt" in json.dumps(done["result"]), done
    for method in ("tasks/get", "tasks/cancel"):
        refused = rpc(url, method, {"taskId": handle["taskId"]}, mallory)
        assert "error" in refused and "There is no task" in refused["error"]["message"], (method, refused)
    assert get(url, handle["taskId"], alice) == done


def test_another_caller_cannot_answer_a_task_waiting_for_approval(served):
    """Without identities (an open server) the unguessable task id is the key: a guessed or
    forged one names nothing, and nobody can approve a task they cannot name."""
    handle = start(served.url, "approve_task", {"note": "mine"})
    forged = "task_mcp_" + "0" * 32
    answer = {"approval": {"action": "accept", "content": {"approved": True}}}
    for method, params in [("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"inputResponses": answer})]:
        refused = rpc(served.url, method, {"taskId": forged, **params})
        assert "error" in refused and "There is no task" in refused["error"]["message"], (method, refused)
    assert get(served.url, handle["taskId"])["status"] == "input_required"


def test_an_unknown_task_is_an_error(served):
    for task_id in ("task_mcp_0123", "nonsense", ""):
        refused = rpc(served.url, "tasks/get", {"taskId": task_id})
        assert "error" in refused and "There is no task" in refused["error"]["message"], refused


def test_a_task_started_on_one_instance_is_read_and_cancelled_on_another(database):  # noqa: F811
    a, b = fixture(database), fixture(database)
    try:
        handle = start(a.url, "slow_task", {"seconds": 0.1})
        done = wait_for(b.url, handle["taskId"], "completed")
        assert text_of(done["result"]) == "slept 0.1 s", done

        long = start(a.url, "slow_task", {"seconds": 30})
        wait_for(b.url, long["taskId"], "working", "Running")
        ok(rpc(b.url, "tasks/cancel", {"taskId": long["taskId"]}))
        assert wait_for(a.url, long["taskId"], "cancelled")["status"] == "cancelled"

        approval = start(b.url, "approve_task", {"note": "across"})
        answer = {"approval": {"action": "accept", "content": {"approved": True}}}
        ok(rpc(a.url, "tasks/update", {"taskId": approval["taskId"], "inputResponses": answer}))
        assert text_of(wait_for(b.url, approval["taskId"], "completed")["result"]) == "approved: across"
    finally:
        a.stop()
        b.stop()


# --------------------------------------------------------------------------------------------
# Through the official SDK: its extension interface (`ClientExtension`, `ResultClaim`) declares
# the tasks extension in every request's capabilities and hands a `resultType: "task"` answer to
# a resolver, which follows the task with `tasks/get` (and answers its approval with
# `tasks/update`) through the SDK's own session, then returns the task's `CallToolResult`.


class TaskHandle(types.Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskState(types.Result):
    model_config = ConfigDict(extra="allow")
    result_type: str | None = None
    task_id: str
    status: str
    status_message: str | None = None
    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


class GetTask(types.Request[dict[str, Any], Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateTask(types.Request[dict[str, Any], Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class SdkTasks(ClientExtension):
    """The requester side of the tasks extension, approving what it is asked to approve."""

    identifier = TASKS

    def __init__(self) -> None:
        self.seen: list[str] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.follow)]

    async def follow(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            state = await ctx.session.send_request(GetTask(params={"taskId": handle.task_id}), TaskState)
            self.seen.append(state.status)
            if state.status == "completed":
                return types.CallToolResult.model_validate(state.result)
            if state.status == "input_required":
                assert state.input_requests and "approval" in state.input_requests, state
                answer = {"approval": {"action": "accept", "content": {"approved": True}}}
                await ctx.session.send_request(
                    UpdateTask(params={"taskId": handle.task_id, "inputResponses": answer}), types.EmptyResult
                )
                continue
            assert state.status == "working", state
            await anyio.sleep((handle.poll_interval_ms or 100) / 1000)
        raise AssertionError(f"task {handle.task_id} did not complete within {DEADLINE}s: {self.seen}")


@pytest.mark.anyio
async def test_the_sdk_runs_a_tool_as_a_task_and_approves_it(served):
    tasks = SdkTasks()
    async with connect(served.url, "auto", extensions=[tasks]) as client:
        assert client.protocol_version == PROTOCOL
        slept = await client.call_tool("slow_task", {"seconds": 0.1})
        assert not slept.is_error and text_of(slept.model_dump()) == "slept 0.1 s", slept
        assert tasks.seen[-1] == "completed", tasks.seen
        tasks.seen.clear()
        approved = await client.call_tool("approve_task", {"note": "via the sdk"})
        assert text_of(approved.model_dump()) == "approved: via the sdk", approved
        assert tasks.seen[0] == "input_required" and tasks.seen[-1] == "completed", tasks.seen
    # Without the extension the same SDK gets the call's result itself.
    async with connect(served.url, "auto") as client:
        plain = await client.call_tool("slow_task", {"seconds": 0})
        assert text_of(plain.model_dump()) == "slept 0 s", plain

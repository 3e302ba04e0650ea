"""Several instances on one PostgreSQL: three `serve --http --stateless --store postgres://…`
processes on one fresh schema, each request of a flow sent to a different instance in turn.

- a call needing approval started on A is approved on B, and C sees it resolved;
- a suspended call (write-file's overwrite conflict) resumed on another instance;
- a 2026-07-28 elicitation mid-call (`ask_twice`, parked on A) answered through B, then C;
- an answer for a run whose instance was killed is a clear error within a bound, never a hang;
- a forged or edited request state is refused, for a parked run and for a waiting call;
- `list_changed` after `add_tool` on one instance reaches the clients of all three;
- a result cut on A (`--max-model-output`) is read whole through its link on B by the same
  OAuth subject, refused to another subject on C, and counted by `store status`;
- `GET /healthz` reports the store.

The approval and suspension flows run `toolsmith serve` (the example tools); the mid-call
elicitation and `list_changed` run `mcp_fixture --store` (it has `ask_twice` and `add_tool`).
Raw HTTP (httpx) drives the flows whose requests must go to different instances; the official SDK
listens for `list_changed`. `TOOLSMITH_TEST_POSTGRES` names the database: without it these tests
FAIL, unless `TOOLSMITH_SKIP_POSTGRES=1` opts out explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2 as httpx
import jwt
import pytest
from mcp.client.subscriptions import ToolsListChanged

from mcp_harness import MCP_FIXTURE_BIN, TEST_TIMEOUT, TOOLSMITH_BIN, HttpServer, connect, jsonrpc_answer, toolsmith_cli
from oauth_server import AuthServer
from test_oauth import auth_server  # noqa: F401  (the local authorization server)
from test_oauth import free_port

URL_ENV = "TOOLSMITH_TEST_POSTGRES"
SKIP_ENV = "TOOLSMITH_SKIP_POSTGRES"
KEY = "test-instances-key-0123456789abcdef0123"
PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "test-instances", "version": "1"},
}

pytestmark = pytest.mark.anyio


@pytest.fixture
def database():
    """A URL on a fresh schema of the test database (created by `toolsmith store migrate`),
    dropped afterwards when `psql` is there to do it."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"PostgreSQL tests skipped: {SKIP_ENV}=1 is set")
    base = os.environ.get(URL_ENV)
    if not base:
        pytest.fail(f"the PostgreSQL tests need a database: set {URL_ENV} (e.g. postgres://postgres@127.0.0.1:5432/test), "
                    f"or opt out explicitly with {SKIP_ENV}=1")
    schema = f"ts_py_{os.getpid()}_{time.time_ns() % 10**12}"
    separator = "&" if "?" in base else "?"
    url = f"{base}{separator}options={quote(f'-c search_path={schema}')}"
    out = toolsmith_cli("--store", url, "store", "migrate", env=env())
    assert out.returncode == 0, f"cannot migrate a fresh schema at {URL_ENV}={base}: {out.stderr}"
    yield url
    if shutil.which("psql"):
        subprocess.run(["psql", base, "-qtAc", f"DROP SCHEMA IF EXISTS {schema} CASCADE"], capture_output=True, timeout=30)


def env() -> dict[str, str]:
    return {**os.environ, "TOOLSMITH_STORE_KEY": KEY}


class Instances:
    """Three servers of one binary on one store; `next()` picks them in turn."""

    def __init__(self, argv_of: Any) -> None:
        self.servers = [HttpServer(argv_of(), env()) for _ in range(3)]
        self.turn = 0

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self.servers]

    def stop(self) -> None:
        for s in self.servers:
            s.stop()


@pytest.fixture
def toolsmiths(database: str, tmp_path: Path):
    root = tmp_path / "root"
    root.mkdir()
    argv = [str(TOOLSMITH_BIN), "--store", database, "serve", "--context", json.dumps({"root": str(root)}),
            "--http", "127.0.0.1:0", "--stateless"]
    instances = Instances(lambda: argv)
    instances.root = root
    try:
        yield instances
    finally:
        instances.stop()


@pytest.fixture
def fixtures(database: str):
    argv = [str(MCP_FIXTURE_BIN), "--store", database, "--http", "127.0.0.1:0", "--stateless"]
    instances = Instances(lambda: argv)
    try:
        yield instances
    finally:
        instances.stop()


def call(url: str, name: str, arguments: dict[str, Any], state: str | None = None,
         responses: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """One 2026-07-28 `tools/call` over raw HTTP; the JSON-RPC result (SSE or JSON answer)."""
    message = call_message(url, name, arguments, state, responses, timeout)
    assert "result" in message, message
    return message["result"]


def refused_state(url: str, name: str, arguments: dict[str, Any], state: str, responses: dict[str, Any]) -> None:
    """A `tools/call` bringing a request state whose seal does not verify (forged, edited, another
    tool's or caller's) is refused as invalid params (-32602), the same words whatever it names."""
    message = call_message(url, name, arguments, state, responses)
    error = message.get("error", {})
    assert error.get("code") == -32602 and "not one this server issued" in error.get("message", ""), (state, message)


def call_message(url: str, name: str, arguments: dict[str, Any], state: str | None = None,
                 responses: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """One 2026-07-28 `tools/call` over raw HTTP; the JSON-RPC answer (SSE or JSON)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": META}
    if state is not None:
        params |= {"requestState": state, "inputResponses": responses}
    headers = {"MCP-Protocol-Version": PROTOCOL, "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = httpx.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                   timeout=timeout)
    return jsonrpc_answer(r)


def request(url: str, method: str, name: str, params: dict[str, Any], token: str) -> dict[str, Any]:
    """One 2026-07-28 request with a bearer token over raw HTTP; the JSON-RPC message it is
    answered with (a result or an error)."""
    headers = {"MCP-Protocol-Version": PROTOCOL, "Mcp-Method": method, "Mcp-Name": name, "Authorization": f"Bearer {token}",
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    return jsonrpc_answer(httpx.post(url, headers=headers, json=body, timeout=30.0))


def token_for(auth: AuthServer, url: str, subject: str) -> str:
    """An access token of `auth` for `subject`, meant for the instance at `url`."""
    claims = {"iss": auth.issuer, "sub": subject, "aud": url, "scope": "mcp", "exp": int(time.time()) + 300}
    return jwt.encode(claims, auth.key, algorithm="RS256", headers={"kid": auth.kid})


def text(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []))


def pending(database: str) -> list[dict[str, Any]]:
    out = toolsmith_cli("--store", database, "pending", "--json", env=env())
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_approval_started_on_a_approved_on_b_resolved_on_c(toolsmiths, database):
    a, b, c = toolsmiths.urls
    (toolsmiths.root / "x.txt").write_text("old")
    args = {"path": "x.txt", "content": "new!", "overwrite": True}
    asked = call(a, "write-file", args)
    assert asked["resultType"] == "input_required", asked
    state = asked["requestState"]
    assert "approval" in asked["inputRequests"], asked
    # The state is the waiting call's id, sealed (with the tool) by the key the instances share.
    call_id, tag = state.rsplit(".", 1)
    assert [p["tool_call_id"] for p in pending(database)] == [call_id] and len(tag) == 64
    assert (toolsmiths.root / "x.txt").read_text() == "old"

    approve = {"approval": {"action": "accept", "content": {"approved": True}}}
    done = call(b, "write-file", args, state, approve)
    assert done.get("structuredContent") == {"path": "x.txt", "bytes_written": 4, "created": False}, done
    assert (toolsmiths.root / "x.txt").read_text() == "new!"

    # On C the call is resolved: approving it again is refused and runs nothing.
    again = call(c, "write-file", args, state, approve)
    assert again.get("isError") and "waits for an answer as" in text(again), again
    assert pending(database) == []


def test_suspended_call_resumed_on_another_instance(toolsmiths, database):
    a, b, _ = toolsmiths.urls
    (toolsmiths.root / "y.txt").write_text("old")
    args = {"path": "y.txt", "content": "newer"}
    asked = call(a, "write-file", args)
    assert asked["resultType"] == "input_required", asked
    assert "resume" in asked["inputRequests"], asked
    [waiting] = pending(database)
    assert waiting["kind"] == "suspended"

    done = call(b, "write-file", args, asked["requestState"], {"resume": {"action": "accept", "content": {"overwrite": True}}})
    assert done.get("structuredContent") == {"path": "y.txt", "bytes_written": 5, "created": False}, done
    assert (toolsmiths.root / "y.txt").read_text() == "newer"
    assert pending(database) == []


def edited(name):
    """`name` with its last character changed (a random id may already end in `0`)."""
    return name[:-1] + ("1" if name.endswith("0") else "0")


def test_waiting_call_states_are_sealed(toolsmiths, database):
    """A waiting call's request state is its id sealed with the tool: a bare id (as `toolsmith
    pending` lists it), an edited seal, or the state brought to another tool is refused, and the
    call keeps waiting; the genuine state still approves it."""
    a, b, c = toolsmiths.urls
    (toolsmiths.root / "s.txt").write_text("old")
    args = {"path": "s.txt", "content": "sealed", "overwrite": True}
    state = call(a, "write-file", args)["requestState"]
    call_id, tag = state.rsplit(".", 1)
    approve = {"approval": {"action": "accept", "content": {"approved": True}}}
    for bad in [call_id, f"{call_id}.{'0' * len(tag)}", f"{edited(call_id)}.{tag}"]:
        refused_state(b, "write-file", args, bad, approve)
    refused_state(b, "text-stats", {"text": "x"}, state, approve)
    assert (toolsmiths.root / "s.txt").read_text() == "old"
    assert [p["tool_call_id"] for p in pending(database)] == [call_id], "still waiting"
    done = call(c, "write-file", args, state, approve)
    assert done.get("structuredContent", {}).get("path") == "s.txt", done
    assert (toolsmiths.root / "s.txt").read_text() == "sealed"


def test_elicitation_mid_call_answered_through_other_instances(fixtures):
    a, b, c = fixtures.urls
    first = call(a, "ask_twice", {})
    assert first["resultType"] == "input_required", first
    # The state names the instance holding the run (A) and is sealed.
    state = first["requestState"]
    second = call(b, "ask_twice", {}, state, {"input": {"action": "accept", "content": {"first": "one"}}})
    assert second["resultType"] == "input_required", second
    assert "second" in json.dumps(second["inputRequests"])
    done = call(c, "ask_twice", {}, second["requestState"], {"input": {"action": "accept", "content": {"second": "two"}}})
    assert text(done) == "answers: one, two", done
    assert not done.get("isError")


def test_forged_or_redirected_states_are_refused(fixtures):
    a, b, _ = fixtures.urls
    state = call(a, "ask_twice", {})["requestState"]
    key, instance, tag = state.split(".")
    answer = {"input": {"action": "accept", "content": {"first": "x"}}}
    forged = [f"{key}.{instance}.{'0' * len(tag)}", f"{edited(key)}.{instance}.{tag}",
              f"{key}.00000000-0000-0000-0000-000000000000.{tag}"]
    for bad in forged:
        refused_state(b, "ask_twice", {}, bad, answer)
    # Another tool cannot take the answer either (the tool is sealed into the state).
    refused_state(b, "test_elicitation", {"message": "hi"}, state, answer)
    # The genuine state still works.
    going = call(b, "ask_twice", {}, state, answer)
    assert going["resultType"] == "input_required", going


def test_answer_for_a_killed_instance_is_a_clear_error(fixtures):
    a, b, _ = fixtures.urls
    state = call(a, "ask_twice", {})["requestState"]
    fixtures.servers[0].proc.send_signal(signal.SIGKILL)
    fixtures.servers[0].proc.wait(timeout=10)
    started = time.monotonic()
    gone = call(b, "ask_twice", {}, state, {"input": {"action": "accept", "content": {"first": "x"}}})
    assert gone.get("isError"), gone
    assert "which is gone" in text(gone) and "Call `ask_twice` again" in text(gone), gone
    # Bounded by the acknowledgement wait (5 s), not by a client timeout.
    assert time.monotonic() - started < 25


async def test_list_changed_reaches_clients_of_every_instance(fixtures):
    events: list[list[Any]] = [[], [], []]
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(fixtures.urls[0], "auto") as c0, connect(fixtures.urls[1], "auto") as c1, \
                connect(fixtures.urls[2], "auto") as c2:
            clients = [c0, c1, c2]
            async with c0.listen(tools_list_changed=True) as s0, c1.listen(tools_list_changed=True) as s1, \
                    c2.listen(tools_list_changed=True) as s2:

                async def first(i: int, sub: Any) -> None:
                    async for event in sub:
                        events[i].append(event)
                        return

                async with anyio.create_task_group() as tg:
                    for i, sub in enumerate([s0, s1, s2]):
                        tg.start_soon(first, i, sub)
                    await clients[1].call_tool("add_tool", {})
    for i, got in enumerate(events):
        assert got and isinstance(got[0], ToolsListChanged), (i, events)


def test_a_result_cut_on_one_instance_is_read_on_another_by_its_owner_only(
    database: str, auth_server: AuthServer  # noqa: F811
) -> None:
    """Kept results live in the store: the link a call on A returns resolves on B for the same
    OAuth subject (each instance its own resource URI, so each token is for one instance), and
    another subject is refused on C, learning nothing of the result."""

    def argv() -> list[str]:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        return [str(TOOLSMITH_BIN), "--store", database, "serve", "--http", f"127.0.0.1:{port}", "--stateless",
                "--auth-issuer", auth_server.issuer, "--auth-resource", resource, "--max-model-output", "48"]

    instances = Instances(argv)
    try:
        a, b, c = instances.urls
        weather = {"name": "weather-tool", "arguments": {"location": "Seattle"}}
        called = request(a, "tools/call", "weather-tool", weather, token_for(auth_server, a, "alice"))
        assert "result" in called, called
        result = called["result"]
        links = [c["uri"] for c in result.get("content", []) if c.get("type") == "resource_link"]
        assert not result.get("isError") and links and links[-1].startswith("toolsmith://results/"), result
        uri = links[-1]

        read = request(b, "resources/read", uri, {"uri": uri}, token_for(auth_server, b, "alice"))
        assert "result" in read, read
        whole = "".join(part.get("text", "") for part in read["result"]["contents"])
        # The model saw a cut (the location left out); the link gives it whole, on another instance.
        assert "left out here" in text(result) and '"location":"Seattle"' not in text(result), result
        assert '"location":"Seattle"' in whole and "sunny" in whole, read

        refused = request(c, "resources/read", uri, {"uri": uri}, token_for(auth_server, c, "mallory"))
        unknown_uri = uri[:-1] + ("1" if uri.endswith("0") else "0")
        unknown = request(c, "resources/read", unknown_uri, {"uri": unknown_uri}, token_for(auth_server, c, "mallory"))
        assert "error" in refused and "not kept here" in refused["error"]["message"], refused
        # Told exactly what a result that was never kept is told (code and words, the id aside).
        assert refused["error"]["code"] == unknown["error"]["code"], (refused, unknown)
        assert refused["error"]["message"].replace(uri.rsplit("/", 1)[1], "ID") == \
            unknown["error"]["message"].replace(unknown_uri.rsplit("/", 1)[1], "ID"), (refused, unknown)
        assert "sunny" not in str(refused), refused

        status = toolsmith_cli("--store", database, "store", "status", "--json", env=env())
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["kept_results"] == 1, status.stdout
    finally:
        instances.stop()


def test_health_reports_the_store(fixtures):
    for url in fixtures.urls:
        r = httpx.get(url.removesuffix("/mcp") + "/healthz", timeout=10)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["status"] == "ok" and body["store"] == "ok", body
        assert body["instance"], body
    ids = {httpx.get(u.removesuffix("/mcp") + "/healthz", timeout=10).json()["instance"] for u in fixtures.urls}
    assert len(ids) == 3, ids

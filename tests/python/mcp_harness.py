"""Helpers for the MCP end-to-end tests: the binaries, servers started as subprocesses, a bounded
client connection, and the exceptions that name the server bugs the tests know about.

Every wait here has a deadline; nothing sleeps to decide an outcome.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pydantic
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
TOOLSMITH_BIN = Path(os.environ.get("TOOLSMITH_BIN") or REPO / "target" / "debug" / "toolsmith")
MCP_FIXTURE_BIN = Path(os.environ.get("MCP_FIXTURE_BIN") or REPO / "target" / "debug" / "mcp_fixture")

# Seconds. A debug build on a busy 2-core machine starts in well under a second; these are ceilings.
STARTUP_TIMEOUT = 20.0  # an HTTP server prints its address
REQUEST_TIMEOUT = 20.0  # one MCP request
TEST_TIMEOUT = 60.0  # a whole test body
STDIO_PROBE_TIMEOUT = 10.0  # `toolsmith serve --stdio` answers `initialize`

URL_RE = re.compile(r"(https?://\S+/mcp)\b")


# --------------------------------------------------------------------------------------------
# Server bugs these tests found (all fixed). A test that hits one again raises the matching
# exception, so the failure names the bug and its repro.


class StdioServerHung(AssertionError):
    """`toolsmith serve --stdio` never answers a request.

    `tool_core::cli::run_from` takes `std::io::stdout().lock()` (and stderr's) for the whole
    command; `mcp::stdio::serve` writes through `tokio::io::stdout()`, whose blocking-pool thread
    then waits on that lock forever. Repro: `printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":
    "initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":
    "x","version":"1"}}}' | toolsmith serve --stdio` prints nothing (a gdb backtrace shows the
    writer in `Stdout::lock`); the in-process `serve_io` tests do not see it.
    """


class MissingResultType(AssertionError):
    """A 2026-07-28 `tools/call` result without `resultType`.

    `McpServer::result` builds its `CallToolResult` with `serde_json::from_value`, which leaves
    `result_type: None`, and rmcp only fills cache hints for 2026 peers. Repro (HTTP, stateless):
    POST `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":
    {"expression":"1+2"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{}}}}` with `MCP-Protocol-Version: 2026-07-28`,
    `Mcp-Method: tools/call`, `Mcp-Name: calculate` answers `{"content":[...],"structuredContent":
    {...}}` with no `resultType`; the Python client rejects it (`CallToolResult.resultType Field
    required`). Error results (`CallToolResult::error`) do carry it.
    """


class StructuredContentViolatesSchema(AssertionError):
    """A non-error result whose `structuredContent` does not match the tool's `outputSchema`.

    Declining an approval of `write-file` answers `{"content":[{"type":"text","text":"Tool call
    was not approved by the user. Reason: ..."}, {"type":"text","text":"{...}"}],
    "structuredContent":{"approved":false,"message":"...","reason":"..."}}` without `isError`,
    so the client validates it against write-file's outputSchema (`path`, `bytes_written`,
    `created` required) and raises `Invalid structured content returned by tool write-file`.
    """


# Short names of those bugs; the details (and a repro) are in the docstrings above.
BUG_STDIO_DEADLOCK = "stdio deadlock: `toolsmith serve --stdio` never answers (stdout stays locked by the CLI)"
BUG_RESULT_TYPE = "2026-07-28: a successful tools/call result has no resultType"
BUG_DECLINE_SCHEMA = "a declined approval's structuredContent does not match the tool's outputSchema"


# --------------------------------------------------------------------------------------------
# Servers


class HttpServer:
    """A server started with `--http 127.0.0.1:0`; its URL (`http://` or, with TLS, `https://`) is
    read from its standard error."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.lines: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            errors="replace",
        )
        # Drain standard error for the server's whole life, so it never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        self.url = self._wait_for_url()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                self.stop()
                raise RuntimeError(f"{self.argv} exited ({self.proc.returncode}) before serving: {self.stderr()}")
            if m := URL_RE.search(line):
                return m.group(1)
        self.stop()
        raise TimeoutError(f"{self.argv} printed no `http://…/mcp` within {STARTUP_TIMEOUT}s: {self.stderr()}")

    def stderr(self) -> str:
        return "\n".join(self.lines[-40:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


class Servers:
    """Starts servers for one test: each with its own port, its own `--store` and `--context` root."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.root = tmp / "root"
        self.root.mkdir()
        self.store = tmp / "pending.sqlite3"
        self.http: list[HttpServer] = []

    def toolsmith_args(self, *extra: str, context: bool = True) -> list[str]:
        args = ["--store", str(self.store), "serve"]
        if context:
            args += ["--context", json.dumps({"root": str(self.root)})]
        return args + list(extra)

    def toolsmith(self, transport: str, *extra: str, env: dict[str, str] | None = None) -> Any:
        """A `Client` target for `toolsmith serve` over `transport` ("stdio" or "http")."""
        if transport == "stdio":
            return StdioServerParameters(
                command=str(TOOLSMITH_BIN), args=self.toolsmith_args("--stdio", *extra), env=env
            )
        return self.start_http([str(TOOLSMITH_BIN), *self.toolsmith_args("--http", "127.0.0.1:0", *extra)], env).url

    def fixture(self, transport: str, env: dict[str, str] | None = None) -> Any:
        """A `Client` target for `mcp_fixture` over `transport`."""
        if not MCP_FIXTURE_BIN.exists():
            raise FileNotFoundError(
                f"{MCP_FIXTURE_BIN} is missing: build it with `cargo build -p examples --bin mcp_fixture`"
            )
        if transport == "stdio":
            return StdioServerParameters(command=str(MCP_FIXTURE_BIN), args=["--stdio"], env=env)
        return self.start_http([str(MCP_FIXTURE_BIN), "--http", "127.0.0.1:0"], env).url

    def start_http(self, argv: list[str], env: dict[str, str] | None = None) -> HttpServer:
        full_env = None if env is None else {**os.environ, **env}
        server = HttpServer(argv, full_env)
        self.http.append(server)
        return server

    def stop(self) -> None:
        for s in self.http:
            s.stop()


def toolsmith_cli(*args: str, timeout: float = 30.0, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the `toolsmith` command line (not a server) and returns its output."""
    return subprocess.run(
        [str(TOOLSMITH_BIN), *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env
    )


def stdio_answers_initialize(store: Path) -> tuple[bool, str]:
    """Whether `toolsmith serve --stdio` answers an `initialize` line at all within
    STDIO_PROBE_TIMEOUT, and the line it wrote (any answer counts: the tests judge its content)."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
    }
    proc = subprocess.Popen(
        [str(TOOLSMITH_BIN), "--store", str(store), "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    got: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        got.put(proc.stdout.readline())

    threading.Thread(target=read, daemon=True).start()
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(init) + "\n")
        proc.stdin.flush()
        try:
            line = got.get(timeout=STDIO_PROBE_TIMEOUT)
        except queue.Empty:
            return False, f"no answer to `{json.dumps(init)}` within {STDIO_PROBE_TIMEOUT}s"
        return True, line.strip() or "standard output closed without an answer"
    finally:
        proc.kill()
        proc.wait(timeout=5)


# --------------------------------------------------------------------------------------------
# Client


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        out.extend(_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])
    return out


@asynccontextmanager
async def connect(target: Any, mode: str, **kwargs: Any) -> AsyncIterator[Client]:
    """`Client(target, mode=mode, ...)`, raising the one error inside its task groups' exception
    groups (so a test fails with the exception that happened, not a wrapper)."""
    kwargs.setdefault("read_timeout_seconds", REQUEST_TIMEOUT)
    try:
        async with Client(target, mode=mode, **kwargs) as client:
            yield client
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1 and isinstance(leaves[0], Exception):
            raise leaves[0]
        raise


async def call(client: Client, name: str, arguments: dict[str, Any], **kwargs: Any) -> Any:
    """`client.call_tool`, with the known server bugs raised as their own exceptions."""
    try:
        return await client.call_tool(name, arguments, **kwargs)
    except pydantic.ValidationError as e:
        if "resultType" in str(e) and "Field required" in str(e):
            raise MissingResultType(f"{BUG_RESULT_TYPE}\n{e}") from e
        raise
    except RuntimeError as e:
        if "Invalid structured content" in str(e):
            raise StructuredContentViolatesSchema(f"{e}") from e
        raise


def dump(model: Any) -> Any:
    """A pydantic model as the JSON the server sent (wire names, absent fields left out)."""
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def jsonrpc_answer(response: Any) -> dict[str, Any]:
    """The JSON-RPC answer of a raw HTTP POST (an `httpx` response): the body when it is JSON, the
    last `data:` event naming an id when it is an SSE stream. Asserts a 200."""
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        answers = [line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line]
        assert answers, text
        text = answers[-1]
    return json.loads(text)

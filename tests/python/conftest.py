"""Fixtures for the MCP end-to-end tests (see mcp_harness.py for the helpers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from mcp_harness import MCP_FIXTURE_BIN, TOOLSMITH_BIN, Servers, stdio_answers_initialize, toolsmith_cli


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"toolsmith: {TOOLSMITH_BIN}", f"mcp_fixture: {MCP_FIXTURE_BIN}"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _toolsmith_built() -> None:
    if not TOOLSMITH_BIN.exists():
        pytest.exit(f"{TOOLSMITH_BIN} is missing: build it with `cargo build -p examples --bin toolsmith`", returncode=1)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Servers]:
    """Starts servers for one test (own ports, own store and context root) and stops them after."""
    s = Servers(tmp_path)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="session")
def toolsmith_stdio(tmp_path_factory: pytest.TempPathFactory) -> tuple[bool, str]:
    """(answers, what it said): one bounded look at whether `toolsmith serve --stdio` answers at all,
    so that the stdio tests fail at once instead of each waiting out a timeout when it does not."""
    return stdio_answers_initialize(tmp_path_factory.mktemp("stdio-probe") / "pending.sqlite3")


@pytest.fixture(scope="session")
def catalog() -> dict[str, dict]:
    """`toolsmith catalog --format mcp`, by tool name."""
    out = toolsmith_cli("catalog", "--format", "mcp")
    assert out.returncode == 0, out.stderr
    return {t["name"]: t for t in json.loads(out.stdout)["tools"]}


@pytest.fixture(scope="session")
def task_support() -> dict[str, str]:
    """Each background tool's MCP `taskSupport`, by id, read from `toolsmith catalog --format
    toolsmith` (its `background` settings): `required` or `optional`."""
    out = toolsmith_cli("catalog", "--format", "toolsmith")
    assert out.returncode == 0, out.stderr
    tools = json.loads(out.stdout)["tools"]
    return {t["id"]: "required" if t["background"].get("required") else "optional"
            for t in tools if (t.get("background") or {}).get("enabled")}

"""Chaos on several instances (issue 13): three `toolsmith_ledger serve --http --stateless --store
postgres://…` processes (the `toolsmith` command line plus the ledger tools, see
examples/src/bin/toolsmith_ledger.rs) on one fresh schema; a killer sends SIGKILL to a random
instance every 200–400 ms and restarts it on the same port, at least 100 times, while clients
send each request to a random instance (retrying on another when theirs died): they start calls
that need approval and approve, decline or leave them; start calls that suspend and resume or
leave them; and queue background tasks (some fail on purpose) with `max_retries = 4`.

Every effect is one row in a PostgreSQL table (the ledger), keyed by the call's key. After the
kills stop, the instances settle: a decision whose answer was lost is sent again; a call left
*interrupted* by a killed instance (claimed, its run cut short) gets the explicit decision the
the guide asks for (`call ID --approve --rerun`, `resume ID DATA --rerun`, `call ID --decline`);
then:

- every call reported as waiting and left undecided is still listed, waiting; the only other
  waiting calls are ones whose start request was cut off (at most one per cut-off start);
- every approved or resumed call's key is in the ledger exactly once; no declined, undecided
  or cut-off call's key is there at all;
- every background task ended `completed` (its key exactly once) or `failed` after all its
  attempts (`max_retries + 1`): a task failing on purpose has no row, and one whose attempts
  all died with their instances has at most one. "Twice" means a second row: an attempt cut
  short by a kill counts as an attempt (it may have had its effect before dying), and the
  tool's receipt (`idempotent = "recover"`) makes the next attempt look its row up instead of
  appending again.

`TOOLSMITH_TEST_POSTGRES` names the database; without it the test FAILS unless
`TOOLSMITH_SKIP_POSTGRES=1` opts out. Bounded: the kill phase at most 75 s, settling at most
60 s, each request 15 s.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from mcp_harness import REPO
from test_instances import KEY, META, PROTOCOL, database, env  # noqa: F401 (`database` is a fixture)

LEDGER_BIN = Path(os.environ.get("TOOLSMITH_LEDGER_BIN") or REPO / "target" / "debug" / "toolsmith_ledger")

KILLS = 100  # at least this many SIGKILLs
KILL_EVERY = (0.2, 0.4)  # seconds between two kills
KILL_PHASE_LIMIT = 75.0  # seconds the kills may take in all
SETTLE_LIMIT = 60.0  # seconds the instances may take to settle afterwards
REQUEST_TIMEOUT = 15.0  # one HTTP request
RETRY_FOR = 30.0  # seconds a client keeps retrying one request on other instances
CLIENTS = 4
INSTANCE_LEASE = "4"  # seconds: a killed instance's claims read as interrupted this long after
TASK_LEASE = "2"  # seconds: a killed instance's task is taken over this long after
MAX_RETRIES = 4  # `ledger_task`'s background(max_retries = 4)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Instance:
    """One `serve` process on a fixed port, killed and restarted in place; its standard error
    appended to a log file."""

    def __init__(self, argv: list[str], port: int, log: Path) -> None:
        self.argv, self.port, self.log = argv, port, log
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                         env=env())

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def serving(self) -> bool:
        try:
            return httpx.get(self.url.removesuffix("/mcp") + "/healthz", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    def wait_serving(self, deadline: float) -> None:
        """Until `GET /healthz` answers 200, restarting the process when it exited (a restart can
        lose the race for its port against the kernel releasing it)."""
        while not self.serving():
            assert time.monotonic() < deadline, f"{self.url} does not serve: {self.tail()}"
            if self.proc is None or self.proc.poll() is not None:
                self.start()
            time.sleep(0.2)

    def tail(self) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])
        except OSError:
            return "(no log)"


@dataclass
class Flow:
    """One call of a client: its key, tool, call id once reported, and what was decided."""

    key: str
    tool: str
    state: str | None = None  # the request state the client carries (the call id, sealed)
    call_id: str | None = None
    decision: str | None = None  # approve, decline, resume, leave
    settled: bool = False  # the decision's answer arrived (or, after the chaos, was made to)
    answers: list[str] = field(default_factory=list)


@dataclass
class Ledger:
    """What the clients did, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    flows: list[Flow] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {fail, answer}
    cut_starts: int = 0  # start requests whose answer was lost (a call may exist unreported)
    lost: int = 0  # requests lost to a dead instance
    errors: list[str] = field(default_factory=list)


def post(url: str, name: str, arguments: dict[str, Any], state: str | None, responses: dict[str, Any] | None,
         rpc_id: int) -> dict[str, Any]:
    """One 2026-07-28 `tools/call` over raw HTTP: the JSON-RPC message (SSE or JSON answer)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": META}
    if state is not None:
        params |= {"requestState": state, "inputResponses": responses}
    headers = {"MCP-Protocol-Version": PROTOCOL, "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": "tools/call", "params": params}
    r = httpx.post(url, headers=headers, json=body, timeout=REQUEST_TIMEOUT)
    if r.status_code != 200:
        raise httpx.TransportError(f"HTTP {r.status_code}: {r.text[:200]}")
    text = r.text
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        answers = [line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line]
        if not answers:  # the stream ended before the answer: the instance died mid-call
            raise httpx.TransportError(f"no answer in the event stream: {text[:200]}")
        text = answers[-1]
    return json.loads(text)


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result.get("content", []))


class Client(threading.Thread):
    """Runs flows until told to stop, each request to a random instance, retried elsewhere."""

    def __init__(self, n: int, instances: list[Instance], ledger: Ledger, stop: threading.Event) -> None:
        super().__init__(daemon=True, name=f"client-{n}")
        self.n, self.instances, self.ledger, self.stop = n, instances, ledger, stop
        self.rng = random.Random(n * 7919 + os.getpid())
        self.count = 0

    def one_try(self, name: str, arguments: dict[str, Any], state: str | None = None,
                responses: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """One request to a random instance: its JSON-RPC result (an error object as an error
        result), or `None` when the instance died (or was down) before answering."""
        self.count += 1
        url = self.rng.choice(self.instances).url
        try:
            message = post(url, name, arguments, state, responses, self.n * 1_000_000 + self.count)
        except (httpx.TransportError, json.JSONDecodeError):
            with self.ledger.lock:
                self.ledger.lost += 1
            time.sleep(0.05)
            return None
        if "result" in message:
            return message["result"]
        return {"isError": True, "content": [{"type": "text", "text": json.dumps(message.get("error"))}]}

    def request(self, name: str, arguments: dict[str, Any], state: str | None = None,
                responses: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, int]:
        """[`one_try`] until an instance answers (bounded): the result and the tries lost."""
        lost, deadline = 0, time.monotonic() + RETRY_FOR
        while time.monotonic() < deadline:
            result = self.one_try(name, arguments, state, responses)
            if result is not None:
                return result, lost
            lost += 1
        return None, lost

    def key(self, kind: str) -> str:
        self.count += 1
        return f"{kind}-{self.n}-{self.count}"

    def run(self) -> None:
        while not self.stop.is_set():
            roll = self.rng.random()
            try:
                if roll < 0.4:
                    self.waiting_flow("ledger_approve", "approval")
                elif roll < 0.7:
                    self.waiting_flow("ledger_suspend", "resume")
                else:
                    self.task_flow()
            except Exception as e:  # noqa: BLE001 (reported by the test, not lost in a thread)
                with self.ledger.lock:
                    self.ledger.errors.append(f"{self.name}: {e!r}")
                return

    def waiting_flow(self, tool: str, asked: str) -> None:
        flow = Flow(self.key(tool.removeprefix("ledger_")), tool)
        with self.ledger.lock:
            self.ledger.flows.append(flow)
        result, lost = self.request(tool, {"key": flow.key})
        if lost:
            with self.ledger.lock:
                self.ledger.cut_starts += lost
        if result is None:
            return
        assert result.get("resultType") == "input_required" and asked in result.get("inputRequests", {}), (tool, result)
        flow.state = result["requestState"]
        flow.call_id = flow.state.rsplit(".", 1)[0]
        roll = self.rng.random()
        if tool == "ledger_approve":
            flow.decision = "approve" if roll < 0.55 else "decline" if roll < 0.8 else "leave"
        else:
            flow.decision = "resume" if roll < 0.8 else "leave"
        if flow.decision != "leave":
            settle_decision(self, flow)

    def task_flow(self) -> None:
        """Queues a background task and waits for its end (the MCP answer is the task's result);
        a try lost to a dead instance may have queued its task, so the next try uses a new key."""
        fail, sleep_ms = self.rng.random() < 0.15, self.rng.randrange(0, 600)
        deadline = time.monotonic() + RETRY_FOR
        while time.monotonic() < deadline:
            key = self.key("task")
            with self.ledger.lock:
                self.ledger.tasks[key] = {"fail": fail, "answer": None}
            result = self.one_try("ledger_task", {"key": key, "sleep_ms": sleep_ms, "fail": fail})
            if result is not None:
                ran = result.get("structuredContent", {}).get("key") == key
                with self.ledger.lock:
                    self.ledger.tasks[key]["answer"] = "completed" if ran else text_of(result)[:300]
                return


def answer_for(flow: Flow) -> dict[str, Any]:
    if flow.decision == "approve":
        return {"approval": {"action": "accept", "content": {"approved": True}}}
    if flow.decision == "decline":
        return {"approval": {"action": "accept", "content": {"approved": False, "reason": "chaos says no"}}}
    return {"resume": {"action": "accept", "content": {"go": True}}}


def settle_decision(client: Client, flow: Flow) -> None:
    """Sends the flow's decision (from random instances) and records how it was answered: run
    (its output), declined, or already resolved (an earlier try whose answer was lost)."""
    result, _ = client.request(flow.tool, {"key": flow.key}, flow.state, answer_for(flow))
    if result is None:
        return
    said = text_of(result)
    flow.answers.append(said[:300])
    ran = result.get("structuredContent", {}).get("key") == flow.key
    declined = flow.decision == "decline" and "chaos says no" in said
    flow.settled = ran or declined


def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LEDGER_BIN), *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env())


def pending(url: str) -> dict[str, dict[str, Any]]:
    out = cli("--store", url, "pending", "--json")
    assert out.returncode == 0, out.stderr
    return {p["tool_call_id"]: p for p in json.loads(out.stdout)}


def tasks(url: str) -> list[dict[str, Any]]:
    out = cli("--store", url, "tasks", "list", "--json", "--limit", "100000")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def ledger_rows(context: str) -> list[dict[str, Any]]:
    out = cli("call", "ledger_rows", "{}", "--context", context)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def settle_interrupted(url: str, flow: Flow) -> None:
    """The explicit decision a call interrupted by a killed instance needs (the guide: never run
    again silently): approve or resume with `--rerun`, or decline."""
    if flow.decision == "approve":
        out = cli("--store", url, "call", flow.call_id, "--approve", "--rerun")
    elif flow.decision == "resume":
        out = cli("--store", url, "resume", flow.call_id, '{"go": true}', "--rerun")
    else:
        out = cli("--store", url, "call", flow.call_id, "--decline", "chaos says no")
    flow.answers.append(f"rerun: {out.returncode} {out.stdout[-200:]} {out.stderr[-200:]}")


def settle(url: str, client: Client, ledger: Ledger, deadline: float) -> None:
    """Brings every decided call to its end: resent while it waits, rerun (explicitly) once
    interrupted, left alone while its instance runs it, done once it is gone from the store."""
    open_flows = [f for f in ledger.flows if f.call_id and f.decision not in (None, "leave") and not f.settled]
    while open_flows:
        assert time.monotonic() < deadline, [(f.key, f.answers) for f in open_flows]
        listed = pending(url)
        for flow in open_flows:
            row = listed.get(flow.call_id)
            if row is None:
                flow.settled = True
            elif row["state"] == "waiting":
                settle_decision(client, flow)
            elif row["state"] == "interrupted":
                settle_interrupted(url, flow)
        open_flows = [f for f in open_flows if not f.settled]
        time.sleep(0.5)


def test_kill_instances_while_clients_decide_and_tasks_run(database, tmp_path: Path):  # noqa: F811
    url = database
    context = json.dumps({"ledger_url": url, "ledger_table": "chaos_ledger"})
    assert ledger_rows(context) == [], "a fresh ledger"
    instances = []
    for i in range(3):
        port = free_port()
        argv = [str(LEDGER_BIN), "--store", url, "serve", "--http", f"127.0.0.1:{port}", "--stateless", "--context",
                context, "--instance-lease", INSTANCE_LEASE, "--task-lease", TASK_LEASE]
        instances.append(Instance(argv, port, tmp_path / f"instance-{i}.log"))
    ledger, stop = Ledger(), threading.Event()
    clients = [Client(n, instances, ledger, stop) for n in range(CLIENTS)]
    try:
        started = time.monotonic()
        for inst in instances:
            inst.start()
        for inst in instances:
            inst.wait_serving(started + 30)
        for c in clients:
            c.start()

        # The killer: SIGKILL a random instance, restart it on its port, every 200–400 ms.
        rng, kills, began = random.Random(), 0, time.monotonic()
        while kills < KILLS:
            assert time.monotonic() - began < KILL_PHASE_LIMIT, f"only {kills} kills in {KILL_PHASE_LIMIT} s"
            time.sleep(rng.uniform(*KILL_EVERY))
            victim = rng.choice(instances)
            victim.kill()
            victim.start()
            kills += 1
        chaos_took = time.monotonic() - began

        # Settle: every instance serves again, the clients finish the flow they are in.
        deadline = time.monotonic() + SETTLE_LIMIT
        for inst in instances:
            inst.wait_serving(deadline)
        stop.set()
        for c in clients:
            c.join(timeout=max(1.0, deadline - time.monotonic()))
            assert not c.is_alive(), f"{c.name} did not finish its flow"
        assert not ledger.errors, ledger.errors
        settle(url, clients[0], ledger, deadline)
        while any(t["state"] not in ("completed", "failed") for t in tasks(url)):
            assert time.monotonic() < deadline, [t for t in tasks(url) if t["state"] not in ("completed", "failed")]
            time.sleep(0.5)
    finally:
        stop.set()
        for inst in instances:
            inst.kill()

    flows, listed, stored_tasks, rows = ledger.flows, pending(url), tasks(url), ledger_rows(context)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["key"]] = counts.get(row["key"], 0) + 1
    report = (f"{kills} kills in {chaos_took:.1f} s; {len(flows)} calls, {len(stored_tasks)} tasks, "
              f"{ledger.lost} requests lost to dead instances, {ledger.cut_starts} starts cut off")
    print(report)
    dump = os.environ.get("TOOLSMITH_CHAOS_DUMP")
    if dump:  # for a person looking into a failure: everything the assertions below read
        Path(dump).write_text(json.dumps({"rows": rows, "flows": [f.__dict__ for f in flows], "tasks": stored_tasks,
                                          "client_tasks": ledger.tasks, "pending": listed}, indent=1))

    # The chaos was real: work went on across many kills.
    decided = [f for f in flows if f.settled]
    assert len(decided) >= 10 and len(stored_tasks) >= 10 and ledger.lost >= 10, report

    # Nothing ran twice.
    twice = {k: n for k, n in counts.items() if n > 1}
    assert not twice, (twice, report)

    # Every waiting call reported and left undecided is still listed, waiting; nothing else
    # waits but calls whose start was cut off; nothing is left running or interrupted.
    left = {f.call_id: f for f in flows if f.decision == "leave"}
    for call_id, flow in left.items():
        assert call_id in listed and listed[call_id]["state"] == "waiting", (flow, listed.get(call_id))
        assert listed[call_id]["tool_name"] == flow.tool
    others = [p for cid, p in listed.items() if cid not in left]
    assert all(p["state"] == "waiting" for p in others), others
    assert len(others) <= ledger.cut_starts, (others, report)

    # Approved and resumed calls ran exactly once; declined, undecided and unreported ones never.
    for flow in flows:
        ran = counts.get(flow.key, 0)
        if flow.decision in ("approve", "resume"):
            assert ran == 1, (flow, ran)
        else:
            assert ran == 0, (flow, ran)

    # Every task ended: completed with its row once, or failed after all its attempts; a client
    # that was answered was told how it ended.
    by_key = {t["args"]["key"]: t for t in stored_tasks}
    assert len(stored_tasks) == len(by_key), "one task per key"
    for key, task in by_key.items():
        assert key in ledger.tasks, f"a task nobody queued: {task}"
        ran, mine = counts.get(key, 0), ledger.tasks[key]
        if task["state"] == "completed":
            assert ran == 1 and not mine["fail"], (task, ran)
            assert mine["answer"] in (None, "completed"), (task, mine)
        else:
            assert task["state"] == "failed" and task["attempts"] == MAX_RETRIES + 1, task
            assert ran <= (0 if mine["fail"] else 1), (task, ran)
            assert mine["answer"] != "completed", (task, mine)
    answered = [k for k, v in ledger.tasks.items() if v["answer"] is not None]
    assert all(k in by_key for k in answered), "every answered task is stored"
    assert any(t["state"] == "completed" for t in stored_tasks), report
    assert any(t["state"] == "failed" for t in stored_tasks), report

    # Every row is one of ours.
    known = {f.key for f in flows} | set(ledger.tasks)
    assert set(counts) <= known, set(counts) - known

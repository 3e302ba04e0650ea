"""Start-up time of an MCP server: from spawning the process to the first answered stateless
`tools/call` (`echo`, or STARTUP_CALL; JSON answer) over loopback HTTP, sent as soon as the server
says on stderr that it listens (`serving MCP on ...`: every server here prints it once bound), so
neither polling's steps nor a poller's CPU are part of the time. Standard
library only. Used by startup.sh.

    python3 startup.py RUNS TOOLS COMMAND... (the word ADDR in COMMAND becomes 127.0.0.1:PORT)

Prints one JSON line: {"runs": [...ms], "median_ms": ..., "rss_kib": ...} (the RSS is the
process's after its first answer, from the last run).
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time

# The call: `echo` by default; STARTUP_CALL='{"name": ..., "arguments": ...}' for another tool.
CALL = json.loads(os.environ.get("STARTUP_CALL", '{"name": "echo", "arguments": {"text": "hello"}}'))
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL})
HEADERS = {
    "Host": "localhost",
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answered(port):
    """Whether the server answered the call (False while it does not listen yet)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/mcp", BODY, HEADERS)
        response = conn.getresponse()
        body = response.read()
        conn.close()
    except OSError:
        return False
    if response.status != 200 or b'"result"' not in body or b'"isError":true' in body:
        sys.exit(f"the server answered {response.status}: {body[:300]!r}")
    return True


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def once(command, tools):
    port = free_port()
    argv = [w.replace("ADDR", f"127.0.0.1:{port}") for w in command]
    env = dict(os.environ, TOOLS=str(tools))
    began = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # Blocks until the server writes that it listens (or exits: end of its stderr).
        for line in proc.stderr:
            if b"serving MCP on" in line:
                break
        else:
            sys.exit(f"{argv[0]} exited with {proc.wait()} before it listened")
        if not answered(port):
            sys.exit(f"{argv[0]} said it listens on {port} and refused the connection")
        elapsed = (time.perf_counter() - began) * 1000
        return elapsed, rss_kib(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def main():
    runs, tools, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    times, rss = [], 0
    for _ in range(runs):
        ms, rss = once(command, tools)
        times.append(round(ms, 2))
    print(json.dumps({"runs": times, "median_ms": statistics.median(times), "rss_kib": rss}))


main()

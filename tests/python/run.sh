#!/usr/bin/env bash
# The MCP server end to end through the official Python SDK: builds `toolsmith`, `toolsmith_ledger` and
# `mcp_fixture`, installs the pinned client into a venv kept under the cache directory, and runs
# pytest on tests/python (stdio and Streamable HTTP, the client's `auto` and `legacy` modes).
#
#   bash tests/python/run.sh [PYTEST ARGS...]
#
# TOOLSMITH_CACHE (default ~/.cache/toolsmith) holds the venv; TOOLSMITH_BIN / MCP_FIXTURE_BIN
# point the tests at other binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/py-venv"
source tests/python/venv.sh
ensure_venv "$venv" tests/python/requirements.txt

cargo build -p examples --bin toolsmith --bin mcp_fixture --bin toolsmith_ledger

# No bytecode or cache files in the work tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python "$@"

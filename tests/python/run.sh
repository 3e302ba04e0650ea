#!/usr/bin/env bash
# The MCP server end to end through the official Python SDK: builds `toolsmith` and
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
requirements=tests/python/requirements.txt

# Reuse the venv while its Python still runs; install only when the requirements changed.
if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
if ! cmp -s "$requirements" "$venv/.requirements.txt"; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/.requirements.txt"
fi

cargo build -p examples --bin toolsmith --bin mcp_fixture

# No bytecode or cache files in the work tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python "$@"

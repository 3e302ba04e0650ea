#!/usr/bin/env bash
# The MCP server end to end through the official Python SDK: builds `toolsmith`, `toolsmith_ledger` and
# `mcp_fixture` (unless TOOLSMITH_BIN_DIR holds them), installs the pinned client into a venv kept
# under the cache directory, and runs pytest on tests/python (stdio and Streamable HTTP, the
# client's `auto` and `legacy` modes).
#
#   bash tests/python/run.sh [PYTEST ARGS...]
#
# TOOLSMITH_CACHE (default ~/.cache/toolsmith) holds the venv. The binaries are
# TOOLSMITH_BIN_DIR's, else built here (tests/bins.sh); TOOLSMITH_BIN / MCP_FIXTURE_BIN /
# TOOLSMITH_LEDGER_BIN point the tests at other binaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/bins.sh

venv="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/py-venv"
source tests/python/venv.sh
ensure_venv "$venv" tests/python/requirements.txt

bin_dir=$(bins_dir toolsmith mcp_fixture toolsmith_ledger)
export TOOLSMITH_BIN="${TOOLSMITH_BIN:-$bin_dir/toolsmith}"
export MCP_FIXTURE_BIN="${MCP_FIXTURE_BIN:-$bin_dir/mcp_fixture}"
export TOOLSMITH_LEDGER_BIN="${TOOLSMITH_LEDGER_BIN:-$bin_dir/toolsmith_ledger}"

# No bytecode or cache files in the work tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python "$@"

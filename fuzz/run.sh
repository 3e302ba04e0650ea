#!/usr/bin/env bash
# Fuzzes tool-core's partial JSON parser for a bounded time: bash fuzz/run.sh [SECONDS]
# (default 60). Installs cargo-fuzz if it is missing. Exits non-zero if the target crashes
# (the input is then in fuzz/artifacts/partial_json/; replay it with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run -s none partial_json fuzz/artifacts/partial_json/<file>` in fuzz/).
#
# Environment: FUZZ_SANITIZER (default none: the code under test is safe Rust, and without
# AddressSanitizer the target runs about twice as many inputs; set `address` for ASan).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
sanitizer="${FUZZ_SANITIZER:-none}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# cargo-fuzz passes nightly-only flags (-Z...); only a stable toolchain is installed here.
export RUSTC_BOOTSTRAP=1

mkdir -p corpus/partial_json
start=$(date +%s)
cargo fuzz build --sanitizer "$sanitizer" --debug-assertions partial_json
built=$(date +%s)
# corpus/ is the working corpus (not committed); seeds/ holds the committed starting inputs.
cargo fuzz run --sanitizer "$sanitizer" --debug-assertions partial_json corpus/partial_json seeds/partial_json -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=8192 -dict=partial_json.dict -print_final_stats=1
echo "fuzz: partial_json: build $((built - start)) s, run $(($(date +%s) - built)) s, no crash"

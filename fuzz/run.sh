#!/usr/bin/env bash
# Fuzzes tool-core for a bounded time: bash fuzz/run.sh [SECONDS] [TARGET...]. Each target
# runs SECONDS (default 30): partial_json (the incremental partial-JSON parser) and
# mcp_request (a JSON-RPC body through the MCP HTTP router, in-process). Installs cargo-fuzz
# if it is missing. Exits non-zero if a target crashes (the input is then in
# fuzz/artifacts/<target>/; replay it with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run --dev -s none <target> artifacts/<target>/<file>`
# in fuzz/, the flags of the build below).
#
# Environment: FUZZ_SANITIZER (default none: the code under test is safe Rust, and without
# AddressSanitizer the targets run about twice as many inputs; set `address` for ASan).
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(partial_json mcp_request)
sanitizer="${FUZZ_SANITIZER:-none}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    began=$(date +%s)
    cargo install cargo-fuzz --locked
    echo "fuzz: cargo-fuzz installed in $(($(date +%s) - began)) s"
fi

# cargo-fuzz passes nightly-only flags (-Z...); only a stable toolchain is installed here.
export RUSTC_BOOTSTRAP=1

# The build flags: `cargo fuzz build` and `cargo fuzz run` must get the same ones. `cargo fuzz run`
# first runs `cargo build --bin TARGET` with the RUSTFLAGS, profile and target triple it derives
# from them (cargo-fuzz's project.rs, the same function as for `cargo fuzz build`, which passes
# `--bins`): with equal flags every unit is fresh, so a run builds nothing and starts the binary
# that the one build below made.
# `--dev`: the dev profile (debug assertions and overflow checks on, no optimisation). For a
# bounded smoke run in CI it is the better trade: the optimised build of the MCP stack took 467 s
# of a clean CI run, the dev build takes 75 s, and a 30 s run still executes about 400,000
# parser inputs and 30,000 MCP requests (13,500 and 970 a second, measured on 2 cores).
build_flags=(--dev --sanitizer "$sanitizer")

start=$(date +%s)
# One build for every target (they share tool-core's build).
cargo fuzz build "${build_flags[@]}"
built=$(date +%s)
echo "fuzz: build $((built - start)) s"

# A run that rebuilt its target anyway (flags that drifted apart) shows as a changed binary.
triple=$(rustc -vV | sed -n 's/^host: //p')
stamp() { stat -c %Y "${CARGO_TARGET_DIR:-target}/$triple/debug/$1" 2>/dev/null || echo none; }
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    built_at=$(stamp "$target")
    began=$(date +%s)
    # corpus/ is the working corpus (not committed); seeds/ holds the committed starting inputs.
    cargo fuzz run "${build_flags[@]}" "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=8192 -dict="$target.dict" -print_final_stats=1
    echo "fuzz: $target: run $(($(date +%s) - began)) s, no crash"
    [ "$(stamp "$target")" = "$built_at" ] ||
        echo "fuzz: warning: \`cargo fuzz run\` rebuilt $target (its flags differ from the build's)" >&2
done

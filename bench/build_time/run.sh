#!/usr/bin/env bash
# Clean build time of a crate of N tools (default 10), three ways, in one run on one machine:
#   lean    - the tools with `#[tool]` on tool-core, default-features = false
#   default - the same on tool-core with its default features
#   rmcp    - the same tools with rmcp's `#[tool]` / `#[tool_router]` (rmcp 3.11, `server` +
#             `macros` only)
#   jsonschema - no tools: only the `jsonschema` crate that validates every call (the floor
#             under `lean`, which must compile it)
# Each is built from a clean target directory (dependencies fetched beforehand, so no network
# time is counted), with the workspace's Cargo.lock for the same dependency versions. Prints
# the wall time and the number of crates compiled for each. Then, for every kind with tools,
# the incremental rebuild after editing one fn body (tool 1's multiplier), as a developer
# sees it: incremental compilation on, primed by one build before the edits; the first
# rebuild is printed apart from the median of the next three (performance issue, goal 4: at
# N=50, ours at most rmcp's, clean and incremental).
#
#   bash bench/build_time/run.sh [N]          # KINDS="lean rmcp" bash bench/build_time/run.sh 50
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The same ten tool bodies for all three: typed input structs with documented fields.
tool_input() { # i
  cat <<RS
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct In$1 {
    /// The first operand
    pub a: i64,
    /// The second operand
    pub b: i64,
    /// A label echoed back
    pub label: Option<String>,
}
RS
}

make_toolsmith() { # dir features-line
  local dir=$1 dep=$2
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "tools-$(basename "$dir")"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$dep
serde = { version = "1", features = ["derive"] }
schemars = "1.2"

[workspace]
TOML
  {
    echo "use tool_core::prelude::*;"
    for i in $(seq 1 "$n"); do
      tool_input "$i"
      cat <<RS
/// Tool number $i: adds its operands
#[tool(id = "tool-$i")]
pub async fn tool_$i(input: In$i) -> Result<String, ToolError> {
    Ok(format!("{}: {}", input.label.unwrap_or_default(), input.a.saturating_add(input.b).saturating_mul($i)))
}
RS
    done
  } >"$dir/src/lib.rs"
}

make_rmcp() { # dir
  local dir=$1
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "tools-rmcp"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
schemars = "1.2"

[workspace]
TOML
  {
    echo "use rmcp::handler::server::wrapper::Parameters;"
    echo "use rmcp::{tool, tool_router};"
    for i in $(seq 1 "$n"); do tool_input "$i"; done
    echo "#[derive(Clone)]"
    echo "pub struct Tools;"
    echo "#[tool_router(server_handler)]"
    echo "impl Tools {"
    for i in $(seq 1 "$n"); do
      cat <<RS
    /// Tool number $i: adds its operands
    #[tool(name = "tool-$i")]
    async fn tool_$i(&self, Parameters(input): Parameters<In$i>) -> Result<String, rmcp::ErrorData> {
        Ok(format!("{}: {}", input.label.unwrap_or_default(), input.a.saturating_add(input.b).saturating_mul($i)))
    }
RS
    done
    echo "}"
  } >"$dir/src/lib.rs"
}

make_jsonschema() { # dir
  local dir=$1
  mkdir -p "$dir/src"
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "validator-only"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
jsonschema = { version = "0.61", default-features = false }
serde_json = "1"

[workspace]
TOML
  echo 'pub fn valid(schema: &serde_json::Value, v: &serde_json::Value) -> bool { jsonschema::validator_for(schema).is_ok_and(|s| s.is_valid(v)) }' >"$dir/src/lib.rs"
}

# GENERATE_ONLY=DIR: write the crates into DIR (with the workspace's Cargo.lock) and stop
# (bench/build_time/instructions.sh builds them itself).
if [ -n "${GENERATE_ONLY:-}" ]; then
  rm -rf "$work"
  work=$GENERATE_ONLY
  trap - EXIT
fi
make_toolsmith "$work/lean" "tool-core = { path = \"$root/tool-core\", default-features = false }"
make_toolsmith "$work/default" "tool-core = { path = \"$root/tool-core\" }"
make_rmcp "$work/rmcp"
make_jsonschema "$work/jsonschema"

# Seconds of one `cargo build` in $1 with CARGO_INCREMENTAL=$2; the crates compiled go to
# $1/compiled.
timed_build() { # dir incremental
  local dir=$1 start end
  start=$(date +%s.%N)
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" CARGO_INCREMENTAL=$2 cargo build 2>&1) >"$dir/build.log" || true
  end=$(date +%s.%N)
  grep -q '^ *Finished' "$dir/build.log" || { cat "$dir/build.log" >&2; exit 1; }
  (grep -c '^ *Compiling' "$dir/build.log" || true) >"$dir/compiled"
  awk "BEGIN { printf \"%.1f\", $end - $start }"
}

if [ -n "${GENERATE_ONLY:-}" ]; then
  for kind in lean default rmcp jsonschema; do cp "$root/Cargo.lock" "$work/$kind/Cargo.lock"; done
  exit 0
fi

printf '%-10s %10s %8s %12s %12s\n' crate seconds crates "first edit" incremental
for kind in ${KINDS:-lean default rmcp jsonschema}; do
  dir="$work/$kind"
  cp "$root/Cargo.lock" "$dir/Cargo.lock"
  (cd "$dir" && cargo fetch -q)
  clean=$(timed_build "$dir" 0)
  compiled=$(cat "$dir/compiled")
  first=- incremental=-
  if grep -q 'saturating_mul(1)' "$dir/src/lib.rs"; then
    timed_build "$dir" 1 >/dev/null
    # The first rebuild after a full build, then the median of three more edits (what a
    # developer's edit loop sees).
    edits=()
    # Tool 1's body only: the first `saturating_mul(..)` in the file.
    for m in 101 102 103 104; do
      sed -i "0,/saturating_mul([0-9]*)/s//saturating_mul($m)/" "$dir/src/lib.rs"
      edits+=("$(timed_build "$dir" 1)")
      sed -i "0,/saturating_mul([0-9]*)/s//saturating_mul(1)/" "$dir/src/lib.rs"
    done
    first=${edits[0]}
    incremental=$(printf '%s\n' "${edits[@]:1}" | sort -n | sed -n 2p)
  fi
  printf "%-10s %10s %8d %12s %12s\n" "$kind" "$clean" "$compiled" "$first" "$incremental"
  rm -rf "$dir/target"
done

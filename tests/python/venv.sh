# Sourced by the scripts that run Python against Toolsmith: `ensure_venv DIR REQUIREMENTS`
# makes (or reuses, while its Python still runs) a virtual environment in DIR and installs the
# pinned REQUIREMENTS into it only when they changed since the last install.
ensure_venv() {
  local venv=$1 requirements=$2
  if ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
  if ! cmp -s "$requirements" "$venv/.requirements.txt"; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$venv/.requirements.txt"
  fi
}

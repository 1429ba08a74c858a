# Shared by bin/dev and bin/test: make .venv and install the project when pyproject.toml changed.
# Usage: source bin/_setup.sh [extras]   (extras like "test")
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "Creating the Python environment in .venv" >&2
  "$PYTHON" -m venv .venv
fi
extras="${1:-}"
spec="."
[ -n "$extras" ] && spec=".[$extras]"
digest="$(sha1sum < pyproject.toml | cut -c1-12)"
stamp=".venv/.installed-$digest-${extras:-base}"
# Without extras, an install with any extras (bin/test's) has the base packages too.
installed=""
if [ -f "$stamp" ] || { [ -z "$extras" ] && compgen -G ".venv/.installed-$digest-*" > /dev/null; }; then
  installed=yes
fi
if [ -z "$installed" ]; then
  # The first run downloads a few dozen packages (minutes on a slow line): say what it is
  # doing, one line per package, instead of staying silent.
  echo "Installing Harmonic's Python packages into .venv (first run, or pyproject.toml changed);" \
       "this takes a few minutes the first time" >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  if ! .venv/bin/python -m pip install --progress-bar off -e "$spec" 2>&1 \
      | { grep --line-buffered -E '^(Collecting|Successfully installed|ERROR)' || true; } \
      | sed -u -e 's/^Collecting /  getting /' >&2; then
    echo "Installing failed: see the messages above" >&2
    exit 1
  fi
  touch "$stamp"
  echo "Installed." >&2
fi
export FLASK_APP=wsgi.py
export PATH="$ROOT/.venv/bin:$PATH"

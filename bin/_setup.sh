# Shared by bin/dev and bin/test: make .venv and install the project when pyproject.toml changed.
# Usage: source bin/_setup.sh [extras]   (extras like "test")
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
extras="${1:-}"
spec="."
[ -n "$extras" ] && spec=".[$extras]"
stamp=".venv/.installed-$(cat pyproject.toml | sha1sum | cut -c1-12)-${extras:-base}"
if [ ! -f "$stamp" ]; then
  echo "installing $spec into .venv (first run or pyproject.toml changed)" >&2
  .venv/bin/python -m pip install -q --upgrade pip >&2
  .venv/bin/python -m pip install -q -e "$spec" >&2
  touch "$stamp"
fi
export FLASK_APP=wsgi.py
export PATH="$ROOT/.venv/bin:$PATH"

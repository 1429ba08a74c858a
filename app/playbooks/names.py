"""Session names, capture folders and recipe paths, all confined to the data directory.

A session name becomes part of a folder name, and a ``RecipePath`` or ``SessionId`` arrives in a
request body, so each is checked before it touches the file system: names with separators,
``..``, control characters or a leading dot are refused, and every path must resolve (symlinks
followed) to a file inside ``HARMONIC_DATA_DIR``.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from app.services.errors import invalid_param

MAX_NAME = 60
_ALLOWED = re.compile(r"[^A-Za-z0-9._-]+")
_HOSTILE = re.compile(r"[/\\\x00-\x1f\x7f]|\.\.")
SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$")


def playbooks_root(data_dir: str) -> Path:
    root = Path(data_dir) / "playbooks"
    root.mkdir(parents=True, exist_ok=True)
    return root


def clean_name(raw: str | None, param: str = "name") -> str:
    """A safe session name: refused when hostile, otherwise spaces and oddities become '-'."""
    text = (raw or "").strip()
    if not text:
        return "session"
    if _HOSTILE.search(text) or text.startswith("."):
        raise invalid_param(param, "must not contain path separators, '..', control characters "
                                   "or start with '.'")
    if len(text) > MAX_NAME:
        raise invalid_param(param, f"at most {MAX_NAME} characters")
    cleaned = _ALLOWED.sub("-", text).strip("-.") or "session"
    return cleaned


def new_session_dir(data_dir: str, name: str, now: datetime | None = None) -> Path:
    """Create ``playbooks/YYYYMMDD_HHMMSS_<name>`` (suffix -2, -3... when taken) and return it."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d_%H%M%S")
    root = playbooks_root(data_dir)
    for n in range(1, 1000):
        folder = root / (f"{stamp}_{name}" if n == 1 else f"{stamp}_{name}-{n}")
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise invalid_param("name", "too many sessions with this name in one second")


def check_session_id(session_id: str, param: str = "SessionId") -> str:
    if not isinstance(session_id, str) or not SESSION_ID.match(session_id) or ".." in session_id:
        raise invalid_param(param, "must be a session folder name (letters, digits, . _ -)")
    return session_id


def inside(data_dir: str, path: Path) -> bool:
    root = os.path.realpath(data_dir)
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def recipe_file(data_dir: str, raw: str, param: str = "RecipePath") -> Path:
    """The recipe file a request names: inside the data directory, a regular .json file."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw or len(raw) > 1000:
        raise invalid_param(param, "must be a path to a recipe .json file")
    given = Path(raw.strip())
    path = given if given.is_absolute() else playbooks_root(data_dir) / given
    if not inside(data_dir, path):
        raise invalid_param(param, "must be inside the playbooks data directory")
    real = Path(os.path.realpath(path))
    if real.suffix.lower() != ".json":
        raise invalid_param(param, "must name a .json recipe file")
    if not real.is_file():
        raise invalid_param(param, "no such recipe file in the data directory")
    return real

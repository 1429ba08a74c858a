"""The README documents every setting the code reads and every command it ships."""

from __future__ import annotations

import re
from pathlib import Path

from config import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
# Names the code reads from the environment but that are not settings for people.
INTERNAL = {"MODEL_SERVER_NO_REEXEC"}
# A WSGI request's own variables (PEP 3333's CGI names and the HTTP_ headers), read from a
# request's ``environ``, not the process's.
WSGI = {"REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE",
        "CONTENT_LENGTH", "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "REMOTE_ADDR"}
READS = re.compile(r"(?:environ\.get\(|environ\[|getenv\(|environ\.setdefault\()\s*\"([A-Z_]+)\"")


def setting_names() -> set[str]:
    """Every setting: the registries of core and features, and direct environment reads."""
    from app.notifications.settings import SETTINGS as NOTIFICATION_SETTINGS
    from app.playbooks.settings import NAMES as PLAYBOOK_NAMES
    from app.workflows.settings import SETTINGS as WORKFLOW_SETTINGS

    names = {s.name for s in SETTINGS} | set(PLAYBOOK_NAMES)
    names |= {s.name for s in WORKFLOW_SETTINGS} | {s.name for s in NOTIFICATION_SETTINGS}
    design_doc = (ROOT / "app/design_model/settings.py").read_text()
    names |= set(re.findall(r"``(HARMONIC_[A-Z_]+)``", design_doc))
    for folder in ("app", "config", "bin"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and (path.suffix == ".py" or path.parent.name == "bin"):
                names |= set(READS.findall(path.read_text(errors="replace")))
    return {name for name in names - INTERNAL - WSGI if not name.startswith("HTTP_")}


def test_every_setting_is_in_the_readme() -> None:
    names = setting_names()
    assert len(names) > 30
    missing = sorted(n for n in names if f"| `{n}` |" not in README)
    assert missing == []


def test_the_readme_shows_the_two_commands_and_every_script() -> None:
    assert "bin/dev" in README and "bin/test" in README
    for script in (ROOT / "bin").iterdir():
        if script.name.startswith("_"):
            continue
        assert f"bin/{script.name}" in README, script.name

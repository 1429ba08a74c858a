"""The README documents every setting the code reads and every command it ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
    from app.automations.settings import SETTINGS as AUTOMATION_SETTINGS
    from app.notifications.settings import SETTINGS as NOTIFICATION_SETTINGS
    from app.playbooks.settings import NAMES as PLAYBOOK_NAMES
    from app.workflows.settings import SETTINGS as WORKFLOW_SETTINGS

    names = {s.name for s in SETTINGS} | set(PLAYBOOK_NAMES)
    names |= {s.name for s in WORKFLOW_SETTINGS} | {s.name for s in NOTIFICATION_SETTINGS}
    names |= {s.name for s in AUTOMATION_SETTINGS}
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


# A `flask …` command typed as the README shows it: a bare `flask` is not found in a fresh
# shell (or is another Python's, without the app's packages), so each one the README shows
# runs through the project's environment.
_CODE = re.compile(r"```[a-z]*\n(.*?)```|`([^`\n]+)`", re.S)
_FLASK = re.compile(r"(?<![\w/.-])flask\s+(--[a-z-]+|[a-z][a-z-]*)")


def readme_flask_commands() -> list[str]:
    """The first word after every `bin/flask` the README shows (code spans and blocks)."""
    words = []
    for block, span in _CODE.findall(README):
        words += re.findall(r"bin/flask\s+([a-z][a-z-]*)", block or span)
    return words


def test_every_flask_command_in_the_readme_uses_the_projects_environment() -> None:
    bare = []
    for block, span in _CODE.findall(README):
        bare += [m.group(0) for m in _FLASK.finditer(block or span)]
    assert bare == [], "use bin/flask (or .venv/bin/flask) in the README"
    assert len(set(readme_flask_commands())) >= 8


def test_bin_flask_runs_from_a_fresh_shell_anywhere(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What a newcomer types: `bin/flask …` from another folder with a bare PATH finds the
    project's environment and the app, and knows every command the README names."""
    import subprocess

    digest = __import__("hashlib").sha1((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:12]
    if not list((ROOT / ".venv").glob(f".installed-{digest}-*")):
        pytest.skip(".venv was not made by bin/dev or bin/test: bin/flask would install first")
    shell = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8",
             "HARMONIC_INSTANCE": str(tmp_path / "instance")}
    done = subprocess.run([str(ROOT / "bin" / "flask"), "--help"], cwd=tmp_path, env=shell,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    listed = set(re.findall(r"^  ([a-z][a-z-]*)\s", done.stdout, flags=re.M))
    missing = sorted(set(readme_flask_commands()) - listed)
    assert missing == [], (missing, done.stdout)

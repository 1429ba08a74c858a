"""The playbooks this app lists at /workflows: the YAML files in ``WORKFLOWS_DIR``.

Each entry is read fresh (files are small) so an edited playbook shows its new validation at
once. Entries are keyed by ``metadata.name``, falling back to the file stem for broken files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.config import project_root
from app.workflows import settings
from app.workflows.compile import compile_document
from app.workflows.document import DocumentError, Problem, parse
from app.workflows.validate import validate


@dataclass
class Entry:
    name: str
    file: str
    text: str
    problems: list[Problem] = field(default_factory=list)
    doc: dict[str, Any] | None = None
    compiled: dict[str, Any] | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def description(self) -> str:
        meta = (self.doc or {}).get("metadata") or {}
        return str(meta.get("description", "")) if isinstance(meta, dict) else ""


def folder() -> Path:
    configured = Path(settings.get("WORKFLOWS_DIR"))
    if not configured.is_absolute():
        configured = project_root() / configured
    return configured


def load(file: Path) -> Entry:
    text = file.read_text(encoding="utf-8")
    entry = Entry(name=file.stem, file=file.name, text=text)
    try:
        entry.doc = parse(text)
    except DocumentError as exc:
        entry.problems = exc.problems
        return entry
    meta = entry.doc.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
        entry.name = meta["name"]
    entry.problems = validate(entry.doc)
    if not entry.problems:
        entry.compiled = compile_document(entry.doc, file.stem)
    return entry


def entries() -> list[Entry]:
    base = folder()
    if not base.is_dir():
        return []
    files = sorted([*base.glob("*.yaml"), *base.glob("*.yml")])
    return [load(f) for f in files if f.is_file()]


def find(name: str) -> Entry | None:
    return next((e for e in entries() if e.name == name), None)

"""``app/`` reads no private member of another library (docs/ARCHITECTURE.md: public APIs of
our dependencies only).

Every attribute read as ``x._name`` in ``app/`` (one leading underscore, not a dunder) must be
a name ``app/`` itself defines (a function, a class, a parameter, a name or attribute it
assigns), a documented name that only looks private (``DOCUMENTED``), or the one private
member whose use has a canary (``CANARIED``: Werkzeug's ``Rule._compile_builder``, checked by
``tests/core/test_start_up.py``, Werkzeug bounded for it in ``pyproject.toml``). Read with
``ast``, so a string or a comment never counts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"

# Public names with a leading underscore: namedtuple's methods (documented so that they never
# clash with a field), Werkzeug's LocalProxy._get_current_object, os._exit.
DOCUMENTED = {"_asdict", "_make", "_replace", "_fields", "_get_current_object", "_exit"}
CANARIED = {"_compile_builder"}


def _defined(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def private_reads(sources: Iterable[tuple[str, str]]) -> list[str]:
    """``where: .name`` for each private member read in ``sources`` ((where, code) pairs)
    that the sources do not define themselves."""
    trees = [(where, ast.parse(code)) for where, code in sources]
    ours = set().union(*(_defined(tree) for _where, tree in trees))
    allowed = ours | DOCUMENTED | CANARIED
    return [f"{where}:{node.lineno}: .{node.attr}"
            for where, tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr.startswith("_")
            and not node.attr.startswith("__") and node.attr not in allowed]


def test_app_reads_no_private_member_of_another_library() -> None:
    sources = [(str(path.relative_to(ROOT)), path.read_text())
               for path in sorted(APP.rglob("*.py"))]
    assert private_reads(sources) == []


def test_the_check_sees_a_private_member_read() -> None:
    code = ("from flask_wtf.csrf import CSRFProtect\n"
            "class Ours:\n    def _mine(self) -> None:\n        self._kept = 1\n"
            "csrf = CSRFProtect()\n"
            "def check(ours: Ours) -> bool:\n"
            "    ours._mine()\n    row = ours._kept\n    return csrf._is_exempt()\n")
    assert private_reads([("sample.py", code)]) == ["sample.py:9: ._is_exempt"]

"""The house's layers, checked on the import graph of ``app/`` (docs/ARCHITECTURE.md).

Every ``import`` and ``from … import`` in every module of ``app/`` is read with ``ast``, the lazy
ones inside functions included, since they bind the layers just as tightly. Three rules:

1. imports point down: a module imports only its own layer or a lower one;
2. a feature package reaches another feature only through that feature's public module (its
   package, ``app/<feature>/__init__.py``), never a module inside it;
3. a feature's domain modules import no Flask, no ``app.web`` and no ``app.mcp``: only its
   adapters (named in ``ADAPTERS``: web pages, HTTP API, MCP tools, CLI, wiring) do.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"

# Lowest first. A module's layer is its top-level package under app/ (``app.x.y`` → ``x``).
LAYERS: dict[str, int] = {
    "extensions": 0, "models": 0, "db": 0,
    "services": 1,
    "actions": 2,
    "core": 3,
    "mcp": 4,
    "web": 5,
    "design_model": 6, "floorplans": 6, "notifications": 6, "oauth": 6, "playbooks": 6,
    "search": 6, "workflows": 6,
    "cli": 7, "": 7,  # app/__init__.py (create_app) and app/cli.py sit on top
}
FEATURES = {name for name, level in LAYERS.items() if level == 6}

# The modules of a feature that adapt its domain to a door: they may import Flask, app.web and
# app.mcp. Everything else in a feature is domain logic and may not.
ADAPTERS: dict[str, set[str]] = {
    "design_model": {"web", "rpc", "server"},
    # editing: the preview endpoint and the version pages, on the pages' blueprint.
    "floorplans": {"web", "pages", "actions", "mcp_tools", "edit_context", "editing"},
    # web: wiring, the header badge and the CLI; pages/actions: the inbox, levels, preferences
    # and webhooks; mail_pages: the pages an email's signed links open without signing in
    "notifications": {"web", "pages", "actions", "mail_pages"},
    # oauth: server wires Authlib's Flask integration to the request (issuer from the Host).
    "oauth": {"web", "pages", "server"},
    "playbooks": {"web", "api", "pages", "mcp_tools", "tools_bridge", "cli", "queued",
                  "catalog"},
    # mcp_tasks: runs MCP tasks (app.mcp.tasks) as queued steps
    "workflows": {"web", "mcp_bridge", "cli", "watch", "worker", "mcp_tasks"},
    # search: wiring and template filters (web), the two search pages and which studios a
    # person may read, by the pages' own gates (pages), the MCP tool (mcp_tools), the
    # reindex command (cli)
    "search": {"web", "pages", "mcp_tools", "cli"},
}
ADAPTER_ONLY = ("flask", "werkzeug", "flask_login", "flask_wtf", "app.web", "app.mcp")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) for each import; ``from app.x import y`` names ``app.x.y`` when
    ``y`` is a module of its own (that is where the coupling is)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            package = root.joinpath(*base.split("."))
            for alias in node.names:
                sub = package / alias.name
                is_module = sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                found.append((node.lineno, f"{base}.{alias.name}" if is_module else base))
    return sorted(set(found))


def _violations(root: Path = ROOT) -> list[str]:
    problems: list[str] = []
    for path in sorted((root / "app").rglob("*.py")):
        module = _module_name(path, root)
        here = _layer(module)
        leaf = module.rsplit(".", 1)[-1]
        adapter = here in FEATURES and (leaf in ADAPTERS[here] or module == f"app.{here}")
        for line, target in _imports(path, root):
            where = f"{path.relative_to(root)}:{line} imports {target}"
            if here in FEATURES and not adapter and target.startswith(ADAPTER_ONLY):
                problems.append(f"{where}: a domain module of {here} imports an adapter's "
                                "dependency (move the code to an adapter)")
            if not target.startswith("app.") or _layer(target) == here:
                continue
            there = _layer(target)
            if LAYERS[there] > LAYERS[here]:
                problems.append(f"{where}: {here or 'app'} may not import the higher layer "
                                f"{there}")
            elif here in FEATURES and there in FEATURES and target != f"app.{there}":
                problems.append(f"{where}: reach {there} through its public module "
                                f"app.{there}")
    return problems


def test_every_package_under_app_has_a_layer() -> None:
    packages = {p.name for p in APP.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    modules = {p.stem for p in APP.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= set(LAYERS), "give each new package a layer in LAYERS"


def test_adapters_named_here_exist() -> None:
    for feature, names in ADAPTERS.items():
        missing = [n for n in names if not (APP / feature / f"{n}.py").exists()]
        assert not missing, f"{feature}: no such adapter modules {missing}"


def test_imports_point_down_and_features_meet_through_public_modules() -> None:
    problems = _violations()
    assert not problems, "\n".join(problems)


def test_the_checker_sees_each_kind_of_violation(tmp_path: Path) -> None:
    """The rules are not vacuous: a small tree breaking each one is reported three times."""
    files = {
        "app/__init__.py": "",
        "app/web/__init__.py": "", "app/web/pages.py": "",
        "app/services/__init__.py": "",
        "app/services/notes.py": "from app.web import pages\n",  # rule 1
        "app/playbooks/__init__.py": "", "app/playbooks/replay.py": "",
        "app/workflows/__init__.py": "",
        "app/workflows/runner.py": "from app.playbooks import replay\nimport flask\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = _violations(tmp_path)
    assert len(found) == 3, found
    assert "may not import the higher layer web" in found[0]
    assert "through its public module app.playbooks" in found[1]
    assert "domain module of workflows" in found[2]

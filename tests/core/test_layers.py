"""The house's layers, checked on the import graph of ``app/`` (docs/ARCHITECTURE.md).

Every ``import`` and ``from … import`` in every module of ``app/`` is read with ``ast``: absolute
and relative ones, the lazy ones inside functions and the ``TYPE_CHECKING`` ones included, since
they bind the modules just as tightly. ``from app import create_app`` (or ``import app``) names
the top layer. Four rules:

1. imports point down: a module imports only its own layer or a lower one;
2. a feature package reaches another feature only through that feature's public module (its
   package, ``app/<feature>/__init__.py``), never a module inside it;
3. a feature's domain modules import no Flask, no ``app.web`` and no ``app.mcp``: only its
   adapters (named in ``ADAPTERS``: web pages, HTTP API, MCP tools, CLI, wiring) do;
4. no import cycle among the modules of ``app/``, and an import inside a function says why it
   is there (``# lazy: <reason>`` on its line).
"""

from __future__ import annotations

import ast
import re
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
    "search": 6, "workflows": 6, "automations": 6,
    # app/__init__.py (create_app), app/cli.py and app/entrypoints.py (what builds an app for
    # one door) sit on top
    "cli": 7, "entrypoints": 7, "": 7,
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
    # web: wiring, the inbound webhook endpoint, the worker's sweep, the CLI; pages/actions:
    # the rules and their firings
    "automations": {"web", "pages", "actions"},
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


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from … import`` reads from (relative ones resolved)."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _import_nodes(path: Path, root: Path) -> list[tuple[ast.stmt, str, bool]]:
    """(statement, imported module, inside a function) for each import of a module of app/;
    ``from app.x import y`` names ``app.x.y`` when ``y`` is a module of its own (that is where
    the coupling is), and ``from app import create_app`` names ``app``."""
    module = _module_name(path, root)
    found: list[tuple[ast.stmt, str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((child, alias.name, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(child, module, path.name == "__init__.py")
                package = root.joinpath(*base.split("."))
                for alias in child.names:
                    sub = package / alias.name
                    is_module = sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                    found.append((child, f"{base}.{alias.name}" if is_module else base,
                                  in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def _imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) for each import of the module at ``path``."""
    return sorted({(node.lineno, target) for node, target, _ in _import_nodes(path, root)})


def _in_app(target: str) -> bool:
    return target == "app" or target.startswith("app.")


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
            if not _in_app(target) or _layer(target) == here:
                continue
            there = _layer(target)
            if LAYERS[there] > LAYERS[here]:
                problems.append(f"{where}: {here or 'app'} may not import the higher layer "
                                f"{there or 'app'}")
            elif here in FEATURES and there in FEATURES and target != f"app.{there}":
                problems.append(f"{where}: reach {there} through its public module "
                                f"app.{there}")
    return problems


def _graph(root: Path = ROOT) -> dict[str, dict[str, list[str]]]:
    """module → imported module of app/ → where (``path:line``), for every import."""
    modules = {_module_name(path, root): path for path in (root / "app").rglob("*.py")}
    graph: dict[str, dict[str, list[str]]] = {name: {} for name in modules}
    for name, path in modules.items():
        for node, target, _ in _import_nodes(path, root):
            if target in modules and target != name:
                graph[name].setdefault(target, []).append(
                    f"{path.relative_to(root)}:{node.lineno}")
    return graph


def _cycles(graph: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each
    holds at least one cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for target in graph[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


LAZY = re.compile(r"#\s*lazy:\s*\S")


def _unexplained_lazy_imports(root: Path = ROOT) -> list[str]:
    """Imports inside a function without ``# lazy: <reason>`` on their first line."""
    missing = []
    for path in sorted((root / "app").rglob("*.py")):
        lines = path.read_text().splitlines()
        for node in {node for node, _, in_function in _import_nodes(path, root) if in_function}:
            if not LAZY.search(lines[node.lineno - 1]):
                missing.append(f"{path.relative_to(root)}:{node.lineno}: "
                               f"{lines[node.lineno - 1].strip()}")
    return sorted(missing)


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


def test_no_import_cycle_among_the_modules_of_app() -> None:
    """No two modules of app/ need each other, through any chain of imports.

    Imports inside functions count as edges: a lazy import does not untangle two modules, it
    only hides the knot and makes their load order depend on which function runs first. A
    shared definition goes down a layer (or into a module of its own) instead; where a lower
    module needs the app itself, the entry point on the top layer passes it down. Imports under
    ``if TYPE_CHECKING:`` count too: none is needed for a cycle today, and two modules whose
    types name each other are one module's worth of coupling spread over two."""
    graph = _graph()
    cycles = _cycles(graph)
    described = ["\n".join(f"  {a} -> {b} ({', '.join(graph[a][b])})"
                           for a in cycle for b in graph[a] if b in cycle) for cycle in cycles]
    assert not cycles, "import cycles:\n" + "\n\n".join(described)


def test_an_import_inside_a_function_says_why() -> None:
    """An import belongs at the top of its module, where a reader sees what the module needs.
    The few that cannot be (an optional or heavy dependency only one path needs, a module whose
    import has side effects, ``app/__init__.py``'s factory that every ``import app.x`` runs)
    carry ``# lazy: <reason>`` on their line."""
    missing = _unexplained_lazy_imports()
    assert not missing, ("move these imports to the top of their module, or say why they "
                         "cannot be (# lazy: <reason>):\n" + "\n".join(missing))


def test_the_checker_sees_each_kind_of_violation(tmp_path: Path) -> None:
    """The rules are not vacuous: a small tree breaking each one is reported."""
    files = {
        "app/__init__.py": "def create_app():\n    pass\n",
        "app/mcp/__init__.py": "",
        "app/mcp/stream.py": "def create():\n    from app import create_app\n"
                             "    return create_app()\n",  # rule 1, through the package
        "app/core/__init__.py": "",
        "app/core/identity.py": "from app.core import token_cache\n",  # rule 4: a cycle
        "app/core/token_cache.py": "def resolve():\n"
                                   "    from app.core.identity import Identity  # lazy: why\n"
                                   "    from app.core import identity\n",  # rule 4: no reason
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
    assert len(found) == 4, found
    assert "mcp/stream.py:2 imports app: mcp may not import the higher layer app" in found[0]
    assert "may not import the higher layer web" in found[1]
    assert "through its public module app.playbooks" in found[2]
    assert "domain module of workflows" in found[3]
    assert _cycles(_graph(tmp_path)) == [["app.core.identity", "app.core.token_cache"]]
    assert _unexplained_lazy_imports(tmp_path) == [
        "app/core/token_cache.py:3: from app.core import identity",
        "app/mcp/stream.py:2: from app import create_app"]

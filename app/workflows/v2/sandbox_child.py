"""The process an inline python task runs in (started by ``sandbox``; standard library only).

It reads one JSON request on stdin (the code, its input, the context, the network allow-list,
its limits), limits itself (address space, CPU time, file size), refuses from then on what
the task may not do (an audit hook: connections and name lookups beyond the allow-list, new
processes, signals, ctypes, writing outside its own folder), runs the code as NoETL does, and
writes one JSON line, marked with the request's nonce, to its stdout: the result, or the
error. What the code prints is kept (the last part of it) and returned with the result.

The code sees its input's keys as names of their own and as ``input_data``, ``context`` (the
workload, ctx, the run's id and the results so far), ``json``, ``datetime``, ``uuid``, ``os``,
and the modules ``libs`` names. Its result is the value of ``result``, or what ``main(...)``
returns when it defines one (called with the input's keys it names), or what a ``return`` at
the top level returns.
"""

from __future__ import annotations

import ast
import datetime
import importlib.util
import inspect
import io
import json
import os
import resource
import socket
import sys
import traceback
import uuid
from typing import Any

PRINTED = 16 * 1024  # characters of what the code printed that are kept
BLOCKED_MODULES = ("ctypes", "_ctypes", "cffi", "_cffi_backend", "_posixsubprocess",
                   "multiprocessing", "_multiprocessing")
BLOCKED_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "pty.spawn", "os.kill", "os.killpg",
                  "signal.pthread_kill", "socket.bind", "sys.addaudithook")
FILE_EVENTS = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
               "os.truncate", "os.link", "os.symlink", "os.utime", "shutil.rmtree")


class Refused(PermissionError):
    """What the sandbox does not let a task do."""


def _load_netpolicy(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("harmonic_netpolicy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _limit(memory_mb: int, seconds: int) -> None:
    size = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size, size))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024 * 1024, 64 * 1024 * 1024))


def _hook(allow: list[str], netpolicy: Any, folder: str) -> Any:
    def port_of(value: Any) -> int | None:
        try:
            return int(value) or None
        except (TypeError, ValueError):
            return None  # a service name: the connection's own check sees the number

    def entry_host(entry: str) -> str:
        if entry == netpolicy.LOOPBACK_ENTRY:
            return entry
        if "://" in entry:
            return str(netpolicy.target(entry).host)
        parts = netpolicy.split_authority(entry)
        return str(parts[0] if parts else entry).strip("[]")

    def named(host: Any, port: Any) -> bool:
        """Whether the allow-list names this host (on this port, when there is one)."""
        if host is None:
            return False
        text = (host.decode() if isinstance(host, bytes) else str(host)).strip("[]").lower()
        number = port_of(port)
        if number is None:
            return any(netpolicy.is_loopback(text) if e == netpolicy.LOOPBACK_ENTRY
                       else entry_host(e) == text for e in netpolicy.parse_allow_list(allow))
        return any(netpolicy.allowed(netpolicy.Target(scheme, text, number), allow)
                   for scheme in ("http", "https"))

    # The addresses the allow-listed names have now: a connection goes to an address.
    addresses: set[tuple[str, int | None]] = set()
    for entry in netpolicy.parse_allow_list(allow):
        if entry == netpolicy.LOOPBACK_ENTRY:
            continue
        target = netpolicy.target(entry) if "://" in entry else None
        parts = (target.host, target.port) if target else netpolicy.split_authority(entry)
        if parts is None:
            parts = (entry, None)
        host, port = str(parts[0]).strip("[]"), parts[1]
        try:
            for info in socket.getaddrinfo(host, port or 0, proto=socket.IPPROTO_TCP):
                addresses.add((str(info[4][0]), port))
        except OSError:
            continue

    def reachable(address: Any) -> bool:
        if not isinstance(address, tuple) or len(address) < 2:
            return False  # a Unix socket, a raw address: nothing a task needs
        host, port = str(address[0]), port_of(address[1])
        return (named(host, port) or (host, port) in addresses or (host, None) in addresses)

    def inside(path: Any) -> bool:
        try:
            full = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return full == folder or full.startswith(folder + os.sep)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import" and str(args[0]).split(".")[0] in BLOCKED_MODULES:
            raise Refused(f"python tasks may not import {args[0]}")
        if event.startswith("ctypes.") or event in BLOCKED_EVENTS or any(
                event.startswith(prefix + ".") for prefix in ("os.exec", "os.spawn")):
            raise Refused(f"python tasks may not do this here ({event})")
        if event in ("socket.connect", "socket.sendto") and not reachable(args[1]):
            raise Refused(f"network access to {args[1]!r} is not allowed: this server's "
                          f"operator allows a host by adding it to WORKFLOWS_HTTP_ALLOW")
        if event == "socket.getaddrinfo" and not named(args[0], args[1]):
            raise Refused(f"host {args[0]!r} is not allowed: this server's operator allows a "
                          f"host by adding it to WORKFLOWS_HTTP_ALLOW")
        if event in ("socket.gethostbyname", "socket.gethostbyname_ex",
                     "socket.gethostbyaddr") and not named(args[0], None):
            raise Refused(f"host {args[0]!r} is not allowed (WORKFLOWS_HTTP_ALLOW)")
        if event == "open" and args[1] is not None:
            mode, flags = str(args[1] or ""), int(args[2] or 0)
            writes = any(c in mode for c in "wax+") or flags & (os.O_WRONLY | os.O_RDWR)
            if writes and not inside(args[0]):
                raise Refused("python tasks write files only in their own folder")
        if event in FILE_EVENTS and not inside(args[0]):
            raise Refused(f"python tasks change files only in their own folder ({event})")

    return hook


def _imports(libs: Any) -> str:
    """NoETL's ``libs: {alias: module}`` (or ``{alias: {from, import}}``) as import lines."""
    lines = []
    for alias, module in (libs or {}).items():
        if isinstance(module, str):
            lines.append(f"import {module}" if alias == module else f"import {module} as {alias}")
        elif isinstance(module, dict) and module.get("from") and module.get("import"):
            name = module["import"]
            suffix = "" if alias == name else f" as {alias}"
            lines.append(f"from {module['from']} import {name}{suffix}")
    return "\n".join(lines)


def _program(code: str) -> tuple[Any, bool]:
    """The compiled code; True when a top-level ``return`` made it a function's body."""
    try:
        return compile(code, "<task>", "exec"), False
    except SyntaxError as exc:
        if "'return' outside function" not in str(exc):
            raise
    tree = ast.parse(f"def __task__():\n{_indented(code)}\n", "<task>")
    return compile(tree, "<task>", "exec"), True


def _indented(code: str) -> str:
    return "\n".join(("    " + line) if line.strip() else line for line in code.splitlines())


def _run(request: dict[str, Any]) -> Any:
    data = dict(request.get("input") or {})
    scope: dict[str, Any] = {"__name__": "__task__", "__builtins__": __builtins__,
                             "input_data": data, "context": request.get("context") or {},
                             "json": json, "datetime": datetime, "uuid": uuid, "os": os}
    scope.update(data)
    prelude = _imports(request.get("libs"))
    if prelude:
        exec(compile(prelude, "<libs>", "exec"), scope)  # noqa: S102 - the document's code
    program, wrapped = _program(str(request["code"]))
    exec(program, scope)  # noqa: S102 - the point of this process
    if wrapped:
        return scope["__task__"]()
    main = scope.get("main")
    if callable(main):
        wanted = inspect.signature(main).parameters
        takes_all = any(p.kind == p.VAR_KEYWORD for p in wanted.values())
        kwargs = data if takes_all else {k: v for k, v in data.items() if k in wanted}
        return main(**kwargs)
    if "result" in scope:
        return scope["result"]
    return {"status": "success", "message": "the code set no result"}


def main() -> int:
    request = json.loads(sys.stdin.read())
    nonce = str(request["nonce"])
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    printed = io.StringIO()
    sys.stdout = sys.stderr = printed
    folder = os.path.realpath(os.getcwd())
    netpolicy = _load_netpolicy(request["netpolicy"])
    _limit(int(request["memory_mb"]), int(request["seconds"]))
    sys.addaudithook(_hook(list(request.get("allow") or []), netpolicy, folder))
    answer: dict[str, Any]
    try:
        value = _run(request)
        answer = {"ok": True, "result": json.loads(json.dumps(value, default=str))}
    except MemoryError:
        answer = {"ok": False, "error": {"exception": "MemoryError",
                                         "message": "out of memory (WORKFLOWS_PYTHON_MEMORY_MB)"}}
    except BaseException as exc:  # the task's own error, reported as such
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<task>"]
        answer = {"ok": False, "error": {"exception": type(exc).__name__,
                                         "message": str(exc)[:2000],
                                         "line": frames[-1].lineno if frames else None}}
    answer["printed"] = printed.getvalue()[-PRINTED:]
    out.write(nonce + json.dumps(answer, ensure_ascii=False, default=str) + "\n")
    out.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())

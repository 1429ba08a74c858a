"""Recording: whole lines under concurrency and kill -9, redaction, hostile names and paths,
owners that never mix, a dead or silent upstream (clean -32000, no hang) and an asynchronous
upstream followed to the real outcome.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.playbooks import capture
from tests.playbooks.conftest import capture_lines, capture_text, folder_store_only, rpc

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from app.playbooks import capture
folder, tag, count, fsync = Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
i = 0
while count < 0 or i < count:
    capture.append(folder, {"t": i, "method": tag, "params": {"i": i, "pad": tag * 3000}},
                   fsync=fsync)
    i += 1
    if i == 5:
        print("writing", flush=True)
"""


# ------------------------------------------------------------------ the file itself (no DB)

# Both fsync modes (PLAYBOOK_CAPTURE_FSYNC): "interval" leaves the fsync to a flusher thread,
# which must change nothing a crash of the process can observe.
MODES = pytest.mark.parametrize("fsync", capture.FSYNC_MODES)


@MODES
def test_concurrent_threads_and_processes_never_interleave(tmp_path: Path, fsync: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(ROOT), str(tmp_path),
                               f"p{n}", "150", fsync]) for n in range(4)]

    def threaded(tag: str) -> None:
        for i in range(150):
            capture.append(tmp_path, {"t": i, "method": tag, "params": {"i": i,
                                                                         "pad": tag * 3000}},
                           fsync=fsync)

    threads = [threading.Thread(target=threaded, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    lines = capture_lines(tmp_path)
    assert len(lines) == 8 * 150
    per_writer: dict[str, list[int]] = {}
    for line in lines:  # every line whole: its padding matches its own writer's tag
        assert line["params"]["pad"] == line["method"] * 3000
        per_writer.setdefault(line["method"], []).append(line["params"]["i"])
    assert all(order == list(range(150)) for order in per_writer.values())


def kill_9_mid_capture(folder: Path, fsync: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(ROOT), str(folder), "k", "-1",
                             fsync], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"writing\n"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_kill_9_mid_capture_leaves_valid_jsonl(tmp_path: Path) -> None:
    kill_9_mid_capture(tmp_path, "always")
    lines = capture_lines(tmp_path)  # strict: fails on any torn or unparsable line
    assert len(lines) >= 5 and [x["t"] for x in lines] == list(range(len(lines)))


def test_kill_9_mid_capture_without_fsync_loses_no_written_line(tmp_path: Path) -> None:
    # Without an fsync per line the writer spends its time writing, so the kill may land inside
    # a write that spans pages and leave part of that one line: readers skip it, and the next
    # writer (or stopping the session) cuts it off.
    kill_9_mid_capture(tmp_path, "interval")
    whole = capture.read(tmp_path)
    assert len(whole) >= 5 and [x["t"] for x in whole] == list(range(len(whole)))
    capture.append(tmp_path, {"t": len(whole), "method": "next"}, fsync="interval")
    assert capture_lines(tmp_path) == [*whole, {"t": len(whole), "method": "next"}]


def test_a_torn_tail_is_cut_by_the_next_writer_and_skipped_by_readers(tmp_path: Path) -> None:
    capture.append(tmp_path, {"t": 1, "method": "a"})
    with open(tmp_path / "capture.jsonl", "ab") as handle:
        handle.write(b'{"t": 2, "method": "torn", "par')  # a crash in the middle of a line
    assert [e["method"] for e in capture.read(tmp_path)] == ["a"]
    capture.append(tmp_path, {"t": 3, "method": "b"})
    assert [e["method"] for e in capture_lines(tmp_path)] == ["a", "b"]


# ------------------------------------------------------------------ through the app

@pytest.mark.parametrize("setting", ["interval", "always", "ALWAYS", "alwyas"])
def test_every_fsync_setting_records_every_call(app, studio, monkeypatch, setting) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "PLAYBOOK_CAPTURE_FSYNC", setting)
    started = studio.post("/teach/start?name=fsync").get_json()
    for i in range(3):
        assert "result" in rpc(studio, "get_walls", {"i": i}, ident=i)
    assert [line["params"]["i"] for line in capture_lines(Path(started["dir"]))] == [0, 1, 2]
    assert studio.post("/teach/stop").get_json()["entries"] == 3


def test_stopping_cuts_a_torn_tail_left_by_a_crash(app, studio, capture_store) -> None:  # type: ignore[no-untyped-def]
    folder_store_only(capture_store)
    started = studio.post("/teach/start?name=torn").get_json()
    rpc(studio, "get_walls", {"i": 0})
    with open(Path(started["dir"]) / "capture.jsonl", "ab") as handle:
        handle.write(b'{"t": 2, "method": "torn", "par')  # a worker killed mid-line
    assert studio.post("/teach/stop").get_json()["entries"] == 1
    assert [line["params"] for line in capture_lines(Path(started["dir"]))] == [{"i": 0}]


def test_redaction(app, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "PLAYBOOK_REDACT_PATTERNS", r"PRJ-\d{4}")
    alice = studio
    started = alice.post("/teach/start?name=secrets").get_json()
    rpc(alice, "get_walls", {"level": "1FL", "apiKey": "sk-live-123456",
                             "note": "use Bearer abc.def.ghi for PRJ-1234",
                             "nested": {"password": "hunter2", "items": [{"token": "t0k3n"}]}})
    alice.post("/teach/stop")
    raw = capture_text(Path(started["dir"]))
    for secret in ("sk-live-123456", "abc.def.ghi", "PRJ-1234", "hunter2", "t0k3n",
                   alice.token):
        assert secret not in raw
    line = capture_lines(Path(started["dir"]))[0]
    assert line["params"]["apiKey"] == "[REDACTED]"
    assert line["params"]["nested"]["items"][0]["token"] == "[REDACTED]"
    assert line["params"]["note"] == "use [REDACTED] for [REDACTED]"
    assert line["params"]["level"] == "1FL"  # ordinary values stay


@pytest.mark.parametrize("name", ["../../etc", "a/b", "..", ".hidden", "a\\b", "x\x00y",
                                  "n\nl", "x" * 61])
def test_hostile_session_names_are_refused(app, studio, data_dir, name) -> None:  # type: ignore[no-untyped-def]
    before = set((data_dir / "playbooks").glob("*")) if (data_dir / "playbooks").exists() else set()
    response = studio.client.post("/teach/start", query_string={"name": name},
                                  headers=studio.headers("application/json"))
    assert response.status_code == 422, response.get_data(as_text=True)
    assert response.get_json()["error"]["errors"][0]["param"] == "name"
    after = set((data_dir / "playbooks").glob("*")) if (data_dir / "playbooks").exists() else set()
    assert after == before
    assert not (data_dir.parent / "etc").exists()


def test_odd_but_harmless_names_are_sanitized(app, studio) -> None:  # type: ignore[no-untyped-def]
    started = studio.post("/teach/start?name=Level 2 beams (v2)").get_json()
    # (-2 when a session of that name started in the same second: the other capture store's run)
    assert re.search(r"_Level-2-beams-v2(-\d+)?$", started["sessionId"]), started["sessionId"]
    studio.post("/teach/stop")


def test_hostile_recipe_paths_are_refused(app, studio, data_dir, tmp_path) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "evil.json"
    outside.write_text(json.dumps({"name": "evil", "steps": [{"method": "delete_elements",
                                                              "params": {}}]}))
    link = data_dir / "playbooks" / "link.json"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(outside)
    for body in ({"RecipePath": str(outside)}, {"RecipePath": "../../../etc/passwd"},
                 {"RecipePath": "/etc/passwd"}, {"RecipePath": str(link)},
                 {"RecipePath": str(data_dir / "playbooks")}, {"SessionId": "../x"},
                 {"SessionId": "a/../../b"}, {"RecipePath": 7}):
        response = studio.post("/replay", json={**body, "DryRun": True})
        assert response.status_code == 422, (body, response.get_data(as_text=True))
        assert response.get_json()["ok"] is False


def test_owners_record_at_once_without_mixing(app, studio, make_agent) -> None:  # type: ignore[no-untyped-def]
    alice, bob = studio, make_agent("bob")
    a = alice.post("/teach/start?name=alice-session").get_json()
    b = bob.post("/teach/start?name=bob-session").get_json()
    for i in range(3):
        rpc(alice, "get_walls", {"level": f"A{i}"})
        rpc(bob, "get_walls", {"level": f"B{i}"})
    assert alice.post("/teach/stop").get_json()["entries"] == 3
    rpc(bob, "get_walls", {"level": "B3"})
    assert bob.post("/teach/stop").get_json()["entries"] == 4
    assert [x["params"]["level"] for x in capture_lines(Path(a["dir"]))] == ["A0", "A1", "A2"]
    assert [x["params"]["level"] for x in capture_lines(Path(b["dir"]))] == [
        "B0", "B1", "B2", "B3"]
    # Bob cannot see or replay Alice's session.
    assert bob.get(f"/playbooks/{a['id']}").status_code == 404
    assert bob.post("/replay", json={"SessionId": a["sessionId"]}).status_code == 422


# ------------------------------------------------------------------ upstream faults

def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def silent_upstream() -> Iterator[str]:
    """Accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def test_upstream_down_or_silent_gives_a_recorded_32000(app, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(app.config, "PLAYBOOK_TIMEOUT", "0.5")
    alice = studio
    started = alice.post("/teach/start?name=upstream-faults").get_json()
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", f"http://127.0.0.1:{_closed_port()}")
    down = rpc(alice, "get_walls", {"level": "1FL"}, ident=7)
    assert down["id"] == 7 and down["error"]["code"] == -32000
    assert down["error"]["data"]["code"] == "UPSTREAM_DOWN"
    with silent_upstream() as url:
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", url)
        silent = rpc(alice, "get_walls", {"level": "1FL"})
    assert silent["error"]["code"] == -32000
    assert silent["error"]["data"]["code"] == "UPSTREAM_TIMEOUT"
    monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM", "http://10.20.30.40:5210")
    refused = rpc(alice, "get_walls", {})
    assert refused["error"]["data"]["code"] == "UPSTREAM_NOT_ALLOWED"
    alice.post("/teach/stop")
    lines = capture_lines(Path(started["dir"]))
    assert [x["error"]["code"] for x in lines] == [-32000, -32000, -32000]
    assert all("result" not in x for x in lines)


class _AsyncUpstream(BaseHTTPRequestHandler):
    """RevitMcpServer's shape: /rpc only queues; /job/<id> runs, then ends."""

    polls: dict[str, int] = {}

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        job = f"job-{request['method']}-{request['id']}"
        self._send({"jsonrpc": "2.0", "id": request["id"],
                    "result": {"ok": True, "queued": True, "jobId": job}})

    def do_GET(self) -> None:  # noqa: N802
        job = self.path.rsplit("/", 1)[-1]
        count = self.polls[job] = self.polls.get(job, 0) + 1
        if count < 3:
            self._send({"job_id": job, "state": "RUNNING"})
        elif "fail" in job:
            self._send({"job_id": job, "state": "FAILED", "error_code": "TX_NOT_COMMITTED",
                        "error_msg": "the transaction was rolled back"})
        else:
            self._send({"job_id": job, "state": "SUCCEEDED",
                        "result_json": json.dumps({"ok": True, "updated": 3})})


def test_asynchronous_upstream_is_followed_to_its_outcome(app, studio, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AsyncUpstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM",
                            f"http://127.0.0.1:{server.server_port}")
        alice = studio
        started = alice.post("/teach/start?name=async").get_json()
        done = rpc(alice, "update_wall_parameter", {"elementId": 1}, ident=int(time.time()))
        assert done["result"] == {"ok": True, "updated": 3}  # the outcome, not the receipt
        failed = rpc(alice, "fail_me", {})
        assert failed["error"]["code"] == -32000
        assert "rolled back" in failed["error"]["message"]
        alice.post("/teach/stop")
    finally:
        server.shutdown()
        thread.join(timeout=5)
    lines = capture_lines(Path(started["dir"]))
    assert lines[0]["result"] == {"ok": True, "updated": 3}
    assert "queued" not in json.dumps(lines)
    assert lines[1]["error"]["data"]["state"] == "FAILED"


class _KeepAliveUpstream(BaseHTTPRequestHandler):
    """An HTTP/1.1 upstream that counts connections; ``closing`` drops each after one answer
    without saying so (as an upstream's idle timeout does)."""

    protocol_version = "HTTP/1.1"
    connections: list[int] = []
    posts: list[Any] = []
    closing = False

    def log_message(self, *args: Any) -> None:
        return None

    def setup(self) -> None:
        super().setup()
        self.connections.append(1)

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.posts.append(request)
        data = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}
                          ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = self.closing


class _ClosingServer(ThreadingHTTPServer):
    closed = threading.Event()

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed.set()


@pytest.mark.parametrize("closing", [False, True])
def test_a_plain_http_upstream_keeps_its_connection_or_notices_it_closed(
        app, studio, monkeypatch, closing) -> None:  # type: ignore[no-untyped-def]
    handler = type("Upstream", (_KeepAliveUpstream,), {"connections": [], "posts": [],
                                                       "closing": closing})
    server = _ClosingServer(("127.0.0.1", 0), handler)
    server.closed = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM",
                            f"http://127.0.0.1:{server.server_port}")
        for i in range(3):
            assert rpc(studio, "get_walls", {"i": i}, ident=i) == {
                "jsonrpc": "2.0", "id": i, "result": {"ok": True}}
            if closing:  # the upstream has hung up before the next call reuses the connection
                assert server.closed.wait(timeout=10)
                server.closed.clear()
        nan = studio.client.post("/rpc", data='{"jsonrpc": "2.0", "id": 9, "method": "get_walls", '
                                              '"params": {"x": NaN}}',
                                 headers=studio.headers("application/json"),
                                 content_type="application/json")
        assert nan.status_code == 200
        assert nan.get_json()["error"]["code"] == -32700  # NaN is not JSON: never forwarded
    finally:
        server.shutdown()
        thread.join(timeout=5)
    assert [post["params"] for post in handler.posts] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert len(handler.connections) == (3 if closing else 1)


class _RecordingUpstream(BaseHTTPRequestHandler):
    """A remote upstream that logs every call and creates whatever it is asked to."""

    calls: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.calls.append(request)
        count = (request.get("params") or {}).get("count", 0)
        data = json.dumps({"jsonrpc": "2.0", "id": request["id"],
                           "result": {"ok": True, "created": count}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_remote_writes_are_never_sent_in_a_dry_run_unless_trusted(app, studio, data_dir,
                                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RecordingUpstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _RecordingUpstream.calls = []
    path = data_dir / "playbooks" / "reviewed" / "remote.json"  # approved: it may execute
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": "remote", "vars": {"n": None}, "steps": [
        {"method": "create_things", "params": {"count": "{{n}}"}, "confirm": True,
         "expect": {"maxCreated": 6}}]}))
    try:
        monkeypatch.setitem(app.config, "PLAYBOOK_UPSTREAM",
                            f"http://127.0.0.1:{server.server_port}")
        dry = studio.post("/replay", json={"RecipePath": "reviewed/remote.json", "DryRun": True,
                                           "Args": {"n": 8}}).get_json()
        assert dry["ok"] and "not sent" in dry["details"][0]["note"]
        # The dry run says what the real run will meet: refused, since nothing previews it.
        assert dry["realRun"]["allowed"] is False and dry["realRun"]["rule"] == "preview"
        assert "PLAYBOOK_DRYRUN_METHODS" in dry["realRun"]["next"]
        eight = {"RecipePath": "reviewed/remote.json", "DryRun": False, "Args": {"n": 8}}
        refused = studio.post("/replay", json=eight)
        assert refused.status_code == 409
        assert refused.get_json()["rule"] == "preview"
        assert refused.get_json()["refusal"] == {k: v for k, v in dry["realRun"].items()
                                                 if k != "allowed"}

        def writes() -> list[dict[str, Any]]:  # (its catalog, rpc.discover, is asked once)
            return [c for c in _RecordingUpstream.calls if c["method"] != "rpc.discover"]

        assert writes() == []  # nothing reached the upstream
        monkeypatch.setitem(app.config, "PLAYBOOK_DRYRUN_METHODS", "create_things")
        stopped = studio.post("/replay", json=eight).get_json()
        assert "stopped before writing" in stopped["error"]
        assert [c["params"] for c in writes()] == [{"count": 8, "dryRun": True}]
        five = {"RecipePath": "reviewed/remote.json", "Args": {"n": 5}}
        assert studio.post("/replay", json={**five, "DryRun": True}).get_json()["ok"]
        done = studio.post("/replay", json={**five, "DryRun": False}).get_json()
        assert done["ok"], done
        assert [c["params"] for c in writes()[1:]] == [
            {"count": 5, "dryRun": True}, {"count": 5, "dryRun": True}, {"count": 5}]
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_the_call_right_after_a_teach_start_is_recorded(app, studio) -> None:  # type: ignore[no-untyped-def]
    """While nobody teaches, a tool call asks no query whether its caller teaches (that is
    remembered for a moment, per process); a start forgets it at once, so the very next call,
    and only the calls from then on, land in the capture."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}}

    def navigate(path: str) -> None:
        answer = studio.client.post("/mcp", json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "navigate", "arguments": {"path": path}, "_meta": meta}},
            headers={**studio.headers("application/json"),
                     "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                     "Mcp-Name": "navigate"})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert not answer.get_json()["result"].get("isError"), answer.get_json()

    navigate("/studios")  # nobody teaches: now remembered
    navigate("/studios")
    started = studio.post("/teach/start?name=right-after").get_json()
    navigate("/studios/team")
    assert studio.post("/teach/stop").get_json()["entries"] == 1
    navigate("/studios")
    lines = capture_lines(Path(started["dir"]))
    assert [(line["tool"], line["params"]) for line in lines] == [
        ("navigate", {"path": "/studios/team"})]

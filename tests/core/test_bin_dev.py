"""``bin/dev`` on a fresh instance: migrates, seeds, serves, prints a working token.

Then the issue's "done when" story over real HTTP: an agent reads /studios/demo.md, creates a
note with one POST, and a person's browser request for the returned URL shows it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # runs bin/dev: a fresh virtualenv check, migrations and a server
def test_bin_dev_serves_the_demo(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    env = {**os.environ, "PORT": str(port), "HARMONIC_INSTANCE": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'dev.db'}", "WORKERS": "1"}
    env.pop("HARMONIC_BASE_URL", None)
    proc = subprocess.Popen([str(ROOT / "bin" / "dev")], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    # A thread reads the output, so a bin/dev that stops printing fails the test at the deadline
    # instead of blocking it on readline.
    printed: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [printed.put(line) for line in proc.stdout],
                     daemon=True).start()
    try:
        token, lines = None, []
        signs_in = "without a token (you will be asked to sign in)"
        deadline = time.monotonic() + 180
        while not (token and signs_in in "".join(lines) and lines[-1].strip().endswith("}}}")):
            try:
                line = printed.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError("bin/dev printed no MCP configuration in time:\n"
                                     + "".join(lines)) from None
            lines.append(line)
            match = re.match(r"^HARMONIC_API_TOKEN=(\S+)$", line.strip())
            token = token or (match.group(1) if match else None)
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/markdown"}
        with httpx.Client(base_url=base, timeout=10) as http:
            for _ in range(100):
                try:
                    page = http.get("/studios/demo.md",
                                    headers={"Authorization": f"Bearer {token}"})
                    break
                except httpx.TransportError:
                    time.sleep(0.2)
            assert page.status_code == 200
            assert "create_note" not in page.text  # the studio page links to /note instead
            assert "(/studios/demo/note)" in page.text
            created = http.post("/studios/demo/note/actions/create_note", headers=headers,
                                json={"text": "Shared by an agent"})
            assert created.status_code == 201
            url = created.headers["Location"]
            assert url.startswith(base)
            html = http.get(url, follow_redirects=False)
            assert html.status_code == 302  # a person must log in first...
            login = http.get("/login").text
            csrf = re.search(r'name="csrf_token" value="([^"]+)"', login).group(1)
            http.post("/login", data={"login": "demo", "password": "demo-password",
                                      "csrf_token": csrf})
            html = http.get(url)
            assert html.status_code == 200 and "Shared by an agent" in html.text
        out = "".join(lines)
        stdio, http_conf, signed_in = (json.loads(block) for block in re.findall(
            r'^    (\{"mcpServers".*(?:\n      .*)*)', out, re.M))
        server = stdio["mcpServers"]["harmonic"]
        assert server["command"].endswith("bin/mcp-server")
        assert server["env"]["HARMONIC_API_TOKEN"] == token
        assert http_conf["mcpServers"]["harmonic"]["url"] == f"{base}/mcp"
        assert http_conf["mcpServers"]["harmonic"]["headers"] == {
            "Authorization": f"Bearer {token}"}
        # The configuration of a client that signs in: the URL only.
        assert signed_in == {"mcpServers": {"harmonic": {"type": "http", "url": f"{base}/mcp"}}}
        challenge = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert challenge.status_code == 401
        assert (f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
                in challenge.headers["WWW-Authenticate"])
        metadata = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == f"{base}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)

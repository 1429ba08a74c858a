"""The official MCP conformance suite's authorization-server scenarios against a real server:
``authorization-server-metadata-endpoint`` and ``authorization-code-grant`` (its sign-in and
consent step driven in Chromium, the suite's own callback server receiving the code)."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
from flask import Flask

from app.extensions import db
from tests.conftest import CHROMIUM
from tests.mcp.conftest import ROOT, free_port, gunicorn, node_env
from tests.mcp.test_processes import CONFORMANCE_NEXT
from tests.oauth.conftest import csrf_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = "pat-password-1"


def test_authorization_server_scenarios_pass(app: Flask, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from app.services import accounts

    with app.app_context():
        accounts.create_user("pat", "Pat", password=PASSWORD)
        db.session.commit()
    port = free_port()
    with gunicorn(app) as base:
        registered = httpx.post(base + "/oauth/register", json={
            "client_name": "Conformance", "token_endpoint_auth_method": "none",
            "redirect_uris": [f"http://127.0.0.1:{port}/callback"]}).json()
        npx, env = node_env()
        proc = subprocess.Popen(
            [*npx, "-p", CONFORMANCE_NEXT, "--", "conformance", "authorization", "--url", base,
             "--client-id", registered["client_id"], "--resource", base + "/mcp",
             "--port", str(port), "-o", str(tmp_path)],
            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: list[str] = []
        found = threading.Event()
        authorize: list[str] = []

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                if line.startswith(base + "/oauth/authorize?"):
                    authorize.append(line.strip())
                    found.set()
            found.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            assert found.wait(300) and authorize, "".join(lines)[-3000:]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page()
                page.set_default_timeout(30000)
                page.goto(authorize[0])
                page.fill("#login", "pat")
                page.fill("#password", PASSWORD)
                page.click("form.action button[type=submit]")
                page.wait_for_selector("button[value=allow]")
                assert csrf_of(page.content())
                page.click("button[value=allow]")
                page.wait_for_url(f"http://127.0.0.1:{port}/callback**")
                browser.close()
            proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
            reader.join(timeout=10)
    output = "".join(lines)
    print(output[output.find("=== "):])  # the summary, shown with -s
    if "ENOTFOUND" in output or "EAI_AGAIN" in output:
        pytest.skip("the npm registry is unreachable")
    assert proc.returncode == 0, output[-4000:]
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
    assert total is not None, output[-4000:]
    passed, failed = int(total.group(1)), int(total.group(2))
    assert failed == 0 and passed >= 3, output[-4000:]
    assert "authorization-code-grant" in output

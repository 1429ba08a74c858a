"""A real browser refuses to show our pages inside another site's frame (clickjacking)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@pytest.fixture
def other_site(live_server: str) -> Iterator[str]:
    """A page on another origin that puts our sign-in page in a frame."""
    html = (f'<!doctype html><title>other</title><iframe name="victim" '
            f'src="{live_server}/login" width="600" height="400"></iframe>').encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(html)))
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # localhost, not 127.0.0.1: another site in the browser's eyes, not only another port.
        yield f"http://localhost:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.one_backend  # the response's headers and the browser, not the database
def test_a_page_of_ours_cannot_be_framed(page: Any, live_server: str, other_site: str) -> None:
    page.goto(f"{live_server}/login")
    assert page.locator("input[name=password]").count() == 1  # shown on its own
    page.goto(other_site)  # waits for the page's load, which waits for its frame's
    frame = page.locator("iframe[name=victim]").element_handle().content_frame()
    assert frame is not None
    frame.wait_for_load_state("load")
    # Blocked: the frame holds the browser's error page, not our form.
    assert frame.locator("input[name=password]").count() == 0

"""No response of ours is shown inside another site's frame.

Every response says so twice: ``X-Frame-Options: DENY`` (older browsers) and the
Content-Security-Policy directive ``frame-ancestors 'none'`` (added to a policy the response
already has, such as a floorplan SVG's). A page inside a third party's invisible frame could
otherwise be clicked through by a signed-in person who thinks they are clicking something else
(clickjacking).

The MCP Apps views (``app.mcp.apps``) are meant to be framed, by an MCP host, and no HTTP
response of ours carries them: they travel as ``ui://`` resources inside JSON-RPC answers, and
the host writes them into a frame of its own. So no response is left out here.
"""

from __future__ import annotations

from flask import Flask, Response

FRAME_ANCESTORS = "frame-ancestors 'none'"


def _no_framing(response: Response) -> Response:
    # Runs on every response: ``add`` appends, where setting a header first removes any of
    # the same name (a second walk of the headers); ``getlist`` answers [] for a header the
    # response lacks, where ``get`` and ``in`` raise and catch an HTTP exception inside.
    headers = response.headers
    policies = headers.getlist("Content-Security-Policy")
    if not policies:
        headers.add("Content-Security-Policy", FRAME_ANCESTORS)
    elif "frame-ancestors" not in policies[0]:
        headers["Content-Security-Policy"] = f"{policies[0].rstrip('; ')}; {FRAME_ANCESTORS}"
    if not headers.getlist("X-Frame-Options"):
        headers.add("X-Frame-Options", "DENY")
    return response


def init_app(app: Flask) -> None:
    app.after_request(_no_framing)

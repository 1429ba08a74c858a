"""What a tools/call adds to the page it works on, in SQL statements: navigate costs the page's
own GET plus a fixed overhead (the MCP session, the audit row, the teach check), and
execute_action costs the action's own POST plus a fixed overhead, without reading the page
first. Counted against the same page and action over plain HTTP, so the page's own queries can
change without touching this test."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from bench.seeds import busy_studio
from bench.sqlcount import counting, page_statements
from tests.mcp.conftest import Http
from tests.mcp.test_http import _FlaskClient

pytestmark = pytest.mark.data_layer

# navigate: session read, the caller's person again (the call runs on a worker thread with a
# database session of its own), audit insert, teach check.
NAVIGATE_OVERHEAD = 4
# execute_action: the same, plus a cancellation check before it acts and one look for
# sessions subscribed to the page.
EXECUTE_OVERHEAD = 6
VOTE = {"option_title": "Option 1", "accept": True, "prefer": False}


def _statements(app: Flask, call: Any) -> tuple[int, Any]:
    # The idle-teach sweep runs at most once a minute per process, on whichever call comes
    # then: run it now, so it never lands in a counted call of a long test run.
    from app.playbooks import teach

    with app.app_context():
        teach.expire_idle(force=True)
    with counting(app) as statements:
        result = call()
    return len(statements), result


def test_navigate_and_execute_action_add_a_fixed_overhead(app: Flask, client) -> None:  # type: ignore[no-untyped-def]
    from app.extensions import db
    from app.services import seed

    with app.app_context():
        token = seed.seed_demo()
        db.session.commit()
    decision = busy_studio(app, 4)["decision"]
    http = Http("http://localhost", token, _FlaskClient(client))
    http.initialize()
    http.tool("navigate", path=decision)  # warm: the token's last use is written once
    page = page_statements(app, token, decision, "text/markdown")
    count, result = _statements(app, lambda: http.tool("navigate", path=decision))
    assert not result.get("isError"), result
    assert count <= page + NAVIGATE_OVERHEAD, (count, page)

    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    direct, response = _statements(app, lambda: client.post(
        f"{decision}/actions/vote", json=VOTE, headers=headers))
    assert response.status_code == 200, response.get_data(as_text=True)
    count, result = _statements(app, lambda: http.tool(
        "execute_action", action="vote", path=decision, params=VOTE))
    assert not result.get("isError"), result
    assert count <= direct + EXECUTE_OVERHEAD, (count, direct)

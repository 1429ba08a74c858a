"""A person in a real Chromium starts teaching on /playbooks, their agent works through the
proxy with its token, and the person stops, generates the recipe and reads it."""

from __future__ import annotations

import httpx
import pytest

from app.extensions import db

pytestmark = pytest.mark.browser


def test_teach_in_the_browser(app, page, demo, live_server) -> None:  # type: ignore[no-untyped-def]
    from app.models import User
    from app.services import tokens

    page.goto("/signup")
    page.fill("#handle", "pia")
    page.fill("#name", "Pia")
    page.fill("#password", "pia-password")
    page.click("button[type=submit]")
    page.wait_for_url("**/")
    with app.app_context():
        user = db.session.query(User).filter(User.handle == "pia").one()
        _token, plaintext = tokens.create_token(user, name="agent", scopes="read,write")
        db.session.commit()

    page.goto("/playbooks")
    form = page.locator("form[data-action=start_teach]")
    form.locator("[name=name]").fill("walls by hand")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/playbooks/*")
    assert page.locator("h1").first.inner_text() == "Playbook: walls-by-hand"

    answer = httpx.post(f"{live_server}/rpc", headers={"Authorization": f"Bearer {plaintext}"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "update_wall_parameter",
                              "params": {"elementId": 3001, "param": "Comments",
                                         "value": "Checked"}})
    assert "result" in answer.json(), answer.text

    page.reload()
    assert "update_wall_parameter" in page.locator("ol.capture").inner_text()
    page.locator("form[data-action=stop_teach] button[type=submit]").click()
    page.wait_for_load_state()
    page.locator("form[data-action=generate_recipe] button[type=submit]").click()
    page.wait_for_load_state()
    table = page.locator("table").first.inner_text()
    assert "param_value" in table and '"Checked"' in table
    assert page.locator("form[data-action=dry_run]").count() == 1
    assert page.locator("button[data-action=replay]").count() == 1  # the same form's other way

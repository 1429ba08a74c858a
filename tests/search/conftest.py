"""Search fixtures: a studio 'team' with a few items written through the actions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import join_studio


def note(agent: Any, title: str, text: str, studio: str = "team") -> str:
    made = agent.act(f"/studios/{studio}/note", "create_note", title=title, text=text)
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.get_json()["location"])


def decision(agent: Any, question: str, description: str = "", options: Any = None,
             studio: str = "team", **extra: Any) -> str:
    params: dict[str, Any] = {"question": question, "description": description, **extra}
    if options:
        params["options"] = options
    made = agent.act(f"/studios/{studio}/decide", "create_decision", **params)
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.get_json()["location"])


def commitment(agent: Any, title: str, description: str = "", studio: str = "team") -> str:
    made = agent.act(f"/studios/{studio}/commit", "create_commitment", title=title,
                     description=description, critical_mass=2)
    assert made.status_code == 201, made.get_data(as_text=True)
    return str(made.get_json()["location"])


@pytest.fixture
def team(studio: Any, make_agent: Any) -> dict[str, Any]:
    """alice (admin) and bob in 'team'; mallory in her own studio 'other' and not in team."""
    from tests.helpers import open_studio

    bob = join_studio(make_agent, "bob")
    mallory = make_agent("mallory")
    open_studio(studio.client.application, "mallory", handle="other", name="Other")
    return {"alice": studio, "bob": bob, "mallory": mallory}

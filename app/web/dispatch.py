"""In-process requests into our own routes, as a given identity.

MCP's navigate/execute_action, playbook recipes and workflow steps all call this: the request
goes through the same views, authorization and validation as a browser or an HTTP agent would,
without a network hop and without a second copy of any rule.
"""

from __future__ import annotations

import json as jsonlib
from dataclasses import dataclass, field
from typing import Any

from flask import current_app

from app.web.auth import IDENTITY_KEY, Identity


@dataclass
class Dispatched:
    status: int
    headers: dict[str, str]
    text: str
    json: Any = field(default=None)


def dispatch(method: str, path: str, identity: Identity | None, json: Any = None,
             accept: str = "text/markdown") -> Dispatched:
    """Run ``method path`` through the app as ``identity``; must be called in an app context."""
    client = current_app.test_client()
    environ = {IDENTITY_KEY: identity} if identity is not None else {}
    kwargs: dict[str, Any] = {"headers": {"Accept": accept}, "environ_base": environ}
    if json is not None or method.upper() != "GET":
        kwargs["json"] = json if json is not None else {}
    response = client.open(path, method=method.upper(), **kwargs)
    text = response.get_data(as_text=True)
    parsed = None
    if response.mimetype == "application/json":
        try:
            parsed = jsonlib.loads(text)
        except ValueError:
            parsed = None
    return Dispatched(status=response.status_code, headers=dict(response.headers), text=text,
                      json=parsed)

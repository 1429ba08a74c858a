"""What counts as a secret, for every place that redacts: playbook captures and run records
(``app.playbooks.redact``) and the MCP debug log (``app.mcp.wire``).

One definition, so a field name or token shape that one of them hides the other hides too.
Standard library only.
"""

from __future__ import annotations

import re

MARK = "[REDACTED]"
# A field whose name says it holds a secret has its whole value replaced.
SECRET_KEY = re.compile(
    r"(authori[sz]ation|token|secret|passw(or)?d|api[-_]?key|cookie|credential|private[-_]?key)",
    re.IGNORECASE)
# Secrets inside any text: a bearer credential and this app's API tokens. Group 1 is the prefix
# ("Bearer ", "hmn_"), which a log may keep to say what was there.
SECRET_TEXT = (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"),
               re.compile(r"\b(hmn_)[A-Za-z0-9_-]{8,}"))

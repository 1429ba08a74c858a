"""The agent-readable web: ``/llms.txt`` and ``/llms-full.txt`` (the llmstxt.org convention).

``/llms.txt`` says what Harmonic is, how an agent authenticates and reads pages, and lists the
pages worth starting from as links; ``/llms-full.txt`` adds the guide every MCP client reads
(``harmonic://context``), the whole URL map and every action with its parameters. Both are
written from ``app.core.agent_guide`` and the registries, so they never disagree with the MCP
surface, and both are public: they describe the app, not anybody's data.
"""

from __future__ import annotations

from flask import Blueprint, Response

from app.core import agent_guide, config

bp = Blueprint("agent_web", __name__)

# The pages an agent starts from: (title, path, what it finds there).
START_PAGES = (
    ("Home", "/", "your studios and what changed"),
    ("Studios", "/studios", "every studio you can see, and creating one"),
    ("A studio", "/studios/{handle}", "its notes, decisions, commitments and cycles"),
    ("Agent activity", "/u/{handle}/agent-activity", "what your agents did"),
)


def _head() -> list[str]:
    return ["# Harmonic", "", f"> {agent_guide.SUMMARY}", ""]


def _links() -> list[str]:
    root = config.base_url()
    lines = ["## Start here", ""]
    for title, path, about in START_PAGES:
        if "{" in path:  # a pattern, not a link: the agent fills in a handle
            lines.append(f"- {title} (`{path}.md`): {about}")
        elif path == "/":  # the home page has no .md form: ask for it as text/markdown
            lines.append(f"- [{title}]({root}/) (`Accept: text/markdown`): {about}")
        else:
            lines.append(f"- [{title}]({root}{path}.md): {about}")
    lines += ["", "## Optional", "",
              f"- [Everything in one file]({root}/llms-full.txt): the guide, the URL map and "
              "every action with its parameters", ""]
    return lines


def _text(body: str) -> Response:
    response = Response(body, mimetype="text/markdown")
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@bp.get("/llms.txt")
def llms_txt() -> Response:
    return _text("\n".join(_head() + [agent_guide.HTTP_DOOR] + _links()))


@bp.get("/llms-full.txt")
def llms_full_txt() -> Response:
    parts = _head() + [agent_guide.HTTP_DOOR, agent_guide.GUIDE, agent_guide.url_map(), "",
                       agent_guide.actions_reference()]
    return _text("\n".join(parts))

"""The MCP skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): skills that teach an
agent to work here, as ``skill://harmonic/<name>/SKILL.md`` resources plus ``skills/list`` and
``skills/get``.

Each SKILL.md is written from ``app.core.agent_guide.SKILLS`` (the steps) and, read at the time
of asking, the URL map rows, the actions those pages offer and the descriptions of the tools the
skill names: the same source as ``harmonic://context``, so the two never disagree. A skill is
one file, so its ``resources`` list is that file with its digest and size. The frontmatter in a
listing is the very mapping the file's YAML block was written from.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

import yaml

from app.actions.registry import ACTIONS
from app.core import agent_guide
from app.core.agent_guide import Skill
from app.core.jsonrpc import INVALID_PARAMS, RpcError
from app.mcp.context import ToolContext
from app.mcp.registry import REGISTRY, resource

EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
AUTHORITY = "harmonic"


def uri_of(skill: Skill) -> str:
    return f"skill://{AUTHORITY}/{skill.name}/{SKILL_FILE}"


def frontmatter(skill: Skill) -> dict[str, str]:
    return {"name": skill.name, "description": skill.description}


def text_of(skill: Skill) -> str:
    """The SKILL.md: YAML frontmatter, the steps, then the pages, actions and tools it uses."""
    head = yaml.safe_dump(frontmatter(skill), sort_keys=False, allow_unicode=True, width=1000)
    lines = [f"---\n{head}---", "", f"# {skill.title}", "", skill.steps.rstrip(), "",
             "## Pages", "", agent_guide.url_rows(skill.pages), ""]
    offered = sorted(act.name for act in ACTIONS.values() if set(act.pages) & set(skill.pages))
    if offered:
        lines += ["## Actions", ""]
        lines += [f"- `{ACTIONS[n].signature()}`: {ACTIONS[n].description}" for n in offered]
        lines.append("")
    tools = [REGISTRY.tools[name] for name in skill.tools if name in REGISTRY.tools]
    if tools:
        lines += ["## Tools", ""]
        lines += [f"- `{t.name}`: {t.description.splitlines()[0]}" for t in tools]
        lines.append("")
    lines += ["Read `harmonic://context` for the whole URL map and who you are.", ""]
    return "\n".join(lines)


@cache
def _by_uri() -> dict[str, Skill]:
    return {uri_of(skill): skill for skill in agent_guide.SKILLS}


def entry(skill: Skill) -> dict[str, Any]:
    """A skill as skills/list and skills/get give it: its uri, frontmatter and files."""
    body = text_of(skill).encode("utf-8")
    return {"uri": uri_of(skill), "frontmatter": frontmatter(skill),
            "resources": [{"uri": uri_of(skill),
                           "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                           "size": len(body)}]}


def skills_list(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    # A handful of skills: one page, so no cursor is ever handed out.
    return {"skills": [entry(skill) for skill in agent_guide.SKILLS]}


def skills_get(ctx: ToolContext, params: dict[str, Any]) -> dict[str, Any]:
    """A skill by its ``uri`` or by its ``name`` (as skills/list's frontmatter gives it)."""
    uri, name = params.get("uri"), params.get("name")
    if isinstance(uri, str):
        skill = _by_uri().get(uri)
        asked = f"no skill at {uri!r}"
    elif isinstance(name, str):
        skill = next((s for s in agent_guide.SKILLS if s.name == name), None)
        asked = f"no skill named {name!r}"
    else:
        skill, asked = None, "give the skill's uri or its name"
    if skill is None:
        names = [s.name for s in agent_guide.SKILLS]
        raise RpcError(INVALID_PARAMS, f"Invalid params: {asked}; skills: {', '.join(names)} "
                                       f"(skills/list gives each one's uri)",
                       {"uri": uri, "name": name, "skills": list(_by_uri()), "names": names})
    return {"skill": entry(skill)}


METHODS = {"skills/list": skills_list, "skills/get": skills_get}


def _register(skill: Skill) -> None:
    @resource(uri_of(skill), skill.name, skill.description, mime_type="text/markdown",
              title=skill.title)
    def read(ctx: ToolContext) -> str:
        return text_of(skill)


for _skill in agent_guide.SKILLS:
    _register(_skill)

"""Pages: a view builds a Page; ``render_page`` turns it into HTML, Markdown or JSON.

``page(...)`` registers a page and, from the same definition, its action routes:
``GET <page>/actions`` (index), ``GET <page>/actions/<name>`` (parameters) and
``POST <page>/actions/<name>`` (execute). Views never branch on the format.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import yaml
from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    g,
    jsonify,
    redirect,
    render_template,
    request,
)
from markupsafe import Markup, escape
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import BadRequest, HTTPException

from app.actions import Action, Context, observers, offered_actions
from app.actions.effects import READ
from app.actions.registry import ACTIONS, IGNORED_FORM_FIELDS, check_offered, validate_params
from app.actions.summary import action_summary, next_steps
from app.core import changes, config, declared, sitemap
from app.core.authorization import runs_as
from app.core.dispatch import BEFORE_COMMIT_KEY, FRONTMATTER_KEY
from app.db import writing
from app.extensions import db
from app.models import User, provenance
from app.services import form_receipts
from app.services.errors import Conflict, DomainError, Forbidden, Invalid, Unauthorized
from app.web import auth, call_log, forms, loaders
from app.web.auth import authorize
from app.web.chrome import csrf_token, header_links, humane
from app.web.markdown import inline
from app.web.negotiation import wants

APP_NAME = "Harmonic"
# Refusals a person's form gets back on the same page, input kept (see execute_action).
REFORM_STATUSES = (403, 404, 409, 422)


@dataclass
class Page:
    ctx: Context
    title: str
    template: str  # "notes/show" → templates/notes/show.html.j2 and notes/show.md.j2
    data: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    nav: list[tuple[str, str]] = field(default_factory=list)  # (label, href) breadcrumbs
    show_actions: bool = True  # result and error pages list no actions of their own


Loader = Callable[..., Context]
View = Callable[[Context], Page]


@dataclass(frozen=True)
class PageSpec:
    name: str
    rule: str
    loader: Loader
    view: View
    public: bool = False


PAGES: dict[str, PageSpec] = {}


def page(bp: Blueprint, name: str, rule: str, loader: Loader,
         public: bool = False) -> Callable[[View], View]:
    """Register ``view`` as the page ``name`` at ``rule``, plus its three action routes."""

    def register(view: View) -> View:
        spec = PageSpec(name, rule, loader, view, public)
        PAGES[name] = spec
        sitemap.add_page(name, rule)
        base = rule.rstrip("/")

        def show(**args: Any) -> Response:
            return render_page(view(_context(spec, args)))

        def index(**args: Any) -> Response:
            return render_actions_index(_context(spec, args))

        def describe(action_name: str, **args: Any) -> Response:
            ctx = _context(spec, args)
            return render_action_description(ctx, check_offered(ctx, action_name))

        def execute(action_name: str, **args: Any) -> Response:
            call = call_log.begin(action_name)  # its row in the call log, if it gets one
            try:
                return execute_action(spec, action_name, args, call)
            except Exception as exc:
                call_log.refused(call, exc)
                raise

        # Each of these loads the person with the page's own first read (``_context``).
        auth.LOADS_ITS_PERSON.update(f"{bp.name}.{endpoint}" for endpoint in (
            name, f"{name}__actions", f"{name}__describe", f"{name}__execute"))
        bp.add_url_rule(rule, name, show, methods=["GET"])
        bp.add_url_rule(f"{base}/actions", f"{name}__actions", index, methods=["GET"])
        bp.add_url_rule(f"{base}/actions/<action_name>", f"{name}__describe", describe,
                        methods=["GET"])
        bp.add_url_rule(f"{base}/actions/<action_name>", f"{name}__execute", execute,
                        methods=["POST"])
        return view

    return register


def _context(spec: PageSpec, args: dict[str, Any]) -> Context:
    if not spec.public and g.get("identity") is None:
        raise Unauthorized("sign in or send 'Authorization: Bearer <token>'")
    if request.method == "GET":
        authorize(READ)
    return _load(spec, args)


def _load(spec: PageSpec, args: dict[str, Any]) -> Context:
    """The page's Context from its loader. The person is read here when the request has not
    read them yet, or by the loader with its own first read (``loaders.joining``)."""
    identity = g.get("identity")
    user = g.get("user") or (identity.user_id if identity is not None else None)
    return spec.loader(user=user if loaders.joins(spec.loader) else loaders.person(user),
                       **args)


# Rendering -----------------------------------------------------------------------------------

def frontmatter(ctx: Context, title: str, actions: list[Action]) -> dict[str, Any]:
    return {
        "app": APP_NAME,
        "path": ctx.path,
        "title": title,
        "timestamp": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "actions": [action_summary(a) for a in actions],
    }


# libyaml's emitter (C) when PyYAML has it; same safe subset either way.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _yaml(data: dict[str, Any]) -> str:
    # A real serializer: nothing in a title or description can break out of its string.
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=1000)


# An action's block of the frontmatter's ``actions:`` list never changes once registered, and
# representing it (PyYAML's representer is Python even with libyaml) was most of a Markdown
# page's frontmatter time: each block is dumped once per process. (action, text) by id(action):
# the action is kept, so its id cannot be reused by another object.
_ACTION_BLOCKS: dict[int, tuple[Action, str]] = {}


def _action_block(act: Action) -> str:
    cached = _ACTION_BLOCKS.get(id(act))
    if cached is None or cached[0] is not act:
        # The block as it appears under "actions:" in a whole dump (PyYAML writes a mapping's
        # list items at the key's indentation), without that first line.
        cached = (act, _yaml({"actions": [action_summary(act)]}).split("\n", 1)[1])
        _ACTION_BLOCKS[id(act)] = cached
    return cached[1]


# A top-level entry's text does not depend on its neighbours (each starts at the margin), so a
# head of text values is the concatenation of its entries, each dumped once per distinct value:
# a page's path and title repeat from request to request, its timestamp for a second.
@lru_cache(maxsize=4096)  # bounded: titles and paths are many over a process's life
def _entry(key: str, value: str) -> str:
    return _yaml({key: value})


def head_yaml(head: dict[str, Any]) -> str:
    """``_yaml(head)`` text for text; entries whose key and value are text come cached."""
    if head and all(type(key) is str and type(value) is str for key, value in head.items()):
        return "".join(_entry(key, value) for key, value in head.items())
    return _yaml(head)


def frontmatter_yaml(head: dict[str, Any], actions: list[Action]) -> str:
    """``_yaml({**head, "actions": [action_summary(a) for a in actions]})`` text for text, from
    cached action blocks (``head``: the frontmatter without its actions)."""
    text = head_yaml({key: value for key, value in head.items() if key != "actions"})
    if not actions:
        return text + "actions: []\n"
    return text + "actions:\n" + "".join(_action_block(a) for a in actions)


def nav_line(page_: Page) -> str:
    parts = ["[Home](/)"] + [f"[{inline(label)}]({href})" for label, href in page_.nav]
    user = page_.ctx.user
    if user is not None:
        parts += [f"[{label}]({href})" for label, href in header_links(user.handle)]
        parts.append(f"Logged in as [{inline(user.name)}](/u/{user.handle})")
    return "nav: | " + " | ".join(parts) + " |"


def render_page(page_: Page) -> Response:
    fmt = wants()
    actions = offered_actions(page_.ctx) if page_.show_actions else []
    if fmt == "json":
        body = frontmatter(page_.ctx, page_.title, actions)
        body["markdown"] = _markdown_body(page_, actions)
        return _respond(jsonify(body), page_.status)
    if fmt == "md":
        head = frontmatter(page_.ctx, page_.title, [])
        block = f"---\n{frontmatter_yaml(head, actions)}---\n"
        slot = request.environ.get(FRONTMATTER_KEY)
        if isinstance(slot, list):  # an in-process caller (MCP navigate) wants it as data too
            slot.append((block, {**head, "actions": [action_summary(a) for a in actions]}))
        text = f"{block}{nav_line(page_)}\n\n{_markdown_body(page_, actions)}"
        return _respond(Response(text, mimetype="text/markdown"), page_.status)
    html = render_template(f"{page_.template}.html.j2", page=page_, ctx=page_.ctx,
                           actions=actions,
                           offered={a.name for a in actions}, **page_.data)
    return _respond(Response(html, mimetype="text/html"), page_.status)


def _markdown_body(page_: Page, actions: list[Action]) -> str:
    # ``actions`` lets a page show a worked example of an action only where it is offered.
    body = render_template(f"{page_.template}.md.j2", page=page_, ctx=page_.ctx,
                           actions=actions, **page_.data)
    if not page_.show_actions:
        return body.rstrip() + "\n"
    return body.rstrip() + "\n\n" + actions_list(page_.ctx.path, actions)


def actions_list(path: str, actions: list[Action]) -> str:
    if not actions:
        return f"## [Actions]({path.rstrip('/')}/actions)\n\nNo actions available here.\n"
    lines = [f"## [Actions]({path.rstrip('/')}/actions)", ""]
    for act in actions:
        lines.append(f"* [`{act.signature()}`]({path.rstrip('/')}/actions/{act.name})"
                     f" - {act.description}")
    return "\n".join(lines) + "\n"


def _respond(response: Response, status: int) -> Response:
    response.status_code = status  # Vary: Accept is added for every negotiated answer
    return response


def simple_page(ctx: Context, title: str, template: str, status: int = 200,
                **data: Any) -> Response:
    return render_page(Page(ctx=ctx, title=title, template=template, data=data, status=status,
                            show_actions=False))


def render_actions_index(ctx: Context) -> Response:
    actions = offered_actions(ctx)
    if wants() == "json":
        return jsonify({"path": ctx.path, "actions": [action_summary(a) for a in actions]})
    return simple_page(Context(page="actions_index", path=f"{ctx.path.rstrip('/')}/actions",
                               user=ctx.user), f"Actions for {ctx.path}", "shared/actions_index",
                       target=ctx, target_actions=actions)


def render_action_description(ctx: Context, act: Action) -> Response:
    if wants() == "json":
        summary = action_summary(act)
        summary["path"] = ctx.path
        return jsonify(summary)
    return simple_page(
        Context(page="action_description", path=f"{ctx.path.rstrip('/')}/actions/{act.name}",
                user=ctx.user),
        f"Action: {act.name}", "shared/action_description", target=ctx, act=act)


# Executing -----------------------------------------------------------------------------------

def request_params() -> tuple[dict[str, Any], bool]:
    """The flat parameters of an action POST, and whether they came from an HTML form."""
    if request.mimetype == "application/json":
        try:
            body = request.get_json(force=True, silent=False)
        except BadRequest:
            raise BadRequest("the body is not valid JSON") from None
        if body is None:
            return {}, False
        if not isinstance(body, dict):
            raise Invalid("the body must be a JSON object of parameters",
                          errors=[{"param": "(body)", "message": "must be a JSON object"}])
        return body, False
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
        # A checkbox posts a hidden "false" then "true" when ticked: the last value wins.
        return {key: values[-1] for key, values in request.form.lists()}, True
    if request.get_data():
        raise Invalid("send parameters as application/json or as a form",
                      errors=[{"param": "(body)", "message": "unsupported content type"}])
    return {}, False


def execute_action(spec: PageSpec, action_name: str, args: dict[str, Any],
                   call: call_log.DoorCall | None = None) -> Response:
    """Run ``action_name`` on the page ``spec`` names (the one path of every door); ``call``:
    this POST's row in the call log (``app.web.call_log``), when it gets one."""
    if g.get("identity") is None:
        raise Unauthorized("sign in or send 'Authorization: Bearer <token>'")
    # The one authorization question before anything else, from the action's declared effect
    # (names are unique, so the registry knows it before the page loads): a read-only token
    # runs what only reads; only the person themselves manages credentials.
    known = ACTIONS.get(action_name)
    studio = args.get("handle") if request.path.startswith("/studios/") else None
    authorize(known.effect if known else None, action_name, studio)
    # In a representation session an action of the grant runs as the principal: their rights
    # and their name on what it makes, the representative's beside it (app.models.provenance).
    session = runs_as(g.identity, action_name)
    # The representative, even in a request made inside one that already runs as the principal
    # (a replay's steps, dispatched in process with the identity it runs as).
    caller_id = (session.representative_id if session is not None else None) \
        or g.identity.user_id
    if session is not None:
        provenance.representing(caller_id)
        g.identity = replace(g.identity, user_id=session.principal_id)
        g.user = None  # the principal, loaded with the page
    # A form sent before (Back, then submit again) is answered before its page loads: what it
    # deleted is gone, but the person is shown where the first submit led.
    key = _form_key(known)
    if key is not None:
        done = form_receipts.earlier(g.identity.user_id, key)
        if done is not None:
            return _already_sent(done.location or request.path.rsplit("/actions/", 1)[0])
    ctx = _load(spec, args)
    ctx.identity = g.identity
    act = check_offered(ctx, action_name)
    raw, from_form = request_params()
    said = _check_context(ctx, act, raw, from_form, caller_id,
                          session.principal_handle if session is not None else None)
    call_log.params(call, raw)
    if call is not None and said is not None:
        call.context = said.record()
    try:
        params = validate_params(act, forms.nest(act, raw, ctx) if from_form else raw,
                                 from_form)
        with writing():  # one transaction: the change, what it records, its observers'
            result = act.handler(ctx, params)
            if key is not None:  # the form's receipt: a second submit finds it
                form_receipts.record(g.identity.user_id, key, act.name,
                                     result.location or ctx.path)
            # Subscribers hear of it after the commit, whatever the door.
            changes.record(*act.changed(ctx, result))
            observers.run(ctx, act, result)  # e.g. notifications, webhooks
            ride_along = request.environ.get(BEFORE_COMMIT_KEY)
            if ride_along is not None:  # an in-process caller's record of it (the MCP audit)
                ride_along()
            call_log.store(call)  # or this door's, in the same call log
    except DomainError as exc:
        # The page loaded and the action was offered, so a refusal now is about what the
        # person typed (a bad handle, a duplicate option, an unknown invite code): show the
        # form again, nothing saved. Agents keep their error formats (app.web.errors).
        if not (from_form and wants() == "html" and exc.http_status in REFORM_STATUSES):
            raise
        call_log.refused(call, exc)
        return _refused_form(spec, args, act, raw, exc)
    except IntegrityError:
        # The same form, sent twice at once: the other submit ran it and kept the receipt.
        first = form_receipts.location_of(g.identity.user_id, key) if key is not None else None
        if first is None:
            raise
        return _already_sent(first)
    call_log.committed(call)
    status = 201 if result.created else 200
    fmt = wants()
    if fmt == "html":
        # Show a new token or a webhook's secret once, on the page the person lands on (invite
        # links stay listed on their page). A run that happened but failed (a replay's failed
        # step) is news, not a success.
        failed = result.data.get("ok") is False or result.data.get("status") in (
            "failed", "error")
        if result.message:
            flash(people_text(result.message), "error" if failed else "success")
        for key in ("token", "secret"):
            if key in result.data:
                flash(f"{key}:{result.data[key]}", "secret")
        # flask.redirect is typed as werkzeug's base Response; it builds the app's Response.
        return redirect(result.location or ctx.path, code=303)  # type: ignore[return-value]
    steps = next_steps(act, ctx, result)
    payload = {"ok": True, "action": act.name, "message": result.message,
               "path": ctx.path, **({"location": result.location} if result.location else {}),
               "result": result.data, **({"next": steps} if steps else {})}
    if fmt == "json":
        response = jsonify(payload)
    else:
        response = simple_page(
            Context(page="action_result", path=f"{ctx.path.rstrip('/')}/actions/{act.name}",
                    user=ctx.user),
            f"Action Success: {act.name}", "shared/action_success", status=status, act=act,
            target=ctx, result=result, steps=steps)
    response.status_code = status
    if result.location:
        response.headers["Location"] = _absolute(result.location)
    return response


def _check_context(ctx: Context, act: Action, raw: dict[str, Any], from_form: bool,
                   caller_id: Any, principal: str | None) -> declared.Declared | None:
    """Check the call's declared context (``app.core.declared``: the ``context`` of a JSON
    body, taken out of the parameters, or the header) against the real caller and session;
    a studio that requires one refuses a call without it from an agent, an app, or anyone
    acting for someone (a person's own forms and tokens declare none)."""
    text = request.headers.get(declared.HEADER)
    takes_context = any(param.name == "context" for param in act.params)
    value = raw.pop("context", None) if not from_form and not takes_context else None
    if value is None and text:
        value = text
    if value is None:
        if ctx.studio is not None and ctx.studio.context_required \
                and (not g.identity.is_person or principal is not None):
            raise Forbidden(f"{ctx.studio.name} asks every call to declare its context: send "
                            f"context {{actor, visibility, intention}} (and on_behalf_of when "
                            f"acting for someone)", reason="context_required")
        return None
    found = declared.parse(value)
    caller = db.session.get(User, caller_id)
    refused = declared.mismatch(found, caller.handle if caller is not None else "", principal)
    if refused is not None:
        raise refused
    return found


# Forms ---------------------------------------------------------------------------------------

FORM_KEY = "form_key"  # a form's one-time key (app.services.form_receipts)


def once(act: Action | None) -> bool:
    """Whether a form for ``act`` is accepted once: what a repeat would do again (make a
    second note, delete twice). Idempotent actions (a vote saved again) take repeats."""
    return act is not None and not act.effect.idempotent


def form_key(action_name: str) -> str:
    """The one-time key a form for ``action_name`` carries ("" when repeats are harmless): the
    key it was drawn with when the same form comes back (refused, or after signing in again),
    else a new one."""
    if not once(ACTIONS.get(action_name)):
        return ""
    state = form_state(action_name)
    kept = state["values"].get(FORM_KEY) if state else None
    return kept if isinstance(kept, str) and form_receipts.well_formed(kept) \
        else form_receipts.new_key()


def form_guard(action_name: str) -> Markup:
    """What every people's form for ``action_name`` carries besides its fields, as hidden
    inputs: the CSRF token and, for an action that runs once, the form's one-time key (Back and
    submit again shows what the first submit made instead of making it twice). Templates draw
    it in every form (``guard`` in shared/_forms), some lists a form per row: a function, not a
    macro, as a macro call costs more than what it writes."""
    fields = f'<input type="hidden" name="csrf_token" value="{escape(csrf_token())}">\n'
    key = form_key(action_name)
    if key:
        fields += f'<input type="hidden" name="{FORM_KEY}" value="{escape(key)}">'
    return Markup(fields)  # noqa: S704 - both values escaped just above


def _form_key(act: Action | None) -> str | None:
    """The key of a person's form post for an action that runs once, if it carries one."""
    if g.identity is None or g.identity.via != "session" or not once(act) \
            or request.mimetype not in ("application/x-www-form-urlencoded",
                                        "multipart/form-data"):
        return None
    key = request.form.get(FORM_KEY)
    return key if form_receipts.well_formed(key) else None


def _already_sent(location: str) -> Response:
    message = "That form was sent before, so nothing was done twice: here is what it did."
    if wants() != "html":
        raise Conflict(message, link=location)
    flash(message, "notice")
    return redirect(location, code=303)  # type: ignore[return-value]


# A refusal in a page's own words, by action: (the error, the form as sent) → its message.
# Filled by the pages that draw their own forms (a decision's ballots: app.web.collab_pages).
REFUSAL_WORDS: dict[str, Callable[[dict[str, Any], dict[str, Any]], str]] = {}


def _refused_form(spec: PageSpec, args: dict[str, Any], act: Action, raw: dict[str, Any],
                  exc: DomainError) -> Response:
    """A person's refused form: the same page again, with what they typed, each message next
    to its field and a summary on top (``form_state`` in templates), not a dead end."""
    names = {p.name for p in act.params}
    listed = []
    for error in exc.errors or [{"param": "", "message": exc.message}]:
        param = str(error.get("param") or "")
        known = param in names
        error["message"] = _humane_message(act, param, str(error.get("message") or ""))
        words = REFUSAL_WORDS.get(act.name)
        if words is not None:  # the page's own words name the field in the message
            error["message"] = words(error, raw)
            listed.append({"anchor": "", "label": "", "message": error["message"]})
            continue
        # A part of a structured parameter ("inputs.count") is named by its own name.
        part = param.rsplit(".", 1)[-1].split("[", 1)[0] if "." in param else ""
        listed.append({"anchor": f"{act.name}-{param}" if known else "",
                       "label": humane(param) if known else humane(part) if part else "",
                       "message": error["message"]})
    state = {
        "action": act.name,
        "message": "Please check the form: nothing was saved." if exc.errors else
                   f"Not done: {people_text(exc.message)}",
        "values": {k: v for k, v in raw.items() if k not in IGNORED_FORM_FIELDS},
        "errors": {str(e.get("param")): str(e.get("message")) for e in exc.errors or []
                   if e.get("param") in names},
        "list": listed,
    }
    return show_again(spec, args, state, exc.http_status)


def show_again(spec: PageSpec, args: dict[str, Any], state: dict[str, Any],
               status: int) -> Response:
    """The page ``spec`` (URL arguments ``args``) drawn again with a form as it was sent:
    ``state`` holds the action's name, what was typed, a message and any field errors."""
    g.form_state = state
    page_ = spec.view(_load(spec, args))
    page_.status = status
    return render_page(page_)


def action_at(path: str) -> tuple[PageSpec, dict[str, Any], Action] | None:
    """The page and action a form posts to at ``path`` (``<page>/actions/<name>``), if any."""
    try:
        endpoint, matched = current_app.url_map.bind_to_environ(request.environ).match(
            path, method="POST")
    except HTTPException:
        return None
    args = dict(matched)
    name = str(endpoint).rsplit(".", 1)[-1]
    spec = PAGES.get(name.removesuffix("__execute")) if name.endswith("__execute") else None
    act = ACTIONS.get(str(args.pop("action_name", "")))
    if spec is None or act is None:
        return None
    return spec, args, act


_ACTION_NOTE = re.compile(r"\s*\((?:action|actions|see|use|run) [a-z]+_[a-z_]+"
                          r"(?:(?:, | or | and )[a-z]+_[a-z_]+)*\)")
_ACTION_NAME = re.compile(r"[`'‘]?\b([a-z]+(?:_[a-z]+)+)\b[`'’]?")


def people_text(message: str) -> str:
    """A message written for every door, said for a person: no "(action restore_item)"
    pointers, and an action named by what its button says ("Confirm studio deletion")."""
    text = _ACTION_NOTE.sub("", message)

    def titled(match: re.Match[str]) -> str:
        act = ACTIONS.get(match.group(1))
        if act is None:
            return match.group(0)
        # At the start it names what was done ("resize_room Office" → "Resize room Office").
        return act.title() if match.start() == 0 else f"“{act.title()}”"

    return _ACTION_NAME.sub(titled, text)


def _humane_message(act: Action, param: str, message: str) -> str:
    """A refusal in a person's words: "must match [a-z0-9-]{2,40}" says what the field
    takes instead (its description), agents keep the exact rule in their formats."""
    declared = act.param(param)
    if message.startswith("must match ") and declared is not None:
        return f"not in the expected form: {declared.description}"
    return message


def form_state(action_name: str | None = None) -> dict[str, Any] | None:
    """The refused form being shown again (for ``action_name``, or any when None)."""
    state: dict[str, Any] | None = g.get("form_state")
    if state is None or (action_name is not None and state["action"] != action_name):
        return None
    return state


def _absolute(location: str) -> str:
    return location if location.startswith("http") else f"{config.base_url()}{location}"

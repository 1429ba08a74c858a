"""The authorization matrix, generated from the page and action registries.

One seeded studio holds a sample of every page kind. Each cell is (page, action, identity); the
expected outcome comes from two small tables — who may see a page (by its URL rule) and who an
authorization rule admits (by the rule's name) — never from a list of rows. A new page or
action enters the matrix by itself; a new *kind* of rule or page fails the matrix until it is
classified here, which is the point.

Identities: ``anonymous``, ``nonmember``, ``member``, ``creator`` (made every sample item),
``admin`` (owns the studio), ``guest`` (a read-only member: every action that writes is
refused, whatever its rule), and three more tokens of the creator: ``readonly`` (read scope),
``expired`` and ``revoked``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask

from app.actions.registry import ACTIONS, Action
from app.web.pages import PAGES, PageSpec

PASSWORD = "matrix-password-1"
ROLES = ("nonmember", "member", "creator", "admin", "guest")
SIGNED_IN = frozenset(ROLES)
MEMBERS = frozenset({"member", "creator", "admin"})
READERS = MEMBERS | {"guest"}  # who sees a studio's pages
CREATOR = frozenset({"creator"})
TOKEN_ONLY = ("readonly", "expired", "revoked")
IDENTITIES = ("anonymous", *ROLES, *TOKEN_ONLY)
HANDLES = {"nonmember": "nora", "member": "mia", "creator": "carol", "admin": "adam",
           "guest": "gus"}
# An unknown parameter: authorization runs before validation, so a caller who may run the
# action gets 422 naming it (or 409 when the action is not available in this state), and a
# caller who may not gets 401/403/404. Nothing is ever changed by a matrix request.
PROBE = {"zz_matrix_probe": 1}

# Pages whose sample needs a finished run; their loaders share the owner check with the run
# pages' own tests (tests/playbooks, tests/workflows).
NEEDS_A_RUN = {"playbook_run", "playbook_orphan_run", "run"}


def audience(spec: PageSpec) -> frozenset[str]:
    """Who may open a page, by its URL rule (the subject of /u/<h>/... pages is the creator)."""
    rule = spec.rule
    if spec.public:
        return frozenset(IDENTITIES) - {"expired", "revoked"}
    if rule == "/studios/<handle>/join":
        return SIGNED_IN
    if rule == "/studios/<handle>/invites":
        return frozenset({"admin"})
    if rule.startswith("/studios/<handle>"):
        return READERS
    if rule.startswith("/u/<user_handle>/"):
        return CREATOR
    if rule.startswith(("/playbooks/<", "/runs/<", "/webhooks/<")):
        return CREATOR  # (the sample webhook is the creator's own)
    return SIGNED_IN


def rule_admits(act: Action, spec: PageSpec) -> frozenset[str]:
    """Who the action's authorization rule admits on a sample page (before page visibility)."""
    name = getattr(act.authorize, "__name__", repr(act.authorize))
    has_item = "<" in spec.rule.removeprefix("/studios/<handle>")
    table: dict[str, frozenset[str]] = {
        "signed_in": SIGNED_IN,
        "member": READERS,  # a guest passes the rule; the registry then refuses its writes
        "admin": frozenset({"admin"}),
        "creator": CREATOR,
        "non_member": frozenset({"nonmember"}),
        "self_user": CREATOR,  # the sample user pages are the creator's
        "owner_rule": CREATOR if has_item else SIGNED_IN,  # a playbook's owner
        # The sample playbook is not shared with a studio: its owner alone reads and replays
        # it and retires its versions; nobody reviews or approves it (that needs a studio;
        # tests/playbooks/test_governance.py covers shared playbooks).
        "reader_rule": CREATOR,
        "retire_rule": CREATOR,
        "review_rule": frozenset(),
        "approve_rule": frozenset(),
        "option_proposer": READERS,  # the sample decision is open to members' options
        "voter": READERS,  # every member votes on the sample decision (no voters rule)
        # delete or edit an item: its creator (the sample items are carol's) or an admin
        "creator_or_admin": CREATOR | {"admin"},
        # create_webhook: a studio's admins on its webhooks page, a person on their own
        "_may_register": (frozenset({"admin"}) if spec.rule.startswith("/studios/")
                          else CREATOR),
    }
    if name not in table:
        raise AssertionError(f"classify the authorization rule {name} of {act.name} in "
                             f"tests/security/matrix.py")
    admitted = table[name]
    if spec.rule.startswith("/studios/<handle>") and act.effect.writes and not act.guests:
        admitted -= {"guest"}  # Action.refusal: in its studio, a guest runs only what reads
    return admitted


def allowed(act: Action, spec: PageSpec) -> frozenset[str]:
    return audience(spec) & rule_admits(act, spec)


@dataclass
class Studio:
    """The seeded studio: sample paths by page name, and a Bearer token per identity."""

    paths: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)

    def cells(self) -> list[tuple[str, PageSpec, Action]]:
        """(sample path, page, action) for every action on every sampled page."""
        return [(self.paths[name], spec, act) for name, spec in PAGES.items()
                if name in self.paths for act in ACTIONS.values() if name in act.pages]


def seed(app: Flask, make_agent: Any) -> Studio:
    """Make the people, the studio and one sample of every page kind, through the app."""
    from app.extensions import db
    from app.models import ApiToken
    from app.services import tokens
    from app.workflows import catalog
    from tests.helpers import open_studio

    agents = {role: make_agent(handle, password=PASSWORD) for role, handle in HANDLES.items()}
    open_studio(app, "adam")
    for role in ("member", "creator", "guest"):
        assert agents[role].act("/studios/team/join", "join_studio").status_code == 200
    assert agents["admin"].act("/studios/team/team", "change_role", handle="gus",
                               role="guest").status_code == 200
    invite = agents["admin"].act("/studios/team/invites", "create_invite")
    assert invite.status_code == 201, invite.get_data(as_text=True)
    carol = agents["creator"]

    def made(page: str, action: str, **params: Any) -> str:
        response = carol.act(page, action, **params)
        assert response.status_code == 201, (action, response.get_data(as_text=True))
        return response.json["location"]

    note = made("/studios/team/note", "create_note", text="matrix note")
    decision = made("/studios/team/decide", "create_decision", question="Matrix?",
                    options_open=True)
    commitment = made("/studios/team/commit", "create_commitment", title="Matrix",
                      critical_mass=2)
    floorplan = made("/studios/team/floorplans", "create_floorplan", name="matrix")
    playbook = made("/playbooks", "start_teach", name="matrix")
    assert carol.act(playbook, "stop_teach").status_code == 200
    rule = agents["admin"].act("/studios/team/automations", "create_automation",
                               name="Matrix", trigger="manual", effect="notify", text="hi")
    assert rule.status_code == 201, rule.get_data(as_text=True)
    with app.app_context():
        workflow = catalog.entries()[0].name
        hook = _webhook_of(app, "carol")
    fill = {"handle": "team", "user_handle": "carol", "note_id": note.rsplit("/", 1)[1],
            "decision_id": decision.rsplit("/", 1)[1],
            "commitment_id": commitment.rsplit("/", 1)[1], "cycle_name": "today",
            "name": floorplan.rsplit("/", 1)[1], "playbook_id": playbook.rsplit("/", 1)[1],
            "hook_id": hook, "code": invite.json["result"]["code"],
            "rule_id": rule.json["result"]["id"],
            "int:number": "1"}  # a floorplan's first version
    result = Studio()
    for name, spec in PAGES.items():
        if name in NEEDS_A_RUN:
            continue
        values = dict(fill, name=workflow) if spec.rule.startswith("/workflows/") else fill
        path = spec.rule
        for key, value in values.items():
            path = path.replace(f"<{key}>", value)
        assert "<" not in path, f"no sample for the page {name} ({spec.rule}): add one to seed()"
        result.paths[name] = path

    result.tokens = {role: agent.token for role, agent in agents.items()}
    with app.app_context():
        from app.models import User

        user = db.session.query(User).filter(User.handle == "carol").one()
        _, result.tokens["readonly"] = tokens.create_token(user, "read only", scopes="read")
        expired, result.tokens["expired"] = tokens.create_token(user, "expired")
        expired.expires_at = datetime.now(UTC) - timedelta(minutes=1)
        revoked, result.tokens["revoked"] = tokens.create_token(user, "revoked")
        db.session.flush()
        tokens.revoke(user, str(revoked.id))
        db.session.commit()
        assert db.session.query(ApiToken).count() >= 7
    return result


def _webhook_of(app: Flask, handle: str) -> str:
    """A personal webhook of ``handle`` (stored directly: the matrix app allows no URL)."""
    from app.extensions import db
    from app.models import User
    from app.models.notifications import Webhook

    user = db.session.query(User).filter(User.handle == handle).one()
    hook = Webhook(owner_id=user.id, url="http://127.0.0.1:9/matrix", secret="whsec_matrix",
                   active=True)
    hook.assign_ids()
    db.session.add(hook)
    db.session.commit()
    return hook.short_id


def expected_post(identity: str, act: Action, spec: PageSpec) -> set[int]:
    """The statuses a probe POST may get; 409/422 mean the caller got past authorization."""
    if identity in ("anonymous", "expired", "revoked"):
        return {401}
    if identity == "readonly":
        if act.effect.writes:
            return {403}  # the write scope is checked before anything else
        identity = "creator"  # an action that only reads needs no more than a read token
    if identity not in audience(spec):
        return {403, 404}  # 404: playbooks do not reveal that someone else's exist
    if identity not in rule_admits(act, spec):
        return {403}
    return {409, 422}


def expected_get(identity: str, spec: PageSpec) -> set[int]:
    if identity in ("expired", "revoked"):
        return {401}
    who = "creator" if identity == "readonly" else identity
    if who in audience(spec):
        return {200}
    return {401} if identity == "anonymous" else {403, 404}


# -- tokens of every kind × every door (test_identity_matrix.py) -------------------------------
#
# Who holds the token and which scopes it carries decide, with the effect the tool or action
# declares, whether it may run: the expectation below is the rule as documented, restated, and
# never a list of cells.

TOKEN_KINDS = {"read token": ("person", ("read",)),
               "write token": ("person", ("read", "write")),
               "OAuth read": ("grant", ("read",)),
               "OAuth write": ("grant", ("read", "write")),
               "agent token": ("agent", ("read", "write"))}
MCP_DOORS = ("stdio", "HTTP 2025-11-25", "HTTP 2026-07-28")
DOORS = (*MCP_DOORS, "Markdown POST")


def may_run(identity: str, effect: Any) -> bool:
    """Whether a token of this kind may run what has ``effect``: what writes needs ``write``;
    what manages credentials is the person's own."""
    kind, scopes = TOKEN_KINDS[identity]
    if ("write" if effect.writes else "read") not in scopes:
        return False
    return not (effect.credentials and kind != "person")


def refusal_scope(identity: str, effect: Any) -> str | None:
    """The scope a refusal names when the token lacks one (None: refused for what it is)."""
    _kind, scopes = TOKEN_KINDS[identity]
    needed = "write" if effect.writes else "read"
    return needed if needed not in scopes else None

"""Teach sessions end with the grant or agent that started them (``app.services.revocation``).

A session started by a revoked OAuth grant's token or agent stops recording: its capture is
finished as ``teach_stop`` would (summary written, entries counted) and kept for its owner,
who can still turn it into a recipe.
"""

from __future__ import annotations

from sqlalchemy import or_, select

from app.core import changes
from app.extensions import db
from app.models.base import utcnow
from app.models.mcp import McpSession
from app.models.playbooks import Playbook
from app.playbooks import capture, teach
from app.services import revocation


@revocation.ends
def stop_teaching(ended: revocation.Ended) -> None:
    made = ended.made(Playbook.made_by_token_id, Playbook.made_by_grant_id, Playbook.user_id)
    if made is None:
        return
    # Sessions started before provenance was recorded are found by their owner key: a token's,
    # or an MCP session of one of those tokens.
    owners = [f"token:{token}" for token in ended.tokens]
    sessions = ended.made(McpSession.token_id, McpSession.grant_id, McpSession.user_id)
    if sessions is not None:
        owners += [f"mcp:{sid}" for sid in db.session.scalars(select(McpSession.id)
                                                               .where(sessions))]
    condition = or_(made, Playbook.owner.in_(owners)) if owners else made
    for playbook in db.session.scalars(select(Playbook).where(Playbook.teaching.is_(True),
                                                              condition)):
        created = playbook.created_at.replace(microsecond=0).isoformat()
        try:
            playbook.entries = capture.finish(teach.folder(playbook), playbook.name,
                                              playbook.session_id, playbook.upstream,
                                              playbook.owner, created)
        except OSError:
            pass  # the capture stays as recorded; the session stops all the same
        playbook.teaching = False
        playbook.stopped_at = utcnow()
        changes.record(f"/playbooks/{playbook.short_id}",
                       f"playbook://{playbook.short_id}/capture")

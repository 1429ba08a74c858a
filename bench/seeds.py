"""Busy data for the benchmarks, made through the services (the same rules as the app).

``busy_studio(app, n)`` fills the demo studio with a decision of ``n`` options voted on by
``5 * n // 2`` people (20 options and 50 voters for n = 20), a commitment they all joined, a note
they all confirmed reading with ``n`` comments, pins and links: every list a page shows grows
with ``n``. Returns the paths of the pages.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, text


def busy_studio(app: Any, n: int = 20, prefix: str = "p") -> dict[str, str]:
    from app.extensions import db
    from app.models import Studio, User
    from app.services import (
        accounts,
        commitments,
        decisions,
        heartbeats,
        items,
        notes,
        studios,
    )

    with app.app_context():
        owner = db.session.execute(select(User).where(User.handle == "demo")).scalar_one()
        studio = db.session.execute(select(Studio).where(Studio.handle == "demo")).scalar_one()
        base = app.config.get("HARMONIC_BASE_URL", "")
        decision = decisions.create_decision(studio, owner, f"Busy decision {prefix}",
                                             description="Which options work for you?",
                                             deadline="7d")
        options = [decisions.add_option(decision, owner, f"Option {i}") for i in range(n)]
        commitment = commitments.create_commitment(studio, owner, f"Busy commitment {prefix}",
                                                   critical_mass=3, deadline="7d")
        note = notes.create_note(studio, owner, text=f"Busy note {prefix}", title=f"Busy {prefix}")
        db.session.flush()
        people = []
        for i in range(max(5 * n // 2, 1)):
            user = accounts.create_user(f"{prefix}{i}", f"Person {prefix}{i}")
            studios.join(studio, user)
            people.append(user)
        db.session.flush()
        for i, user in enumerate(people):
            decisions.vote(decision, user, [
                decisions.Ballot(o.title, accept=(i + j) % 3 != 0, prefer=(i + j) % 7 == 0)
                for j, o in enumerate(options)])
            commitments.join(commitment, user)
            notes.confirm_read(note, user)
            heartbeats.send(studio, user)
        decision_path = items.path_of(studio, "decision", decision)
        for i in range(n):
            author = people[i % len(people)]
            notes.add_comment(studio, author, "decision", decision.id,
                              f"Comment {i} on {base}{decision_path}", base_url=base)
            notes.add_comment(studio, author, "note", note.id, f"Comment {i}", base_url=base)
            notes.create_note(studio, author, text=f"See {base}{decision_path}",
                              title=f"Linking note {prefix}{i}", base_url=base)
        for kind, item in (("decision", decision), ("commitment", commitment), ("note", note)):
            studios.pin(studio, owner, kind, item.id)
        db.session.commit()
        if db.engine.dialect.name == "postgresql":
            # The planner's statistics of the tables just filled, as autovacuum gathers them
            # within a minute of such a load: without them PostgreSQL plans the vote tally as
            # for six votes, not a thousand (1.0 ms a read instead of 0.4).
            db.session.execute(text("ANALYZE"))
            db.session.commit()
        return {
            "studio": "/studios/demo",
            "decision": decision_path,
            "commitment": items.path_of(studio, "commitment", commitment),
            "note": items.path_of(studio, "note", note),
            "team": "/studios/demo/team",
            "backlinks": "/studios/demo/backlinks",
            "cycle": "/studios/demo/cycles/this-week",
        }

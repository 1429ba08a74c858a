"""The demo data ``bin/dev`` loads: idempotent, so running it twice changes nothing."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models import Studio, User
from app.services import accounts, commitments, decisions, notes, studios, tokens

DEMO_NOTES = (
    ("Welcome to the demo studio",
     "This studio is where people and agents work side by side.\n\n"
     "* Write a **note** to share an observation.\n"
     "* Open any page with `Accept: text/markdown` to see what an agent sees."),
    ("How we work", "We confirm reading notes so everyone knows what everyone knows."),
)


def seed_demo() -> str:
    """Create the demo user and studio if missing; return a fresh plaintext API token."""
    user = db.session.scalars(select(User).where(User.handle == "demo")).one_or_none()
    if user is None:
        user = accounts.create_user("demo", "Demo Person", email="demo@example.com",
                                    password="demo-password")
    studio = db.session.scalars(select(Studio).where(Studio.handle == "demo")).one_or_none()
    if studio is None:
        studio = studios.create_studio(user, handle="demo", name="Demo Studio",
                                       description="A place to try Harmonic.",
                                       join_policy="open", heartbeats_required=False)
        for title, text in DEMO_NOTES:
            notes.create_note(studio, user, text=text, title=title)
        decision = decisions.create_decision(
            studio, user, "When should we meet each week?",
            description="Accept every option that works for you; star your favourite.",
            deadline="7d")
        for title in ("Monday 10:00", "Wednesday 14:00", "Friday 09:00"):
            decisions.add_option(decision, user, title)
        commitments.create_commitment(
            studio, user, "Pair on the onboarding guide", critical_mass=2,
            description="We go ahead once two people commit.", deadline="14d")
    _token, plaintext = tokens.create_token(user, name="bin/dev demo token", expires="30d")
    return plaintext

"""A decision's outcome: the columns a closed decision carries once its creator (or a studio
admin) writes what was decided, and the review date that reminds its people.

A mixin of ``Decision`` (``app.models.collab``): the outcome is one per decision and is
replaced when edited (its earlier text is kept as a revision), so it needs no table of its own.
The option and the author are plain ids, as ``Represented`` keeps its person: a foreign key
from decisions to their options would make the two tables refer to each other (a cycle in the
order tables are written and emptied in) and the decision's relationships ambiguous. The
service checks both when it writes them (``app.services.outcomes``).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import UTCDateTime, Uuid


class DecisionOutcome:
    # The statement (Markdown, rendered through the sanitizer as all user text); None until
    # one is written.
    outcome_statement: Mapped[str | None] = mapped_column(Text, default=None)
    # The option it picks, if any (one of the decision's own).
    outcome_option_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, default=None)
    outcome_review_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # When its people were told the review date came; None again when the date moves.
    outcome_reminded_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    outcome_by_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, default=None)
    outcome_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)

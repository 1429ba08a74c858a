"""The outcome action on a decision's page: once it has closed, its creator (or a studio
admin) writes what was decided, may pick an option and may set a review date
(``app.services.outcomes``, which checks every rule again)."""

from __future__ import annotations

from typing import Any

from app.actions import rules
from app.actions.effects import IDEMPOTENT_WRITE
from app.actions.registry import Context, Param, Result, action
from app.services import decisions, outcomes

STATEMENT = Param("statement", "text", "What was decided, in Markdown; @handle tells that "
                  "member", required=True, max_length=outcomes.STATEMENT_MAX)
OPTION_TITLE = Param("option_title", "string", "Optional: the option the outcome picks, by "
                     "its title as the page lists it (left out: none)",
                     max_length=decisions.OPTION_MAX)
REVIEW_AT = Param("review_at", "datetime", "Optional: when to look at this outcome again; its "
                  "people (the decision's creator, its voters, the outcome's author) are "
                  "reminded then. Without an offset it is the studio's local time; left out "
                  "or 'none': no review")


def _prefill(ctx: Context) -> dict[str, Any]:
    item = ctx.item
    if item.outcome_statement is None:
        return {}
    shown = outcomes.shown(item, [])
    return {"statement": item.outcome_statement,
            "option_title": shown.option_title if shown is not None else None,
            "review_at": outcomes.review_value(item, ctx.studio)}


@action("write_outcome", "Write the outcome of this closed decision: a statement of what was "
        "decided, optionally the option it picks and a review date; writing again replaces "
        "it (the earlier one stays in the history)", "decision", rules.creator_or_admin,
        available=lambda ctx: ctx.item.closed,
        unavailable_reason=lambda ctx: outcomes.not_yet(ctx.item),
        label=lambda ctx: ("Edit the outcome" if ctx.item.outcome_statement is not None
                           else "Write the outcome"),
        params=(STATEMENT, OPTION_TITLE, REVIEW_AT), effect=IDEMPOTENT_WRITE,
        prefill=_prefill,
        choices=lambda ctx: {"option_title": outcomes.option_titles(ctx.item)})
def write_outcome(ctx: Context, p: dict[str, Any]) -> Result:
    decision = outcomes.write(ctx.item, ctx.studio, ctx.user, p.get("statement"),
                              p.get("option_title"), p.get("review_at"))
    shown = outcomes.shown(decision, [])
    assert shown is not None
    review = shown.review_at.isoformat() if shown.review_at is not None else None
    return Result("Outcome saved.", ctx.path,
                  data={"statement": shown.statement, "option_title": shown.option_title,
                        "review_at": review})

"""Running a search: ranked, highlighted and paginated, on SQLite FTS5 or PostgreSQL.

One function, ``search``, with the backend chosen by the database's dialect:

- SQLite: ``search_fts MATCH`` with every word and phrase quoted (nothing a person types is
  FTS syntax), ranked by ``bm25`` with the title weighted above the body, ``highlight`` and
  ``snippet`` for the marked title and excerpt;
- PostgreSQL: the generated ``tsv`` column (GIN index) against ``plainto_tsquery`` and
  ``phraseto_tsquery`` terms, ranked by ``ts_rank_cd``; ``ts_headline`` runs only on the rows
  of the page shown.

Visibility is part of the query: public rows, rows the caller owns, and rows of the studios
the caller passes (the adapters pass the studios whose pages the caller may open). Pages are
offsets with a bound: at most ``MAX_LIMIT`` rows a page and ``MAX_OFFSET`` rows deep.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import (
    Select,
    Table,
    and_,
    bindparam,
    column,
    false,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)

from app.extensions import db
from app.models import Studio, User
from app.models.search import FTS_TABLE, SearchDocument
from app.search.documents import MARK_END, MARK_START
from app.search.query import Query
from app.services.errors import Invalid

DOCS = cast(Table, SearchDocument.__table__)
FTS = table(FTS_TABLE, column("rowid"), column("title"), column("body"))
DEFAULT_LIMIT = 20
MAX_LIMIT = 50
MAX_OFFSET = 1000
SNIPPET_WORDS = 24
TITLE_WEIGHT = 8.0  # bm25: a word in the title counts this many times one in the body
LANGUAGE = "english"  # PostgreSQL's text search configuration (the migration's too)


@dataclass
class Hit:
    kind: str
    title: str  # with highlight markers
    snippet: str  # with highlight markers
    path: str
    studio_handle: str | None
    studio_name: str | None
    author_handle: str | None
    author_name: str | None
    updated_at: datetime
    deadline: datetime | None
    status: str | None
    score: float


@dataclass
class Results:
    query: Query
    hits: list[Hit] = field(default_factory=list)
    page: int = 1
    limit: int = DEFAULT_LIMIT
    has_next: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. "no studio 'x' among yours"


def page_bounds(page: Any, limit: Any) -> tuple[int, int]:
    """``page`` (1-based) and ``limit`` from request text, checked; Invalid names the bound."""
    try:
        number = int(page) if page not in (None, "") else 1
        size = int(limit) if limit not in (None, "") else DEFAULT_LIMIT
    except (TypeError, ValueError):
        raise Invalid("page and limit must be whole numbers",
                      errors=[{"param": "page", "message": "must be a whole number"}]) from None
    if not 1 <= size <= MAX_LIMIT:
        raise Invalid(f"limit must be between 1 and {MAX_LIMIT}",
                      errors=[{"param": "limit", "message": f"1 to {MAX_LIMIT}"}])
    if number < 1 or (number - 1) * size > MAX_OFFSET:
        deepest = MAX_OFFSET // size + 1
        raise Invalid(f"page must be between 1 and {deepest} (results go {MAX_OFFSET} deep): "
                      "add words or filters to narrow the search",
                      errors=[{"param": "page", "message": f"1 to {deepest}"}])
    return number, size


def search(query: Query, user: User, studio_ids: list[uuid.UUID], page: int = 1,
           limit: int = DEFAULT_LIMIT, now: datetime | None = None) -> Results:
    """The page ``page`` of what ``user`` may see that matches ``query``."""
    results = Results(query=query, page=page, limit=limit)
    if query.empty:
        return results
    where = [_visible(user, studio_ids)] + _filters(query, studio_ids, results,
                                                     now or datetime.now(UTC))
    dialect = db.session.get_bind().dialect.name
    run = _postgresql if dialect == "postgresql" else _sqlite
    rows = run(query, where, limit + 1, (page - 1) * limit)
    results.has_next = len(rows) > limit
    results.hits = _hits(rows[:limit])
    return results


def _visible(user: User, studio_ids: list[uuid.UUID]) -> Any:
    mine = [DOCS.c.public.is_(True), DOCS.c.owner_id == user.id]
    if studio_ids:
        mine.append(DOCS.c.studio_id.in_(studio_ids))
    return or_(*mine)


def _filters(query: Query, studio_ids: list[uuid.UUID], results: Results,
             now: datetime) -> list[Any]:
    where: list[Any] = []
    if query.kinds:
        where.append(DOCS.c.kind.in_(query.kinds))
    if query.status == "open":
        where.append(DOCS.c.deadline > now)
    elif query.status == "closed":
        where.append(DOCS.c.deadline <= now)
    elif query.status:
        where.append(DOCS.c.status == query.status)
    if query.author:
        where.append(DOCS.c.author_id.in_(select(User.id).where(User.handle == query.author)))
    if query.studio:
        found = db.session.scalar(select(Studio.id).where(Studio.handle == query.studio))
        if found is None or found not in studio_ids:
            # The same words whether the studio exists or not: a search tells no secrets.
            results.notes.append(f"no studio '{query.studio}' among the studios you can read")
            where.append(false())
        else:
            where.append(DOCS.c.studio_id == found)
    return where


STUDIOS = cast(Table, Studio.__table__).alias("s")
AUTHORS = cast(Table, User.__table__).alias("u")
# Who and where, joined in the statement that returns the page's rows (no second query).
NAMES = [STUDIOS.c.handle.label("studio_handle"), STUDIOS.c.name.label("studio_name"),
         AUTHORS.c.handle.label("author_handle"), AUTHORS.c.name.label("author_name")]


def _named(source: Any, studio_id: Any, author_id: Any) -> Any:
    return (source.outerjoin(STUDIOS, STUDIOS.c.id == studio_id)
            .outerjoin(AUTHORS, AUTHORS.c.id == author_id))


def _columns() -> list[Any]:
    return [DOCS.c.id, DOCS.c.kind, DOCS.c.path, DOCS.c.studio_id, DOCS.c.author_id,
            DOCS.c.updated_at, DOCS.c.deadline, DOCS.c.status]


def _fts_match(query: Query) -> str:
    """Each word and phrase as an FTS5 string (a quote doubled): an implicit AND of phrases."""
    return " ".join('"' + term.replace('"', '""') + '"' for term in query.terms)


def _sqlite(query: Query, where: list[Any], limit: int, offset: int) -> list[Any]:
    if not query.terms:
        return _recent(where, limit, offset)
    start, end = _quoted(MARK_START), _quoted(MARK_END)
    score: Any = literal_column(f"bm25({FTS_TABLE}, {TITLE_WEIGHT}, 1.0)")
    match = text(f"{FTS_TABLE} MATCH :match").bindparams(match=_fts_match(query))
    # Two steps: rank every match (ids and scores only), then highlight the page's rows alone
    # (snippet() on every match would cost a snippet per match).
    page = (select(DOCS.c.id).select_from(FTS.join(DOCS, DOCS.c.id == FTS.c.rowid))
            .where(match, *where).order_by(score, DOCS.c.id).limit(limit).offset(offset))
    ids = list(db.session.scalars(page))
    if not ids:
        return []
    stmt = (select(*_columns(),
                   literal_column(f"highlight({FTS_TABLE}, 0, {start}, {end})").label("title_hl"),
                   literal_column(f"snippet({FTS_TABLE}, 1, {start}, {end}, '…', "
                                  f"{SNIPPET_WORDS})").label("snippet"),
                   score.label("score"), *NAMES)
            .select_from(_named(FTS.join(DOCS, DOCS.c.id == FTS.c.rowid), DOCS.c.studio_id,
                                DOCS.c.author_id))
            .where(match, FTS.c.rowid.in_(ids)))
    rows = {row.id: row for row in db.session.execute(stmt)}
    return [rows[i] for i in ids if i in rows]


def _quoted(marker: str) -> str:
    return "'" + marker + "'"


def _tsquery(query: Query) -> Any:
    parts = [func.plainto_tsquery(LANGUAGE, bindparam(f"w{i}", word))
             for i, word in enumerate(query.words)]
    parts += [func.phraseto_tsquery(LANGUAGE, bindparam(f"p{i}", phrase))
              for i, phrase in enumerate(query.phrases)]
    combined: Any = parts[0]
    for part in parts[1:]:
        combined = combined.op("&&")(part)
    return combined


def _postgresql(query: Query, where: list[Any], limit: int, offset: int) -> list[Any]:
    if not query.terms:
        return _recent(where, limit, offset)
    tsv: Any = column("tsv")
    tsq = _tsquery(query)
    score = func.ts_rank_cd(tsv, tsq, 1)  # 1: divided by 1 + log(length)
    ranked = (select(*_columns(), DOCS.c.title, DOCS.c.body, score.label("score"))
              .select_from(DOCS).where(tsv.op("@@")(tsq), *where)
              .order_by(score.desc(), DOCS.c.id).limit(limit).offset(offset)
              .subquery("ranked"))
    options = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxWords={SNIPPET_WORDS}, "
               f"MinWords=8, MaxFragments=2, FragmentDelimiter=\" … \"")
    stmt: Select[Any] = select(
        *[ranked.c[c.name] for c in _columns()],
        func.ts_headline(LANGUAGE, ranked.c.title, _tsquery(query),
                         f"HighlightAll=true, StartSel={MARK_START}, StopSel={MARK_END}"
                         ).label("title_hl"),
        func.ts_headline(LANGUAGE, ranked.c.body, _tsquery(query), options).label("snippet"),
        ranked.c.score, *NAMES).select_from(
            _named(ranked, ranked.c.studio_id, ranked.c.author_id)
        ).order_by(ranked.c.score.desc(), ranked.c.id)
    params = {f"w{i}": w for i, w in enumerate(query.words)}
    params.update({f"p{i}": p for i, p in enumerate(query.phrases)})
    return list(db.session.execute(stmt, params))


def _recent(where: list[Any], limit: int, offset: int) -> list[Any]:
    """Filters without words: the newest first, the text's start as the excerpt."""
    stmt = (select(*_columns(), DOCS.c.title.label("title_hl"),
                   func.substr(DOCS.c.body, 1, 200).label("snippet"),
                   literal_column("0").label("score"), *NAMES)
            .select_from(_named(DOCS, DOCS.c.studio_id, DOCS.c.author_id))
            .where(and_(*where)).order_by(DOCS.c.updated_at.desc(), DOCS.c.id.desc())
            .limit(limit).offset(offset))
    return list(db.session.execute(stmt))


def _hits(rows: list[Any]) -> list[Hit]:
    hits = []
    for row in rows:
        path = row.path if row.path.startswith("/") or row.studio_handle is None \
            else f"/studios/{row.studio_handle}/{row.path}"
        hits.append(Hit(kind=row.kind, title=row.title_hl or "", snippet=row.snippet or "",
                        path=path, studio_handle=row.studio_handle, studio_name=row.studio_name,
                        author_handle=row.author_handle, author_name=row.author_name,
                        updated_at=row.updated_at, deadline=row.deadline, status=row.status,
                        score=float(row.score or 0)))
    return hits

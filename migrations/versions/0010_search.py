"""search: the search index (search_documents) with SQLite FTS5 or a PostgreSQL tsvector

Revision ID: 0010_search
Revises: 0009_recipe_governance

On SQLite, ``search_fts`` is an FTS5 table over ``search_documents`` (external content: the
text is stored once) kept in step by three triggers. On PostgreSQL, ``tsv`` is a generated
column (title weighted A, body B) with a GIN index. Rows that exist already are indexed by
``flask search-reindex`` (``bin/dev`` runs it after migrating; ``bin/serve --upgrade``
runs it when the index is empty).
"""
import sqlalchemy as sa
from alembic import op

import app.models.base

revision = '0010_search'
down_revision = '0009_recipe_governance'
branch_labels = None
depends_on = None

SQLITE_UP = [
    "CREATE VIRTUAL TABLE search_fts USING fts5(title, body, content='search_documents', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER search_documents_ai AFTER INSERT ON search_documents BEGIN "
    "INSERT INTO search_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
    "CREATE TRIGGER search_documents_ad AFTER DELETE ON search_documents BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, title, body) "
    "VALUES ('delete', old.id, old.title, old.body); END",
    "CREATE TRIGGER search_documents_au AFTER UPDATE ON search_documents BEGIN "
    "INSERT INTO search_fts(search_fts, rowid, title, body) "
    "VALUES ('delete', old.id, old.title, old.body); "
    "INSERT INTO search_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
]
POSTGRES_UP = [
    "ALTER TABLE search_documents ADD COLUMN tsv tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('english', coalesce(title, '')), 'A') || "
    "setweight(to_tsvector('english', coalesce(body, '')), 'B')) STORED",
    # No pending list: every write lands in the index itself, and the planner trusts it.
    "CREATE INDEX ix_search_documents_tsv ON search_documents USING gin (tsv) "
    "WITH (fastupdate = off)",
]


def upgrade():
    op.create_table('search_documents',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('item_id', sa.String(length=80), nullable=False),
    sa.Column('studio_id', sa.Uuid(), nullable=True),
    sa.Column('owner_id', sa.Uuid(), nullable=True),
    sa.Column('public', sa.Boolean(), nullable=False),
    sa.Column('author_id', sa.Uuid(), nullable=True),
    sa.Column('parent_kind', sa.String(length=24), nullable=True),
    sa.Column('parent_id', sa.String(length=80), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=True),
    sa.Column('deadline', app.models.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('title', sa.String(length=500), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('path', sa.String(length=300), nullable=False),
    sa.Column('updated_at', app.models.base.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_search_documents')),
    sa.UniqueConstraint('kind', 'item_id', name=op.f('uq_search_documents_kind'))
    )
    with op.batch_alter_table('search_documents', schema=None) as batch_op:
        for name in ('author_id', 'owner_id', 'studio_id'):
            batch_op.create_index(batch_op.f(f'ix_search_documents_{name}'), [name],
                                  unique=False)
        batch_op.create_index('ix_search_documents_parent', ['parent_kind', 'parent_id'],
                              unique=False)
    dialect = op.get_bind().dialect.name
    statements = {"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}.get(dialect, [])
    for statement in statements:
        op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name == "sqlite":
        for name in ("search_documents_ai", "search_documents_ad", "search_documents_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS search_fts")
    op.drop_table('search_documents')

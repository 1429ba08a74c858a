"""links: the studio's index names each link's target too

Revision ID: 0032_links_studio_target
Revises: 0031_voters_represented

The backlinks page counts a studio's links per target (``app.services.links``): with the
target's type and id in the studio's index, the count reads that index alone, already in
the order it groups by, instead of visiting every link's row. The index on ``studio_id``
alone goes: the new one begins with it and serves every lookup it served.
"""
from alembic import op

revision = "0032_links_studio_target"
down_revision = "0031_voters_represented"
branch_labels = None
depends_on = None


def upgrade():
    op.create_index("ix_links_studio_target", "links", ["studio_id", "to_type", "to_id"])
    op.drop_index("ix_links_studio_id", table_name="links")


def downgrade():
    op.create_index("ix_links_studio_id", "links", ["studio_id"])
    op.drop_index("ix_links_studio_target", table_name="links")

"""Profiles: what a user said once and the app keeps for them (grade, language, home city), one row per user id.

Revision ID: 0004_profiles
Revises: 0003_owners
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004_profiles"
down_revision: str | None = "0003_owners"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    m = sa.MetaData()
    sa.Table(
        "profiles", m,
        sa.Column("user_id", sa.String(100), primary_key=True),
        sa.Column("grade", sa.String(20), nullable=True),
        sa.Column("language", sa.String(5), nullable=True),
        sa.Column("home_city", sa.String(200), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    ).create(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    op.drop_table("profiles")

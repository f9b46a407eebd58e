"""Owners: every saved route and plan belongs to a user; an application keeps its owner's department.

* ``routes.owner`` and ``plans.owner`` (the user id, indexed) are added; the rows already stored get the
  legacy owner (``LEGACY_OWNER``, default ``demo-shared``);
* applications and claims of ``me`` (the one hard-coded user of the releases before sign-in) move to the
  legacy owner too; chat threads keep their owners (the browser sessions that made them);
* ``applications.owner_department`` (nullable: unknown for the applications already stored) is added.

A column already there (a database whose tables were created in place by a release between, before its
revision was stamped) is kept as it is. The legacy owner comes from the store's opener (``Store.open(url, legacy_owner=...)``, passed in the Alembic
configuration's attributes), else :data:`LEGACY_OWNER`.

Revision ID: 0003_owners
Revises: 0002_counters
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003_owners"
down_revision: str | None = "0002_counters"
branch_labels: str | None = None
depends_on: str | None = None

LEGACY_OWNER = "demo-shared"
OLD_DEFAULT_USER = "me"  # the owner the pages and scenes hard-coded before sign-in


def _legacy_owner() -> str:
    config = op.get_context().config
    value = config.attributes.get("legacy_owner") if config is not None else None
    return str(value or LEGACY_OWNER)[:100]


def _has(table: str, column: str) -> bool:
    return column in {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    legacy = _legacy_owner()
    for name in ("routes", "plans"):
        if _has(name, "owner"):
            continue
        with op.batch_alter_table(name) as batch:
            batch.add_column(sa.Column("owner", sa.String(100), nullable=True))
        table = sa.table(name, sa.column("owner", sa.String))
        op.execute(table.update().values(owner=legacy))
        with op.batch_alter_table(name) as batch:
            batch.alter_column("owner", existing_type=sa.String(100), nullable=False)
            batch.create_index(f"ix_{name}_owner", ["owner"])
    if not _has("applications", "owner_department"):
        with op.batch_alter_table("applications") as batch:
            batch.add_column(sa.Column("owner_department", sa.String(100), nullable=True))
    for name in ("applications", "claims"):
        table = sa.table(name, sa.column("owner", sa.String))
        op.execute(table.update().where(table.c.owner == OLD_DEFAULT_USER).values(owner=legacy))


def downgrade() -> None:
    with op.batch_alter_table("applications") as batch:
        batch.drop_column("owner_department")
    for name in ("routes", "plans"):
        with op.batch_alter_table(name) as batch:
            batch.drop_index(f"ix_{name}_owner")
            batch.drop_column("owner")

"""Counters: the next number of a sequence, taken in the transaction of the insert that uses it.

Creates ``counters`` (name, value) unless it exists (the release between, before Alembic, created it in
place) and seeds it from what is stored, so numbering goes on after the existing maximum:

* ``application:TA-YYYY-`` — the highest number of each year (``TA-2026-0007`` → 7);
* ``plan:<id>`` — the highest version of each plan.

A counter already there keeps its value unless the stored rows are ahead of it.

Revision ID: 0002_counters
Revises: 0001_baseline
Create Date: 2026-12-01
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision: str = "0002_counters"
down_revision: str | None = "0001_baseline"
branch_labels: str | None = None
depends_on: str | None = None

NUMBER = re.compile(r"(TA-\d{4}-)(\d+)")


def upgrade() -> None:
    conn = op.get_bind()
    m = sa.MetaData()
    counters = sa.Table(
        "counters", m,
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("value", sa.Integer, nullable=False),
    )
    counters.create(conn, checkfirst=True)
    applications = sa.table("applications", sa.column("number", sa.String))
    plans = sa.table("plans", sa.column("id", sa.String), sa.column("version", sa.Integer))

    seeds: dict[str, int] = {}
    for (number,) in conn.execute(sa.select(applications.c.number)):
        match = NUMBER.fullmatch(str(number or ""))
        if match:
            name = f"application:{match.group(1)}"
            seeds[name] = max(seeds.get(name, 0), int(match.group(2)))
    latest = sa.select(plans.c.id, sa.func.max(plans.c.version)).group_by(plans.c.id)
    for row in conn.execute(latest):  # rows by index: mypy types an unpacked Row as object, an indexed one as Any
        seeds[f"plan:{row[0]}"] = int(row[1] or 0)

    existing: dict[str, int] = {row[0]: row[1] for row in conn.execute(sa.select(counters.c.name, counters.c.value))}
    new = [{"name": name, "value": value} for name, value in sorted(seeds.items()) if name not in existing]
    if new:
        conn.execute(counters.insert(), new)
    for name, value in sorted(seeds.items()):
        if name in existing and existing[name] < value:
            conn.execute(counters.update().where(counters.c.name == name).values(value=value))


def downgrade() -> None:
    op.drop_table("counters")

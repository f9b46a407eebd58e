"""Baseline: the schema of the release before the counters (commit 3da9336, business travel).

Eight tables: routes, intent_events, plans, threads, messages, applications, application_audit, claims. That
release created its tables with ``metadata.create_all`` at every start, so a database made by it (or by an
older release, lacking the business tables) is upgraded from here: only the tables it lacks are created.
The definitions are copied here, frozen: later changes to ``navigo_core/store`` go into new revisions.

Revision ID: 0001_baseline
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001_baseline"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def _tables() -> sa.MetaData:
    m = sa.MetaData()
    sa.Table(
        "routes", m,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("request_json", sa.Text, nullable=False),
        sa.Column("result_json", sa.Text, nullable=False),
    )
    sa.Table(
        "intent_events", m,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("layer", sa.String(2), nullable=False),
        sa.Column("intent", sa.String(40), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("l1_ms", sa.Float, nullable=True),
        sa.Column("l2_ms", sa.Float, nullable=True),
        sa.Column("l3_ms", sa.Float, nullable=True),
        sa.Column("total_ms", sa.Float, nullable=False),
        sa.Column("lang", sa.String(5), nullable=False),
        sa.Column("text", sa.Text, nullable=True),
    )
    sa.Table(
        "plans", m,
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("request_text", sa.Text, nullable=False),
        sa.Column("state_json", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", "version"),
    )
    sa.Table(
        "threads", m,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(100), nullable=False, index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False, index=True),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("state_json", sa.Text, nullable=True),
    )
    sa.Table(
        "messages", m,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("thread_id", sa.String(36), sa.ForeignKey("threads.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=True),
        sa.Column("meta_json", sa.Text, nullable=True),
    )
    sa.Table(
        "applications", m,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("number", sa.String(20), nullable=False, unique=True),
        sa.Column("owner", sa.String(100), nullable=False, index=True),
        sa.Column("traveller", sa.String(200), nullable=False),
        sa.Column("purpose", sa.Text, nullable=False),
        sa.Column("origin", sa.String(200), nullable=False),
        sa.Column("cities_json", sa.Text, nullable=False),
        sa.Column("aliases_json", sa.Text, nullable=False),
        sa.Column("start_date", sa.Date, nullable=True),
        sa.Column("end_date", sa.Date, nullable=True),
        sa.Column("estimated_cost", sa.Float, nullable=True),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("excesses_json", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False, index=True),
        sa.Column("approver", sa.String(100), nullable=True),
        sa.Column("decision_comment", sa.Text, nullable=True),
        sa.Column("plan_id", sa.String(36), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "application_audit", m,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("application_id", sa.String(36), sa.ForeignKey("applications.id", ondelete="CASCADE"),
                  nullable=False, index=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("action", sa.String(30), nullable=False),
        sa.Column("changes_json", sa.Text, nullable=False),
        sa.Column("comment", sa.Text, nullable=True),
    )
    sa.Table(
        "claims", m,
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(100), nullable=False, index=True),
        sa.Column("application_number", sa.String(20), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("total", sa.Float, nullable=False),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("items_json", sa.Text, nullable=False),
        sa.Column("summary_json", sa.Text, nullable=False),
    )
    return m


def upgrade() -> None:
    _tables().create_all(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    _tables().drop_all(op.get_bind(), checkfirst=True)

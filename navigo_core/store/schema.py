"""The tables (SQLAlchemy Core ``metadata``) and the column types that keep a value the same on every
backend (NULs stripped, credentials masked, over-long values refused)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)
from sqlalchemy.types import TypeDecorator

from navigo_core.redact import redact
from navigo_core.store.errors import StoreValueError


# --- column types: the same value on every backend -------------------------------------------

def _clean_text(value: Any) -> Any:
    """NUL characters stripped (PostgreSQL rejects them) and credentials masked."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "")
        return redact(value)
    return value


#: Length of the ``owner`` / ``user_id`` columns (a user id: the OIDC ``sub`` or a demo user).
OWNER_LENGTH = 100


def owner_key(owner: object) -> str:
    """``owner`` as the ``owner`` columns store it: text, at most :data:`OWNER_LENGTH` characters, cleaned like
    every bound string (:func:`_clean_text`). Writes, queries and Python-side comparisons all go through it."""
    return str(_clean_text(str(owner)[:OWNER_LENGTH]))


class SafeString(TypeDecorator[str]):
    """VARCHAR(n) whose bound values lose NUL characters and credentials (lengths: :func:`_checked`)."""

    impl = String
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return _clean_text(value)


class SafeText(TypeDecorator[str]):
    """TEXT whose bound values lose NUL characters and credentials."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return _clean_text(value)


metadata = MetaData()

routes = Table(
    "routes",
    metadata,
    Column("id", SafeString(36), primary_key=True),
    Column("owner", SafeString(100), nullable=False, index=True),  # the user id (0003_owners)
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("title", SafeString(300), nullable=False),
    Column("request_json", SafeText, nullable=False),
    Column("result_json", SafeText, nullable=False),
)

# One row per routed message (navigo_core.intent.router): which layer answered,
# what it said and how long each layer took. ``text`` stays NULL unless
# INTENT_LOG_TEXT is on.
intent_events = Table(
    "intent_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("layer", SafeString(2), nullable=False),  # L1 | L2 | L3: the layer that answered
    Column("intent", SafeString(40), nullable=False),  # the primary intent code
    Column("score", Float, nullable=True),
    Column("l1_ms", Float, nullable=True),  # latency of each layer that ran (NULL: it did not run)
    Column("l2_ms", Float, nullable=True),
    Column("l3_ms", Float, nullable=True),
    Column("total_ms", Float, nullable=False),
    Column("lang", SafeString(5), nullable=False),
    Column("text", SafeText, nullable=True),
)

LAYERS = ("L1", "L2", "L3")


# Saved trip plans (navigo_core.planner): one row per version; (id, version) is the key.
plans = Table(
    "plans",
    metadata,
    Column("id", SafeString(36), nullable=False),
    Column("version", Integer, nullable=False),
    Column("owner", SafeString(100), nullable=False, index=True),  # the user id (0003_owners)
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("request_text", SafeText, nullable=False),
    Column("state_json", SafeText, nullable=False),
    PrimaryKeyConstraint("id", "version"),
)


# Chat threads (navigo_core.chat): one row per conversation; ``owner`` is the signed-in user's id
# (threads are listed and opened per owner only). ``state_json`` holds the
# clarification / flow state of the thread.
threads = Table(
    "threads",
    metadata,
    Column("id", SafeString(36), primary_key=True),
    Column("owner", SafeString(100), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, index=True),
    Column("title", SafeString(300), nullable=False, default=""),
    Column("state_json", SafeText, nullable=True),
)

# One row per chat message; ``status`` (e.g. asking, done, error, refused) and ``meta_json``
# (decision, summary, quick replies …) are optional.
messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("thread_id", SafeString(36), ForeignKey("threads.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("role", SafeString(20), nullable=False),
    Column("content", SafeText, nullable=False),
    Column("status", SafeString(20), nullable=True),
    Column("meta_json", SafeText, nullable=True),
)


# --- business travel: applications, their audit trail, expense claims (navigo_core.business.applications / expenses) ---
# One row per travel application; ``number`` is the user-facing id (TA-2026-0001). Lists are JSON text.
applications = Table(
    "applications",
    metadata,
    Column("id", SafeString(36), primary_key=True),
    Column("number", SafeString(20), nullable=False, unique=True),
    Column("owner", SafeString(100), nullable=False, index=True),
    # the owner's department when the application was created (whose approvers decide it; 0003_owners)
    Column("owner_department", SafeString(100), nullable=True),
    Column("traveller", SafeString(200), nullable=False),
    Column("purpose", SafeText, nullable=False, default=""),
    Column("origin", SafeString(200), nullable=False, default=""),
    Column("cities_json", SafeText, nullable=False),  # display names
    Column("aliases_json", SafeText, nullable=False),  # every name a city is known by (for "my Hangzhou trip")
    Column("start_date", Date, nullable=True),
    Column("end_date", Date, nullable=True),
    Column("estimated_cost", Float, nullable=True),
    Column("currency", SafeString(3), nullable=False, default="CNY"),
    Column("excesses_json", SafeText, nullable=False),  # policy excesses, each with its justification
    Column("status", SafeString(20), nullable=False, index=True),
    Column("approver", SafeString(100), nullable=True),
    Column("decision_comment", SafeText, nullable=True),
    Column("plan_id", SafeString(36), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Who changed what and when: one row per change of an application (``changes_json``: [{field, old, new}]).
application_audit = Table(
    "application_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("application_id", SafeString(36), ForeignKey("applications.id", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", SafeString(100), nullable=False),
    Column("action", SafeString(30), nullable=False),
    Column("changes_json", SafeText, nullable=False),
    Column("comment", SafeText, nullable=True),
)

# Saved expense claims: the checked items and the summary, as JSON.
claims = Table(
    "claims",
    metadata,
    Column("id", SafeString(36), primary_key=True),
    Column("owner", SafeString(100), nullable=False, index=True),
    Column("application_number", SafeString(20), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("total", Float, nullable=False),
    Column("currency", SafeString(3), nullable=False),
    Column("items_json", SafeText, nullable=False),
    Column("summary_json", SafeText, nullable=False),
)


# Counters: the next number of a sequence (application numbers per year, versions per plan), taken by one
# upsert in the transaction that uses it.
# What a user said once and the app keeps for them (0004_profiles): the employee grade, the UI language, the home
# city (the origin of their trips). One row per user id; a value NULL until given.
profiles = Table(
    "profiles",
    metadata,
    Column("user_id", SafeString(100), primary_key=True),
    Column("grade", SafeString(20), nullable=True),
    Column("language", SafeString(5), nullable=True),
    Column("home_city", SafeString(200), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

counters = Table(
    "counters",
    metadata,
    Column("name", SafeString(100), primary_key=True),
    Column("value", Integer, nullable=False),
)


def _checked(table: Table, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` for ``table``; a string longer than its column raises :class:`StoreValueError` on every
    backend (PostgreSQL would refuse it, SQLite would keep it). NULs do not count (they are stripped)."""
    out = dict(values)
    for key, value in out.items():
        column = table.c.get(key)
        length = getattr(getattr(column, "type", None), "length", None)
        if isinstance(value, str) and length and len(value) - value.count("\x00") > length:
            raise StoreValueError("store.error.too_long", field=key, length=len(value), max=length)
    return out

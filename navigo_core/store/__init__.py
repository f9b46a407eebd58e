"""The one store: SQLAlchemy Core tables and small repositories.

The default engine is a SQLite file under ``data/`` in WAL mode; set
``DATABASE_URL`` to use another database (for example PostgreSQL). Tables are
created on first use. Repositories take and return plain dicts / pydantic
models, never ORM objects.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Engine,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    ForeignKey,
    PrimaryKeyConstraint,
    create_engine,
    event,
    func,
    select,
)

metadata = MetaData()

routes = Table(
    "routes",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("title", String(300), nullable=False),
    Column("request_json", Text, nullable=False),
    Column("result_json", Text, nullable=False),
)

# One row per routed message (navigo_core.intent.router): which layer answered,
# what it said and how long each layer took. ``text`` stays NULL unless
# INTENT_LOG_TEXT is on.
intent_events = Table(
    "intent_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_at", DateTime(timezone=True), nullable=False, index=True),
    Column("layer", String(2), nullable=False),  # L1 | L2 | L3: the layer that answered
    Column("intent", String(40), nullable=False),  # the primary intent code
    Column("score", Float, nullable=True),
    Column("l1_ms", Float, nullable=True),  # latency of each layer that ran (NULL: it did not run)
    Column("l2_ms", Float, nullable=True),
    Column("l3_ms", Float, nullable=True),
    Column("total_ms", Float, nullable=False),
    Column("lang", String(5), nullable=False),
    Column("text", Text, nullable=True),
)


# Saved trip plans (navigo_core.planner): one row per version; (id, version) is the key.
plans = Table(
    "plans",
    metadata,
    Column("id", String(36), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("request_text", Text, nullable=False),
    Column("state_json", Text, nullable=False),
    PrimaryKeyConstraint("id", "version"),
)


# Chat threads (navigo_core.chat): one row per conversation; ``owner`` is the browser
# session that created it (threads are listed per owner only). ``state_json`` holds the
# clarification / flow state of the thread.
threads = Table(
    "threads",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("owner", String(100), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False, index=True),
    Column("title", String(300), nullable=False, default=""),
    Column("state_json", Text, nullable=True),
)

# One row per chat message; ``status`` (e.g. asking, done, error, refused) and ``meta_json``
# (decision, summary, quick replies …) are optional.
messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("thread_id", String(36), ForeignKey("threads.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("role", String(20), nullable=False),
    Column("content", Text, nullable=False),
    Column("status", String(20), nullable=True),
    Column("meta_json", Text, nullable=True),
)


# --- business travel: applications, their audit trail, expense claims (navigo_core.applications / expenses) ---
# One row per travel application; ``number`` is the user-facing id (TA-2026-0001). Lists are JSON text.
applications = Table(
    "applications",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("number", String(20), nullable=False, unique=True),
    Column("owner", String(100), nullable=False, index=True),
    Column("traveller", String(200), nullable=False),
    Column("purpose", Text, nullable=False, default=""),
    Column("origin", String(200), nullable=False, default=""),
    Column("cities_json", Text, nullable=False),  # display names
    Column("aliases_json", Text, nullable=False),  # every name a city is known by (for "my Hangzhou trip")
    Column("start_date", Date, nullable=True),
    Column("end_date", Date, nullable=True),
    Column("estimated_cost", Float, nullable=True),
    Column("currency", String(3), nullable=False, default="CNY"),
    Column("excesses_json", Text, nullable=False),  # policy excesses, each with its justification
    Column("status", String(20), nullable=False, index=True),
    Column("approver", String(100), nullable=True),
    Column("decision_comment", Text, nullable=True),
    Column("plan_id", String(36), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Who changed what and when: one row per change of an application (``changes_json``: [{field, old, new}]).
application_audit = Table(
    "application_audit",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("application_id", String(36), ForeignKey("applications.id", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(100), nullable=False),
    Column("action", String(30), nullable=False),
    Column("changes_json", Text, nullable=False),
    Column("comment", Text, nullable=True),
)

# Saved expense claims: the checked items and the summary, as JSON.
claims = Table(
    "claims",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("owner", String(100), nullable=False, index=True),
    Column("application_number", String(20), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("total", Float, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("items_json", Text, nullable=False),
    Column("summary_json", Text, nullable=False),
)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their folder created and WAL mode."""
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

    metadata.create_all(engine)
    return engine


class Store:
    """Facade over the engine with one small repository per table."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.routes = RouteRepo(engine)
        self.events = EventRepo(engine)
        self.plans = PlanRepo(engine)
        self.threads = ThreadRepo(engine)
        self.applications = ApplicationRepo(engine)
        self.claims = ClaimRepo(engine)

    @classmethod
    def from_url(cls, url: str) -> "Store":
        return cls(make_engine(url))

    @property
    def description(self) -> str:
        """What the UI shows as the storage engine (no credentials)."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            return f"SQLite ({Path(url.database or ':memory:').name})"
        return f"{url.get_backend_name()} ({url.host or 'local'})"


class RouteRepo:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, title: str, request: dict[str, Any], result: dict[str, Any]) -> str:
        route_id = str(uuid.uuid4())
        with self.engine.begin() as conn:
            conn.execute(
                routes.insert().values(
                    id=route_id,
                    created_at=_utcnow(),
                    title=title[:300],
                    request_json=json.dumps(request, ensure_ascii=False),
                    result_json=json.dumps(result, ensure_ascii=False),
                )
            )
        return route_id

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first: id, created_at, title."""
        stmt = (
            select(routes.c.id, routes.c.created_at, routes.c.title)
            .order_by(routes.c.created_at.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, route_id: str) -> dict[str, Any] | None:
        """The saved request and result, or None."""
        with self.engine.connect() as conn:
            row = conn.execute(select(routes).where(routes.c.id == route_id)).first()
        if row is None:
            return None
        return {
            "id": row.id,
            "created_at": row.created_at,
            "title": row.title,
            "request": json.loads(row.request_json),
            "result": json.loads(row.result_json),
        }


LAYERS = ("L1", "L2", "L3")


class EventRepo:
    """Intent-routing events: one row per message, and the hit-rate aggregates of the Router lab."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, layer: str, intent: str, score: float | None, latency_ms: Mapping[str, float],
               lang: str, text: str | None = None) -> int:
        """Store one event; ``latency_ms`` maps L1/L2/L3 to the ms of each layer that ran. Returns the id."""
        if layer not in LAYERS:
            raise ValueError(f"layer must be one of {LAYERS}, not {layer!r}")
        lat = {k: float(v) for k, v in latency_ms.items() if k in LAYERS}
        with self.engine.begin() as conn:
            result = conn.execute(
                intent_events.insert().values(
                    created_at=_utcnow(),
                    layer=layer,
                    intent=intent[:40],
                    score=None if score is None else float(score),
                    l1_ms=lat.get("L1"),
                    l2_ms=lat.get("L2"),
                    l3_ms=lat.get("L3"),
                    total_ms=sum(lat.values()),
                    lang=(lang or "")[:5],
                    text=text,
                )
            )
        return int(result.inserted_primary_key[0])

    def count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(intent_events)).scalar_one())

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first, every column."""
        stmt = select(intent_events).order_by(intent_events.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def layer_stats(self) -> list[dict[str, Any]]:
        """Per layer: messages answered, share of all messages, hit rate among the messages that
        reached the layer, and the mean latency of that layer (over the messages it ran on)."""
        lat_cols = {"L1": intent_events.c.l1_ms, "L2": intent_events.c.l2_ms, "L3": intent_events.c.l3_ms}
        with self.engine.connect() as conn:
            answered = dict(conn.execute(
                select(intent_events.c.layer, func.count()).group_by(intent_events.c.layer)).all())
            means = {k: conn.execute(select(func.avg(c), func.count(c))).one() for k, c in lat_cols.items()}
        total = sum(answered.values())
        out: list[dict[str, Any]] = []
        reached = total
        for layer in LAYERS:
            n = int(answered.get(layer, 0))
            mean, ran = means[layer]
            out.append({
                "layer": layer,
                "answered": n,
                "share": n / total if total else 0.0,
                "reached": reached,
                "hit_rate": n / reached if reached else 0.0,
                "mean_ms": float(mean) if mean is not None else None,
                "ran": int(ran),
            })
            reached -= n
        return out

    def intent_stats(self) -> list[dict[str, Any]]:
        """Per primary intent: total messages and how many each layer answered (most frequent first)."""
        stmt = select(intent_events.c.intent, intent_events.c.layer, func.count()).group_by(
            intent_events.c.intent, intent_events.c.layer)
        rows: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for intent, layer, n in conn.execute(stmt):
                row = rows.setdefault(intent, {"intent": intent, "total": 0, **{k: 0 for k in LAYERS}})
                row[layer] = int(n)
                row["total"] += int(n)
        for row in rows.values():
            for k in LAYERS:
                row[f"{k}_share"] = row[k] / row["total"] if row["total"] else 0.0
        return sorted(rows.values(), key=lambda r: (-r["total"], r["intent"]))


class PlanRepo:
    """Trip plans with versions: every save of an existing plan adds version n + 1; nothing is overwritten."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, plan_id: str | None, request_text: str, state_json: str | Mapping[str, Any]) -> tuple[str, int]:
        """Save a new plan (``plan_id`` None) or a new version of ``plan_id``; returns (plan_id, version).

        ``state_json``: the planner state as JSON text, or as a JSON-ready dict.
        """
        plan_id = plan_id or str(uuid.uuid4())
        if not isinstance(state_json, str):
            state_json = json.dumps(state_json, ensure_ascii=False)
        with self.engine.begin() as conn:
            current = conn.execute(select(func.max(plans.c.version)).where(plans.c.id == plan_id)).scalar()
            version = int(current or 0) + 1
            conn.execute(plans.insert().values(id=plan_id, version=version, created_at=_utcnow(),
                                               request_text=request_text, state_json=state_json))
        return plan_id, version

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first, one row per plan (its latest version): id, version, created_at, request_text."""
        latest = (select(plans.c.id, func.max(plans.c.version).label("version")).group_by(plans.c.id).subquery())
        stmt = (select(plans.c.id, plans.c.version, plans.c.created_at, plans.c.request_text)
                .join(latest, (plans.c.id == latest.c.id) & (plans.c.version == latest.c.version))
                .order_by(plans.c.created_at.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, plan_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One version (default: the latest): id, version, created_at, request_text, state_json (text) and
        state (the parsed dict); None if absent."""
        stmt = select(plans).where(plans.c.id == plan_id)
        stmt = stmt.where(plans.c.version == version) if version is not None else stmt.order_by(plans.c.version.desc())
        with self.engine.connect() as conn:
            row = conn.execute(stmt.limit(1)).first()
        if row is None:
            return None
        out = dict(row._mapping)
        out["state"] = json.loads(out["state_json"])
        return out

    def versions(self, plan_id: str) -> list[dict[str, Any]]:
        """Every version of a plan, oldest first: version, created_at."""
        stmt = select(plans.c.version, plans.c.created_at).where(plans.c.id == plan_id).order_by(plans.c.version)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]


class ThreadRepo:
    """Chat threads and their messages; ``owner`` isolates browser sessions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, owner: str) -> str:
        """A new, empty thread of ``owner``; returns its id (a uuid)."""
        thread_id = str(uuid.uuid4())
        now = _utcnow()
        with self.engine.begin() as conn:
            conn.execute(threads.insert().values(id=thread_id, owner=str(owner)[:100], created_at=now,
                                                 updated_at=now, title="", state_json=None))
        return thread_id

    def list(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        """``owner``'s threads, most recently updated first: id, title (the first user message), created_at,
        updated_at."""
        stmt = (select(threads.c.id, threads.c.title, threads.c.created_at, threads.c.updated_at)
                .where(threads.c.owner == str(owner)[:100])
                .order_by(threads.c.updated_at.desc(), threads.c.created_at.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, thread_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """id, owner, title, created_at, updated_at (None if absent, or not ``owner``'s when given)."""
        stmt = select(threads.c.id, threads.c.owner, threads.c.title, threads.c.created_at,
                      threads.c.updated_at).where(threads.c.id == thread_id)
        with self.engine.connect() as conn:
            row = conn.execute(stmt).first()
        if row is None or (owner is not None and row.owner != str(owner)[:100]):
            return None
        return dict(row._mapping)

    def add_message(self, thread_id: str, role: str, content: str, *, status: str | None = None,
                    meta: Mapping[str, Any] | None = None) -> int:
        """Append a message; the first user message becomes the thread's title. Returns the message id."""
        now = _utcnow()
        with self.engine.begin() as conn:
            row = conn.execute(select(threads.c.title).where(threads.c.id == thread_id)).first()
            if row is None:
                raise KeyError(f"no thread {thread_id!r}")
            result = conn.execute(messages.insert().values(
                thread_id=thread_id, created_at=now, role=role, content=content or "", status=status,
                meta_json=json.dumps(dict(meta), ensure_ascii=False, default=str) if meta else None))
            values: dict[str, Any] = {"updated_at": now}
            if role == "user" and not row.title:
                values["title"] = " ".join((content or "").split())[:300]
            conn.execute(threads.update().where(threads.c.id == thread_id).values(**values))
        return int(result.inserted_primary_key[0])

    def update_message(self, message_id: int, content: str | None = None, status: str | None = None,
                       meta: Mapping[str, Any] | None = None) -> None:
        """Change a message's content, status and/or meta (None: keep); e.g. the partial text of a broken stream."""
        values: dict[str, Any] = {}
        if content is not None:
            values["content"] = content
        if status is not None:
            values["status"] = status
        if meta is not None:
            values["meta_json"] = json.dumps(dict(meta), ensure_ascii=False, default=str)
        if not values:
            return
        with self.engine.begin() as conn:
            conn.execute(messages.update().where(messages.c.id == message_id).values(**values))

    def messages(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's messages, oldest first: id, role, content, status, meta (dict), created_at."""
        stmt = select(messages).where(messages.c.thread_id == thread_id).order_by(messages.c.id)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        for row in rows:
            raw = row.pop("meta_json")
            row["meta"] = json.loads(raw) if raw else {}
        return rows

    def set_state(self, thread_id: str, state: Mapping[str, Any] | None) -> None:
        """Store the thread's clarification / flow state (a JSON-ready dict; None clears it)."""
        raw = json.dumps(dict(state), ensure_ascii=False, default=str) if state is not None else None
        with self.engine.begin() as conn:
            conn.execute(threads.update().where(threads.c.id == thread_id).values(state_json=raw))

    def get_state(self, thread_id: str) -> dict[str, Any]:
        """The thread's state ({} when none was stored)."""
        with self.engine.connect() as conn:
            raw = conn.execute(select(threads.c.state_json).where(threads.c.id == thread_id)).scalar()
        return json.loads(raw) if raw else {}


# --- business travel repositories ---------------------------------------------------

def _app_row(row: Any) -> dict[str, Any]:
    out = dict(row._mapping)
    for key in ("cities", "aliases", "excesses"):
        out[key] = json.loads(out.pop(f"{key}_json") or "[]")
    return out


class ApplicationRepo:
    """Travel applications and their audit trail (rules live in navigo_core.applications)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def next_number(self, year: int) -> str:
        prefix = f"TA-{year}-"
        with self.engine.connect() as conn:
            last = conn.execute(select(func.max(applications.c.number))
                                .where(applications.c.number.like(prefix + "%"))).scalar()
        seq = int(last.rsplit("-", 1)[1]) + 1 if last else 1
        return f"{prefix}{seq:04d}"

    def insert(self, values: Mapping[str, Any], *, actor: str, action: str = "create",
               changes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Insert an application (``values`` with ``cities``/``aliases``/``excesses`` as lists); audited."""
        row = dict(values)
        row.setdefault("id", str(uuid.uuid4()))
        now = row.setdefault("created_at", _utcnow())
        row.setdefault("updated_at", now)
        for key in ("cities", "aliases", "excesses"):
            row[f"{key}_json"] = json.dumps(row.pop(key, []) or [], ensure_ascii=False, default=str)
        with self.engine.begin() as conn:
            conn.execute(applications.insert().values(**row))
            conn.execute(application_audit.insert().values(
                application_id=row["id"], at=now, actor=str(actor)[:100], action=action,
                changes_json=json.dumps(changes or [], ensure_ascii=False, default=str), comment=None))
        got = self.get(row["id"])
        assert got is not None
        return got

    def update(self, app_id: str, values: Mapping[str, Any], *, actor: str, action: str,
               changes: list[dict[str, Any]], comment: str | None = None, at: datetime | None = None) -> dict[str, Any]:
        """Change an application and record one audit row (who, when, what: field old → new)."""
        row = dict(values)
        for key in ("cities", "aliases", "excesses"):
            if key in row:
                row[f"{key}_json"] = json.dumps(row.pop(key) or [], ensure_ascii=False, default=str)
        now = at or _utcnow()
        row["updated_at"] = now
        with self.engine.begin() as conn:
            conn.execute(applications.update().where(applications.c.id == app_id).values(**row))
            conn.execute(application_audit.insert().values(
                application_id=app_id, at=now, actor=str(actor)[:100], action=action,
                changes_json=json.dumps(changes, ensure_ascii=False, default=str), comment=comment))
        got = self.get(app_id)
        if got is None:
            raise KeyError(f"no application {app_id!r}")
        return got

    def get(self, app_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(applications).where(applications.c.id == app_id)).first()
        return _app_row(row) if row is not None else None

    def get_by_number(self, number: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(applications).where(applications.c.number == number.upper())).first()
        return _app_row(row) if row is not None else None

    def list(self, owner: str | None = None, statuses: tuple[str, ...] | None = None,
             limit: int = 200) -> list[dict[str, Any]]:
        """Newest first; filtered by owner and/or status."""
        stmt = select(applications)
        if owner is not None:
            stmt = stmt.where(applications.c.owner == str(owner)[:100])
        if statuses:
            stmt = stmt.where(applications.c.status.in_(statuses))
        stmt = stmt.order_by(applications.c.created_at.desc(), applications.c.number.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [_app_row(r) for r in conn.execute(stmt)]

    def audit(self, app_id: str) -> list[dict[str, Any]]:
        """The audit trail, oldest first: at, actor, action, changes (list), comment."""
        stmt = select(application_audit).where(application_audit.c.application_id == app_id).order_by(
            application_audit.c.id)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        for row in rows:
            row["changes"] = json.loads(row.pop("changes_json") or "[]")
        return rows


class ClaimRepo:
    """Saved expense claims."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, owner: str, items: list[Any], summary: Mapping[str, Any], *,
             application_number: str | None = None) -> str:
        claim_id = str(uuid.uuid4())
        with self.engine.begin() as conn:
            conn.execute(claims.insert().values(
                id=claim_id, owner=str(owner)[:100], application_number=application_number, created_at=_utcnow(),
                total=float(summary.get("total", 0.0) or 0.0), currency=str(summary.get("currency", "CNY"))[:3],
                items_json=json.dumps(items, ensure_ascii=False, default=str),
                summary_json=json.dumps(dict(summary), ensure_ascii=False, default=str)))
        return claim_id

    def list(self, owner: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first: id, owner, application_number, created_at, total, currency."""
        stmt = select(claims.c.id, claims.c.owner, claims.c.application_number, claims.c.created_at, claims.c.total,
                      claims.c.currency)
        if owner is not None:
            stmt = stmt.where(claims.c.owner == str(owner)[:100])
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt.order_by(claims.c.created_at.desc()).limit(limit))]

    def get(self, claim_id: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(claims).where(claims.c.id == claim_id)).first()
        if row is None:
            return None
        out = dict(row._mapping)
        out["items"] = json.loads(out.pop("items_json"))
        out["summary"] = json.loads(out.pop("summary_json"))
        return out

"""The one store: SQLAlchemy Core tables and small repositories.

The default engine is a SQLite file under ``data/`` in WAL mode; set
``DATABASE_URL`` to use another database (PostgreSQL: ``postgresql+psycopg://…``;
a bare ``postgresql://`` uses psycopg too). The schema is versioned with Alembic
(``navigo_core/store/migrations``): opening a database upgrades it to the newest revision,
under a lock, so processes starting together do not race; a new database gets the tables
at once and is stamped with that revision, and one already there is only read.
Repositories take and return plain dicts / pydantic models, never ORM objects.

Hardening (issue "Hardening"):

* **Numbers come from the database.** Application numbers and plan versions are taken
  from a ``counters`` row, incremented by one upsert in the same transaction as the
  insert that uses it (SQLite and PostgreSQL both lock the row until commit), so
  concurrent writers never get the same number and never fail on it.
* **SQLite waits instead of failing**: WAL, ``busy_timeout`` 30 s, ``synchronous=NORMAL``;
  a write still refused as busy (or a PostgreSQL deadlock / serialisation failure) is
  retried a few times.
* **Values are the same on every backend**: NUL characters are stripped from every
  string written (PostgreSQL rejects them), credentials are masked
  (:func:`navigo_core.redact.redact`), and a value longer than its column raises
  :class:`StoreValueError` (PostgreSQL would reject it, SQLite would keep it).
* **Faults are messages**: every database error becomes a :class:`StoreError` with one
  sentence and what to do (damaged file, read-only, unreachable, busy, disk full), never
  a traceback with paths and SQL. :meth:`Store.open` never raises: when the database
  cannot be opened it returns an empty, read-only stand-in whose ``fault`` says why, so
  pages that need no writes still render.
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import random
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    Column,
    Connection,
    Date,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    cast,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool
from sqlalchemy.types import TypeDecorator

from navigo_core.errors import InputError, NavigoError
from navigo_core.redact import redact

if TYPE_CHECKING:  # pragma: no cover - the dialects' INSERT … ON CONFLICT statements (imported when used)
    from sqlalchemy.dialects.postgresql import dml as postgresql_dml
    from sqlalchemy.dialects.sqlite import dml as sqlite_dml

F = TypeVar("F", bound=Callable[..., Any])


# --- errors ----------------------------------------------------------------------------

class StoreError(NavigoError):
    """The database could not do what was asked; the message is one sentence and what to do."""

    default_code = "store.error.unavailable"


class StoreUnavailable(StoreError):
    """The database cannot be opened, read or written (damaged, read-only, unreachable, full)."""


class StoreBusy(StoreUnavailable):
    """The database stayed locked by other writers (after waiting and retrying)."""

    default_code = "store.error.busy"


class StoreValueError(StoreError, InputError):
    """A value the database cannot keep the same way on every backend (too long for its column)."""

    default_code = "store.error.too_long"


# --- column types: the same value on every backend -------------------------------------------

def _clean_text(value: Any) -> Any:
    """NUL characters stripped (PostgreSQL rejects them) and credentials masked."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "")
        return redact(value)
    return value


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


# Saved trip plans (navigo_core.planner): one row per version; (id, version) is the key.
plans = Table(
    "plans",
    metadata,
    Column("id", SafeString(36), nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("request_text", SafeText, nullable=False),
    Column("state_json", SafeText, nullable=False),
    PrimaryKeyConstraint("id", "version"),
)


# Chat threads (navigo_core.chat): one row per conversation; ``owner`` is the browser
# session that created it (threads are listed per owner only). ``state_json`` holds the
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


# --- business travel: applications, their audit trail, expense claims (navigo_core.applications / expenses) ---
# One row per travel application; ``number`` is the user-facing id (TA-2026-0001). Lists are JSON text.
applications = Table(
    "applications",
    metadata,
    Column("id", SafeString(36), primary_key=True),
    Column("number", SafeString(20), nullable=False, unique=True),
    Column("owner", SafeString(100), nullable=False, index=True),
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
counters = Table(
    "counters",
    metadata,
    Column("name", SafeString(100), primary_key=True),
    Column("value", Integer, nullable=False),
)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


# --- faults: every database error becomes one sentence and what to do ----------------------

BUSY_RETRIES = 8  # attempts of a write that found the database busy (a lock upgrade fails at once; a plain wait takes SQLite's 30 s)
SQLITE_BUSY_TIMEOUT_MS = 30_000
WRITE_OPTION = "navigo_write"  # execution option of a write transaction: on SQLite it begins with the write lock


def _begin_write(engine: Engine) -> Any:
    """A write transaction (``with _begin_write(engine) as conn``). On SQLite it starts with ``BEGIN
    IMMEDIATE``: the write lock is taken (or waited for, up to the busy timeout) before anything is read,
    so two writers never deadlock on a lock upgrade, which SQLite refuses at once instead of waiting."""
    return engine.execution_options(**{WRITE_OPTION: True}).begin()


def _db_name(url: Any) -> str:
    """The database as a message may name it: a SQLite file's name, else host/database (no credentials)."""
    try:
        u = make_url(str(url)) if not hasattr(url, "get_backend_name") else url
    except Exception:  # noqa: BLE001 - an unparsable URL: say nothing about it
        return "?"
    if u.get_backend_name() == "sqlite":
        return Path(u.database or ":memory:").name or ":memory:"
    return f"{u.host or 'localhost'}/{u.database or ''}"


def _fault_kind(err: BaseException) -> str:
    """busy | readonly | corrupt | full | value | conflict | unavailable, from a DBAPI error."""
    name = str(getattr(err, "sqlite_errorname", "") or "")
    state = str(getattr(err, "sqlstate", "") or getattr(getattr(err, "diag", None), "sqlstate", "") or "")
    msg = str(err).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in msg or "table is locked" in msg \
            or state in ("40001", "40P01", "55P03"):
        return "busy"
    if name.startswith("SQLITE_READONLY") or "readonly database" in msg or "read-only" in msg or state == "25006":
        return "readonly"
    if name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "not a database" in msg or "malformed" in msg:
        return "corrupt"
    if name == "SQLITE_FULL" or "disk is full" in msg or state in ("53100", "53200"):
        return "full"
    if state.startswith("22") or "nul (0x00)" in msg or "too long" in msg:
        return "value"
    if state.startswith("23") or name.startswith("SQLITE_CONSTRAINT"):
        return "conflict"
    return "unavailable"


def _store_error(err: BaseException, db: str) -> StoreError:
    kind = _fault_kind(err)
    if kind == "busy":
        return StoreBusy("store.error.busy", db=db)
    if kind == "value":
        return StoreValueError("store.error.bad_value", db=db)
    if kind == "conflict":
        return StoreError("store.error.conflict", db=db)
    return StoreUnavailable(f"store.error.{kind}", db=db)


def _retried(fn: F) -> F:
    """Run a write again (a fresh transaction) when the database was busy: SQLite still locked after its
    busy timeout, a PostgreSQL deadlock or serialisation failure."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for attempt in range(BUSY_RETRIES):
            try:
                return fn(*args, **kwargs)
            except StoreBusy:
                if attempt == BUSY_RETRIES - 1:
                    raise
                time.sleep(min(0.05 * 2 ** attempt, 1.0) * (0.5 + random.random()))
        raise AssertionError("unreachable")  # pragma: no cover

    return wrapper  # type: ignore[return-value]


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


def _translate_errors(engine: Engine, db: str) -> None:
    @event.listens_for(engine, "handle_error")
    def _handle(ctx: Any) -> Any:
        if isinstance(ctx.sqlalchemy_exception, sa_exc.DBAPIError):  # not our own errors, not bugs
            return _store_error(ctx.original_exception, db)
        return None


def _normalise_url(url: str) -> str:
    """``postgresql://`` means psycopg (the driver we ship), not psycopg2."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _sqlite_file(url: Any) -> Path | None:
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if not database or database == ":memory:" or database.startswith("file:") and "mode=memory" in database:
        return None
    return Path(database.removeprefix("file:").split("?", 1)[0])


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[Connection]:
    """A connection holding the schema lock: SQLite's write lock (BEGIN IMMEDIATE), PostgreSQL's advisory lock."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn = conn.execution_options(**{WRITE_OPTION: True})
            conn.begin()  # BEGIN IMMEDIATE (see make_engine)
        elif engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(724871202)"))
        yield conn
        conn.commit()


def _schema_state(conn: Connection) -> tuple[set[str], str | None]:
    """The tables the database has and the schema revision it is stamped with (None: none)."""
    from navigo_core.store import migrations

    return set(inspect(conn).get_table_names()), migrations.current(conn)


def _migrate_schema(engine: Engine) -> None:
    """Bring the database to the newest schema revision (``navigo_core/store/migrations``) under the schema
    lock, so processes starting together do not race: a new database gets ``metadata``'s tables and is
    stamped; one from before Alembic (no revision) runs every revision from the baseline, which creates only
    the tables it lacks; a stamped one runs the revisions after its own. A database already at the newest
    revision is only read, and so is a read-only one (writes are refused anyway: :attr:`Store.fault`)."""
    from navigo_core.store import migrations

    head = migrations.head()
    with engine.connect() as conn:
        tables, version = _schema_state(conn)
    if version == head:
        return
    if tables & set(metadata.tables) and _read_only_fault(engine) is not None:
        return
    for attempt in range(BUSY_RETRIES):
        try:
            with _schema_lock(engine) as conn:
                tables, version = _schema_state(conn)  # again under the lock: another process may have done it
                if version == head:
                    return
                if version is None and not tables & set(metadata.tables):
                    metadata.create_all(conn)
                    migrations.stamp(conn, head)
                else:
                    migrations.upgrade(conn, head)
            return
        except StoreBusy:
            if attempt == BUSY_RETRIES - 1:
                raise
            time.sleep(0.05 * 2 ** attempt)


def _wal(cur: Any) -> None:
    """WAL mode (persistent: once any process set it, it is only read). Switching needs the database to
    itself, and SQLite refuses that at once, without its busy timeout, while other processes open a new
    file together: the switch is tried again with backoff."""
    if str(cur.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
        return
    for attempt in range(BUSY_RETRIES):
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() and "busy" not in str(exc).lower() or attempt == BUSY_RETRIES - 1:
                raise
            time.sleep(0.05 * 2 ** attempt * (0.5 + random.random()))


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with its tables; SQLite files get their folder created, WAL mode, a 30 s busy
    timeout. Every database error it raises later is a :class:`StoreError`; so is a failure to open."""
    url = _normalise_url(url)
    db = _db_name(url)
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError as exc:
        raise StoreUnavailable("store.error.bad_url", db="?") from exc
    sqlite_file = _sqlite_file(parsed)
    if sqlite_file is not None and not str(parsed.database or "").startswith("file:"):
        try:
            sqlite_file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable("store.error.readonly", db=db) from exc
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        kwargs["connect_args"] = {"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
    elif parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
        kwargs["connect_args"] = {"connect_timeout": 10}  # an unreachable host: a message, not a hang
    try:
        engine = create_engine(url, **kwargs)
    except Exception as exc:  # noqa: BLE001 - no driver, a bad URL: one sentence, not a traceback
        raise StoreUnavailable("store.error.bad_url", db=db) from exc
    _translate_errors(engine, db)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # the driver emits no BEGIN of its own; the "begin" event does
            cur = dbapi_conn.cursor()
            try:
                cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
                _wal(cur)
                cur.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a crash of the app, far fewer fsyncs
                cur.execute("PRAGMA foreign_keys=ON")
            finally:
                cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")

    try:
        _migrate_schema(engine)
    except StoreError:
        engine.dispose()
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. the server is unreachable
        engine.dispose()
        raise _store_error(exc, db) from exc
    return engine


def _upsert(conn: Connection, table: Table) -> sqlite_dml.Insert | postgresql_dml.Insert:
    """``INSERT … ON CONFLICT`` into ``table`` for the connection's dialect (SQLite or PostgreSQL only)."""
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)
    from sqlalchemy.dialects.postgresql import insert as postgresql_insert

    return postgresql_insert(table)


def _next_value(conn: Connection, name: str, seed: Any) -> int:
    """Increment the counter ``name`` (first use: ``seed``, a SQL expression) and return its new value. The
    upsert locks the row until the transaction ends, so concurrent writers get distinct values."""
    dialect = conn.dialect.name
    if dialect in ("sqlite", "postgresql"):
        stmt = (_upsert(conn, counters).values(name=name, value=seed)
                .on_conflict_do_update(index_elements=[counters.c.name], set_={"value": counters.c.value + 1})
                .returning(counters.c.value))
        return int(conn.execute(stmt).scalar_one())
    # other databases: lock the row, else create it
    updated = conn.execute(counters.update().where(counters.c.name == name).values(value=counters.c.value + 1))
    if not updated.rowcount:
        conn.execute(counters.insert().values(name=name, value=seed))
    return int(conn.execute(select(counters.c.value).where(counters.c.name == name)).scalar_one())


def _insert_missing(conn: Connection, table: Table, values: Mapping[str, Any]) -> None:
    """Insert ``values`` unless a row with the same primary key exists (two first messages of one new thread)."""
    dialect = conn.dialect.name
    if dialect in ("sqlite", "postgresql"):
        conn.execute(_upsert(conn, table).values(**values).on_conflict_do_nothing())
        return
    key = [c for c in table.primary_key.columns]
    where = [c == values[c.name] for c in key]
    if conn.execute(select(*key).where(*where)).first() is None:
        conn.execute(table.insert().values(**values))


class Store:
    """Facade over the engine with one small repository per table.

    ``fault``: None, or the :class:`StoreError` that makes this store read-only (a database that could not
    be opened: an empty stand-in; a read-only file: its data, readable). Writes then raise it.
    """

    def __init__(self, engine: Engine, *, fault: StoreError | None = None) -> None:
        self.engine = engine
        self.fault = fault
        self._unavailable_url: str | None = None  # set on the stand-in of a database that could not be opened
        self.routes = RouteRepo(engine)
        self.events = EventRepo(engine)
        self.plans = PlanRepo(engine)
        self.threads = ThreadRepo(engine)
        self.applications = ApplicationRepo(engine)
        self.claims = ClaimRepo(engine)

    @classmethod
    def from_url(cls, url: str) -> "Store":
        """The store at ``url``; raises :class:`StoreUnavailable` (one sentence, what to do) when it cannot open."""
        engine = make_engine(url)
        return cls(engine, fault=_read_only_fault(engine))

    @classmethod
    def open(cls, url: str) -> "Store":
        """Like :meth:`from_url`, but never raises: a database that cannot be opened gives an empty, read-only
        stand-in whose ``fault`` says why (pages that need no writes still render; writes raise the fault)."""
        try:
            return cls.from_url(url)
        except StoreError as exc:
            return cls.unavailable(exc, url)

    @classmethod
    def unavailable(cls, fault: StoreError, url: str = "") -> "Store":
        """An empty in-memory store that refuses every write with ``fault``."""
        engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
        metadata.create_all(engine)
        with engine.connect() as conn:  # the one (static) connection: every write now fails …
            conn.exec_driver_sql("PRAGMA query_only=ON")

        @event.listens_for(engine, "handle_error")
        def _refuse(ctx: Any) -> Any:  # … with the reason the real database could not be opened
            return type(fault)(fault.code, **fault.params)

        store = cls(engine, fault=fault)
        store._unavailable_url = url
        return store

    @property
    def available(self) -> bool:
        """False for the stand-in of a database that could not be opened."""
        return self._unavailable_url is None

    @property
    def description(self) -> str:
        """What the UI shows as the storage engine (no credentials)."""
        if not self.available:
            return f"— ({_db_name(self._unavailable_url or '') or '?'})"
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            return f"SQLite ({Path(url.database or ':memory:').name})"
        return f"{url.get_backend_name()} ({url.host or 'local'})"


def _read_only_fault(engine: Engine) -> StoreError | None:
    """A read-only SQLite database (``mode=ro``, or a file or folder that cannot be written): its fault."""
    file = _sqlite_file(engine.url)
    if file is None:
        return None
    options = {k: str(v) for k, v in engine.url.query.items()}
    writable = os.access(file, os.W_OK) if file.exists() else True
    if options.get("mode") == "ro" or options.get("immutable") == "1" or not writable \
            or not os.access(file.parent, os.W_OK):
        return StoreUnavailable("store.error.readonly", db=file.name)
    return None


class RouteRepo:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @_retried
    def save(self, title: str, request: dict[str, Any], result: dict[str, Any]) -> str:
        route_id = str(uuid.uuid4())
        with _begin_write(self.engine) as conn:
            conn.execute(
                routes.insert().values(**_checked(routes, dict(
                    id=route_id,
                    created_at=_utcnow(),
                    title=title[:300],
                    request_json=json.dumps(request, ensure_ascii=False),
                    result_json=json.dumps(result, ensure_ascii=False),
                )))
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

    @_retried
    def record(self, layer: str, intent: str, score: float | None, latency_ms: Mapping[str, float],
               lang: str, text: str | None = None) -> int:
        """Store one event; ``latency_ms`` maps L1/L2/L3 to the ms of each layer that ran. Returns the id."""
        if layer not in LAYERS:
            raise ValueError(f"layer must be one of {LAYERS}, not {layer!r}")
        lat = {k: float(v) for k, v in latency_ms.items() if k in LAYERS}
        with _begin_write(self.engine) as conn:
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
            # rows are read by index: mypy types an unpacked Row as object, an indexed one as Any
            answered: dict[str, int] = {row[0]: row[1] for row in conn.execute(
                select(intent_events.c.layer, func.count()).group_by(intent_events.c.layer))}
            means = {k: conn.execute(select(func.avg(c), func.count(c))).one() for k, c in lat_cols.items()}
        total = sum(answered.values())
        out: list[dict[str, Any]] = []
        reached = total
        for layer in LAYERS:
            n = int(answered.get(layer, 0))
            mean, ran = means[layer][0], means[layer][1]
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
            for found in conn.execute(stmt):
                intent, layer, n = found[0], found[1], found[2]  # by index: see layer_stats
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
        return self._save(plan_id, request_text, state_json)

    @_retried
    def _save(self, plan_id: str, request_text: str, state_json: str) -> tuple[str, int]:
        row = _checked(plans, {"id": plan_id, "request_text": request_text, "state_json": state_json})
        # the version comes from the plan's counter (first use: one past the versions already stored), taken
        # in the transaction of the insert: concurrent saves of one plan get distinct versions
        seed = select(func.coalesce(func.max(plans.c.version), 0) + 1).where(plans.c.id == plan_id).scalar_subquery()
        with _begin_write(self.engine) as conn:
            version = _next_value(conn, f"plan:{plan_id}", seed)
            conn.execute(plans.insert().values(version=version, created_at=_utcnow(), **row))
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

    def versions(self, plan_id: str) -> builtins.list[dict[str, Any]]:
        """Every version of a plan, oldest first: version, created_at."""
        stmt = select(plans.c.version, plans.c.created_at).where(plans.c.id == plan_id).order_by(plans.c.version)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]


class ThreadRepo:
    """Chat threads and their messages; ``owner`` isolates browser sessions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @staticmethod
    def new_id() -> str:
        """A fresh thread id; nothing is stored until the thread's first message (:meth:`add_message` with
        ``owner``)."""
        return str(uuid.uuid4())

    @_retried
    def create(self, owner: str) -> str:
        """A new, empty thread of ``owner``, stored now; returns its id (a uuid)."""
        thread_id = self.new_id()
        now = _utcnow()
        with _begin_write(self.engine) as conn:
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
        if row is None or (owner is not None and row.owner != _clean_text(str(owner)[:100])):
            return None
        return dict(row._mapping)

    @_retried
    def add_message(self, thread_id: str, role: str, content: str, *, status: str | None = None,
                    meta: Mapping[str, Any] | None = None, owner: str | None = None) -> int:
        """Append a message; the first user message becomes the thread's title. Returns the message id.

        With ``owner``, a thread that does not exist yet is created for it in the same transaction (so no
        empty thread is ever stored); a thread of another owner raises KeyError, as does a missing thread
        without ``owner``.
        """
        now = _utcnow()
        row_values = _checked(messages, dict(
            thread_id=thread_id, created_at=now, role=role, content=content or "", status=status,
            meta_json=json.dumps(dict(meta), ensure_ascii=False, default=str) if meta else None))
        with _begin_write(self.engine) as conn:
            if owner is not None:
                _insert_missing(conn, threads, _checked(threads, dict(
                    id=thread_id, owner=str(owner)[:100], created_at=now, updated_at=now, title="", state_json=None)))
            row = conn.execute(select(threads.c.title, threads.c.owner).where(threads.c.id == thread_id)).first()
            if row is None:
                raise KeyError(f"no thread {thread_id!r}")
            if owner is not None and row.owner != _clean_text(str(owner)[:100]):
                raise KeyError(f"thread {thread_id!r} belongs to another owner")
            result = conn.execute(messages.insert().values(**row_values))
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
        self._update_message(message_id, _checked(messages, values))

    @_retried
    def _update_message(self, message_id: int, values: dict[str, Any]) -> None:
        with _begin_write(self.engine) as conn:
            conn.execute(messages.update().where(messages.c.id == message_id).values(**values))

    def messages(self, thread_id: str) -> builtins.list[dict[str, Any]]:
        """The thread's messages, oldest first: id, role, content, status, meta (dict), created_at."""
        stmt = select(messages).where(messages.c.thread_id == thread_id).order_by(messages.c.id)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        for row in rows:
            raw = row.pop("meta_json")
            row["meta"] = json.loads(raw) if raw else {}
        return rows

    @_retried
    def set_state(self, thread_id: str, state: Mapping[str, Any] | None) -> None:
        """Store the thread's clarification / flow state (a JSON-ready dict; None clears it)."""
        raw = json.dumps(dict(state), ensure_ascii=False, default=str) if state is not None else None
        with _begin_write(self.engine) as conn:
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

    @staticmethod
    def _number_seed(prefix: str) -> Any:
        """One past the highest number stored under ``prefix`` (a database from before the counters)."""
        seq = cast(func.substr(applications.c.number, len(prefix) + 1), Integer)
        return (select(func.coalesce(func.max(seq), 0) + 1)
                .where(applications.c.number.like(prefix + "%")).scalar_subquery())

    def insert(self, values: Mapping[str, Any], *, actor: str, action: str = "create",
               changes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Insert an application (``values`` with ``cities``/``aliases``/``excesses`` as lists); audited.

        Without a ``number`` in ``values`` the next one of the year of ``created_at`` (``TA-2026-0001``) is
        taken from the year's counter in the same transaction: concurrent inserts never share a number.
        """
        row = dict(values)
        row.setdefault("id", str(uuid.uuid4()))
        now = row.setdefault("created_at", _utcnow())
        row.setdefault("updated_at", now)
        for key in ("cities", "aliases", "excesses"):
            row[f"{key}_json"] = json.dumps(row.pop(key, []) or [], ensure_ascii=False, default=str)
        row = _checked(applications, row)
        self._insert(row, actor=actor, action=action, changes=changes)
        got = self.get(row["id"])
        assert got is not None
        return got

    @_retried
    def _insert(self, row: dict[str, Any], *, actor: str, action: str, changes: list[dict[str, Any]] | None) -> None:
        now = row["created_at"]
        with _begin_write(self.engine) as conn:
            values = dict(row)
            if not values.get("number"):
                prefix = f"TA-{now.year}-"
                values["number"] = f"{prefix}{_next_value(conn, f'application:{prefix}', self._number_seed(prefix)):04d}"
            conn.execute(applications.insert().values(**values))
            conn.execute(application_audit.insert().values(
                application_id=row["id"], at=now, actor=str(actor)[:100], action=action,
                changes_json=json.dumps(changes or [], ensure_ascii=False, default=str), comment=None))

    def update(self, app_id: str, values: Mapping[str, Any], *, actor: str, action: str,
               changes: list[dict[str, Any]], comment: str | None = None, at: datetime | None = None) -> dict[str, Any]:
        """Change an application and record one audit row (who, when, what: field old → new)."""
        row = dict(values)
        for key in ("cities", "aliases", "excesses"):
            if key in row:
                row[f"{key}_json"] = json.dumps(row.pop(key) or [], ensure_ascii=False, default=str)
        now = at or _utcnow()
        row["updated_at"] = now
        self._update(app_id, _checked(applications, row), now=now, actor=actor, action=action, changes=changes,
                     comment=comment)
        got = self.get(app_id)
        if got is None:
            raise KeyError(f"no application {app_id!r}")
        return got

    @_retried
    def _update(self, app_id: str, row: dict[str, Any], *, now: datetime, actor: str, action: str,
                changes: list[dict[str, Any]], comment: str | None) -> None:
        with _begin_write(self.engine) as conn:
            conn.execute(applications.update().where(applications.c.id == app_id).values(**row))
            conn.execute(application_audit.insert().values(
                application_id=app_id, at=now, actor=str(actor)[:100], action=action,
                changes_json=json.dumps(changes, ensure_ascii=False, default=str), comment=comment))

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

    def audit(self, app_id: str) -> builtins.list[dict[str, Any]]:
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

    @_retried
    def save(self, owner: str, items: list[Any], summary: Mapping[str, Any], *,
             application_number: str | None = None) -> str:
        claim_id = str(uuid.uuid4())
        row = _checked(claims, dict(
            id=claim_id, owner=str(owner)[:100], application_number=application_number, created_at=_utcnow(),
            total=float(summary.get("total", 0.0) or 0.0), currency=str(summary.get("currency", "CNY"))[:3],
            items_json=json.dumps(items, ensure_ascii=False, default=str),
            summary_json=json.dumps(dict(summary), ensure_ascii=False, default=str)))
        with _begin_write(self.engine) as conn:
            conn.execute(claims.insert().values(**row))
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

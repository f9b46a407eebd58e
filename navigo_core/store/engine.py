"""Engines and connections: URL normalising, SQLite pragmas (WAL, busy timeout), the schema migrated on
open, write transactions and their retries, and the counter / upsert helpers of the repositories."""

from __future__ import annotations

import functools
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    create_engine,
    event,
    inspect,
    select,
    text,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from navigo_core.store.errors import StoreBusy, StoreError, StoreUnavailable, _store_error, _translate_errors
from navigo_core.store.schema import counters, metadata

if TYPE_CHECKING:  # pragma: no cover - the dialects' INSERT … ON CONFLICT statements (imported when used)
    from sqlalchemy.dialects.postgresql import dml as postgresql_dml
    from sqlalchemy.dialects.sqlite import dml as sqlite_dml

F = TypeVar("F", bound=Callable[..., Any])


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


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


def _migrate_schema(engine: Engine, legacy_owner: str | None = None) -> None:
    """Bring the database to the newest schema revision (``navigo_core/store/migrations``) under the schema
    lock, so processes starting together do not race: a new database gets ``metadata``'s tables and is
    stamped; one from before Alembic (no revision) runs every revision from the baseline, which creates only
    the tables it lacks; a stamped one runs the revisions after its own. A database already at the newest
    revision is only read, and so is a read-only one (writes are refused anyway: :attr:`Store.fault`).
    ``legacy_owner``: the owner rows stored before owners existed get (``0003_owners``; None: its default)."""
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
                    migrations.upgrade(conn, head, legacy_owner=legacy_owner)
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


def make_engine(url: str, *, legacy_owner: str | None = None) -> Engine:
    """An engine for ``url`` with its tables; SQLite files get their folder created, WAL mode, a 30 s busy
    timeout. Every database error it raises later is a :class:`StoreError`; so is a failure to open.
    ``legacy_owner``: see :func:`_migrate_schema`."""
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
        _migrate_schema(engine, legacy_owner)
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

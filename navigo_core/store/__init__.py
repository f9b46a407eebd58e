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

The package, module by module (every name below is importable from ``navigo_core.store``):

* ``errors`` — :class:`StoreError` and its kinds; database errors translated into them.
* ``schema`` — ``metadata``, the tables and the column types (:class:`SafeString`, :class:`SafeText`).
* ``engine`` — :func:`make_engine` (URL, SQLite pragmas, the schema migrated on open), write transactions
  and their retries, the counter and upsert helpers.
* ``repos`` — one repository per module (routes, events, plans, threads, applications, claims, profiles).
* ``facade`` — :class:`Store`, the engine with its repositories.
* ``migrations`` — the Alembic revisions.
"""

from __future__ import annotations

from navigo_core.store.engine import BUSY_RETRIES, SQLITE_BUSY_TIMEOUT_MS, WRITE_OPTION, make_engine
from navigo_core.store.errors import StoreBusy, StoreError, StoreUnavailable, StoreValueError
from navigo_core.store.facade import Store
from navigo_core.store.repos import ApplicationRepo, ClaimRepo, EventRepo, PlanRepo, ProfileRepo, RouteRepo, ThreadRepo
from navigo_core.store.schema import (
    LAYERS,
    SafeString,
    SafeText,
    application_audit,
    applications,
    claims,
    counters,
    intent_events,
    messages,
    metadata,
    plans,
    profiles,
    routes,
    threads,
)

__all__ = [
    "BUSY_RETRIES", "LAYERS", "SQLITE_BUSY_TIMEOUT_MS", "WRITE_OPTION",
    "ApplicationRepo", "ClaimRepo", "EventRepo", "PlanRepo", "ProfileRepo", "RouteRepo", "ThreadRepo",
    "SafeString", "SafeText", "Store", "StoreBusy", "StoreError", "StoreUnavailable", "StoreValueError",
    "application_audit", "applications", "claims", "counters", "intent_events", "make_engine", "messages",
    "metadata", "plans", "profiles", "routes", "threads",
]

"""Schema migrations of the store, with Alembic, run from code (no ``alembic.ini``).

:func:`navigo_core.store.make_engine` calls :func:`upgrade` (or, for a brand-new database, creates the tables
from ``metadata`` and calls :func:`stamp`) on a connection that holds the schema lock, so processes starting
together never race. The revisions live in ``versions/``:

* ``0001_baseline`` — the schema of the release before the counters (routes, intent events, plans, threads,
  messages, applications, their audit, claims). It creates only the tables a database lacks, as that
  release's ``create_all`` did, so any database from before Alembic upgrades from it.
* ``0002_counters`` — the ``counters`` table, seeded from the numbers and plan versions already stored.
* ``0003_owners`` — ``routes.owner`` / ``plans.owner`` (existing rows: the legacy owner, as are applications and
  claims of the old hard-coded user ``me``) and ``applications.owner_department``.
* ``0004_profiles`` — ``profiles``: per user id, the grade, language and home city they gave once.

To add a change: write ``versions/NNNN_<what>.py`` with ``down_revision`` the current head (or generate a
draft: ``PYTHONPATH=. .venv/bin/python -c "from navigo_core.store.migrations import revision;
revision('what changed', 'sqlite:///data/navigo.db')"``), change the tables in ``navigo_core/store/schema.py`` to match,
and add a test that opens a database of the previous head.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text

SCRIPT_LOCATION = Path(__file__).resolve().parent
VERSION_TABLE = "alembic_version"
# Alembic's ``context`` and ``op`` are module-level proxies: one command at a time in a process
_COMMAND_LOCK = threading.Lock()

__all__ = ["SCRIPT_LOCATION", "VERSION_TABLE", "config", "current", "head", "revision", "stamp", "upgrade"]


def config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An Alembic configuration for these migrations: over ``connection`` (used as it is, inside its
    transaction), else over ``url``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPT_LOCATION))
    cfg.set_main_option("version_table", VERSION_TABLE)
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


@functools.cache
def head() -> str:
    """The newest revision (one head: the revisions form a line)."""
    heads = ScriptDirectory.from_config(config()).get_heads()
    if len(heads) != 1:  # pragma: no cover - two revisions with the same parent
        raise RuntimeError(f"the store migrations have {len(heads)} heads: {heads}; merge them into one")
    return heads[0]


def current(conn: Connection) -> str | None:
    """The revision the database is stamped with (None: not stamped: new, or from before Alembic)."""
    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    return conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()


def upgrade(conn: Connection, target: str = "head", *, legacy_owner: str | None = None) -> None:
    """Run the revisions from the database's one to ``target`` on ``conn`` (in its transaction).
    ``legacy_owner``: the owner of rows stored before owners existed (``0003_owners``; None: its default)."""
    cfg = config(conn)
    if legacy_owner:
        cfg.attributes["legacy_owner"] = legacy_owner
    with _COMMAND_LOCK:
        command.upgrade(cfg, target)


def stamp(conn: Connection, target: str = "head") -> None:
    """Record ``target`` as the database's revision without running anything (its tables already match)."""
    with _COMMAND_LOCK:
        command.stamp(config(conn), target)


def revision(message: str, url: str, **kwargs: Any) -> None:  # pragma: no cover - a developer's tool
    """Write a draft revision into ``versions/``, compared against the database at ``url`` (autogenerate)."""
    command.revision(config(url=url), message=message, autogenerate=True, **kwargs)

"""The :class:`Store` facade: an engine and one small repository per table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import StaticPool

from navigo_core.store.engine import _db_name, _read_only_fault, make_engine
from navigo_core.store.errors import StoreError
from navigo_core.store.repos import (
    ApplicationRepo,
    ClaimRepo,
    EventRepo,
    PlanRepo,
    ProfileRepo,
    RouteRepo,
    ThreadRepo,
)
from navigo_core.store.schema import metadata


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
        self.profiles = ProfileRepo(engine)

    @classmethod
    def from_url(cls, url: str, *, legacy_owner: str | None = None) -> "Store":
        """The store at ``url``; raises :class:`StoreUnavailable` (one sentence, what to do) when it cannot open.
        ``legacy_owner``: the owner an upgrade gives rows stored before owners existed (``Settings.legacy_owner``)."""
        engine = make_engine(url, legacy_owner=legacy_owner)
        return cls(engine, fault=_read_only_fault(engine))

    @classmethod
    def open(cls, url: str, *, legacy_owner: str | None = None) -> "Store":
        """Like :meth:`from_url`, but never raises: a database that cannot be opened gives an empty, read-only
        stand-in whose ``fault`` says why (pages that need no writes still render; writes raise the fault)."""
        try:
            return cls.from_url(url, legacy_owner=legacy_owner)
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

"""The store's errors, and the translation of every database error into one of them (one sentence and
what to do, never a traceback with paths and SQL)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy import exc as sa_exc

from navigo_core.errors import InputError, NavigoError


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


# --- faults: every database error becomes one sentence and what to do ----------------------

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


def _translate_errors(engine: Engine, db: str) -> None:
    @event.listens_for(engine, "handle_error")
    def _handle(ctx: Any) -> Any:
        if isinstance(ctx.sqlalchemy_exception, sa_exc.DBAPIError):  # not our own errors, not bugs
            return _store_error(ctx.original_exception, db)
        return None

"""Travel applications and their audit trail."""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Integer, cast, func, select

from navigo_core.store.engine import _begin_write, _next_value, _retried, _utcnow
from navigo_core.store.schema import _checked, application_audit, applications, owner_key


def _app_row(row: Any) -> dict[str, Any]:
    out = dict(row._mapping)
    for key in ("cities", "aliases", "excesses"):
        out[key] = json.loads(out.pop(f"{key}_json") or "[]")
    return out


class ApplicationRepo:
    """Travel applications and their audit trail (rules live in navigo_core.business.applications)."""

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

    def get_by_number(self, number: str, owner: str | None = None) -> dict[str, Any] | None:
        """The application with that number, or None (also when it is not ``owner``'s; ``owner`` None: any
        owner's: the approver's view, whose scope the service checks)."""
        stmt = select(applications).where(applications.c.number == number.upper())
        if owner is not None:
            stmt = stmt.where(applications.c.owner == owner_key(owner))
        with self.engine.connect() as conn:
            row = conn.execute(stmt).first()
        return _app_row(row) if row is not None else None

    def list(self, owner: str | None = None, statuses: tuple[str, ...] | None = None,
             limit: int = 200) -> list[dict[str, Any]]:
        """Newest first; filtered by owner (None: everyone's, the approver's view) and/or status."""
        stmt = select(applications)
        if owner is not None:
            stmt = stmt.where(applications.c.owner == owner_key(owner))
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

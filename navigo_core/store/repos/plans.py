"""Trip plans and their versions."""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, func, select

from navigo_core.store.engine import _begin_write, _next_value, _retried, _utcnow
from navigo_core.store.schema import _checked, owner_key, plans


class PlanRepo:
    """Trip plans with versions: every save of an existing plan adds version n + 1; nothing is overwritten.
    Each plan belongs to its ``owner`` (a user id): listed and opened for that owner only."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, plan_id: str | None, request_text: str, state_json: str | Mapping[str, Any], *,
             owner: str) -> tuple[str, int]:
        """Save a new plan (``plan_id`` None) or a new version of ``plan_id``; returns (plan_id, version).

        ``state_json``: the planner state as JSON text, or as a JSON-ready dict. A ``plan_id`` of another
        owner is not continued: the save starts a new plan of ``owner``.
        """
        if plan_id and self.versions(plan_id) and not self.versions(plan_id, owner):
            plan_id = None
        plan_id = plan_id or str(uuid.uuid4())
        if not isinstance(state_json, str):
            state_json = json.dumps(state_json, ensure_ascii=False)
        return self._save(plan_id, request_text, state_json, owner)

    @_retried
    def _save(self, plan_id: str, request_text: str, state_json: str, owner: str) -> tuple[str, int]:
        row = _checked(plans, {"id": plan_id, "request_text": request_text, "state_json": state_json,
                               "owner": owner_key(owner)})
        # the version comes from the plan's counter (first use: one past the versions already stored), taken
        # in the transaction of the insert: concurrent saves of one plan get distinct versions
        seed = select(func.coalesce(func.max(plans.c.version), 0) + 1).where(plans.c.id == plan_id).scalar_subquery()
        with _begin_write(self.engine) as conn:
            version = _next_value(conn, f"plan:{plan_id}", seed)
            conn.execute(plans.insert().values(version=version, created_at=_utcnow(), **row))
        return plan_id, version

    def list(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        """``owner``'s plans, newest first, one row per plan (its latest version): id, version, created_at,
        request_text."""
        latest = (select(plans.c.id, func.max(plans.c.version).label("version"))
                  .where(plans.c.owner == owner_key(owner)).group_by(plans.c.id).subquery())
        stmt = (select(plans.c.id, plans.c.version, plans.c.created_at, plans.c.request_text)
                .join(latest, (plans.c.id == latest.c.id) & (plans.c.version == latest.c.version))
                .order_by(plans.c.created_at.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, plan_id: str, version: int | None = None, owner: str | None = None) -> dict[str, Any] | None:
        """One version (default: the latest): id, version, owner, created_at, request_text, state_json (text)
        and state (the parsed dict); None if absent or not ``owner``'s (``owner`` None: any owner's, for
        maintenance and tests)."""
        stmt = select(plans).where(plans.c.id == plan_id)
        if owner is not None:
            stmt = stmt.where(plans.c.owner == owner_key(owner))
        stmt = stmt.where(plans.c.version == version) if version is not None else stmt.order_by(plans.c.version.desc())
        with self.engine.connect() as conn:
            row = conn.execute(stmt.limit(1)).first()
        if row is None:
            return None
        out = dict(row._mapping)
        out["state"] = json.loads(out["state_json"])
        return out

    def versions(self, plan_id: str, owner: str | None = None) -> builtins.list[dict[str, Any]]:
        """Every version of a plan, oldest first: version, created_at ([] when it is not ``owner``'s)."""
        stmt = select(plans.c.version, plans.c.created_at).where(plans.c.id == plan_id).order_by(plans.c.version)
        if owner is not None:
            stmt = stmt.where(plans.c.owner == owner_key(owner))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

"""Saved routes."""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import Engine, select

from navigo_core.store.engine import _begin_write, _retried, _utcnow
from navigo_core.store.schema import _checked, owner_key, routes


class RouteRepo:
    """Saved routes; each belongs to its ``owner`` (a user id): listed and opened for that owner only."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @_retried
    def save(self, title: str, request: dict[str, Any], result: dict[str, Any], *, owner: str) -> str:
        route_id = str(uuid.uuid4())
        with _begin_write(self.engine) as conn:
            conn.execute(
                routes.insert().values(**_checked(routes, dict(
                    id=route_id,
                    owner=owner_key(owner),
                    created_at=_utcnow(),
                    title=title[:300],
                    request_json=json.dumps(request, ensure_ascii=False),
                    result_json=json.dumps(result, ensure_ascii=False),
                )))
            )
        return route_id

    def list(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        """``owner``'s routes, newest first: id, created_at, title."""
        stmt = (
            select(routes.c.id, routes.c.created_at, routes.c.title)
            .where(routes.c.owner == owner_key(owner))
            .order_by(routes.c.created_at.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, route_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """The saved request and result, or None (also when it is not ``owner``'s: as if it did not exist;
        ``owner`` None: any owner's, for maintenance and tests)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(routes).where(routes.c.id == route_id)).first()
        if row is None or (owner is not None and row.owner != owner_key(owner)):
            return None
        return {
            "id": row.id,
            "owner": row.owner,
            "created_at": row.created_at,
            "title": row.title,
            "request": json.loads(row.request_json),
            "result": json.loads(row.result_json),
        }

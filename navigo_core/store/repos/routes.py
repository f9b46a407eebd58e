"""Saved routes."""

from __future__ import annotations

import json
import uuid
from typing import Any

from sqlalchemy import Engine, select

from navigo_core.store.engine import _begin_write, _retried, _utcnow
from navigo_core.store.schema import _checked, routes


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

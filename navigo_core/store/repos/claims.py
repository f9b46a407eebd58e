"""Saved expense claims."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, select

from navigo_core.store.engine import _begin_write, _retried, _utcnow
from navigo_core.store.schema import _checked, owner_key, claims


class ClaimRepo:
    """Saved expense claims."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @_retried
    def save(self, owner: str, items: list[Any], summary: Mapping[str, Any], *,
             application_number: str | None = None) -> str:
        claim_id = str(uuid.uuid4())
        row = _checked(claims, dict(
            id=claim_id, owner=owner_key(owner), application_number=application_number, created_at=_utcnow(),
            total=float(summary.get("total", 0.0) or 0.0), currency=str(summary.get("currency", "CNY"))[:3],
            items_json=json.dumps(items, ensure_ascii=False, default=str),
            summary_json=json.dumps(dict(summary), ensure_ascii=False, default=str)))
        with _begin_write(self.engine) as conn:
            conn.execute(claims.insert().values(**row))
        return claim_id

    def list(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        """``owner``'s claims, newest first: id, owner, application_number, created_at, total, currency."""
        stmt = select(claims.c.id, claims.c.owner, claims.c.application_number, claims.c.created_at, claims.c.total,
                      claims.c.currency).where(claims.c.owner == owner_key(owner))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt.order_by(claims.c.created_at.desc()).limit(limit))]

    def get(self, claim_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """The claim, or None (also when it is not ``owner``'s; ``owner`` None: any owner's, for tests)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(claims).where(claims.c.id == claim_id)).first()
        if row is None or (owner is not None and row.owner != owner_key(owner)):
            return None
        out = dict(row._mapping)
        out["items"] = json.loads(out.pop("items_json"))
        out["summary"] = json.loads(out.pop("summary_json"))
        return out

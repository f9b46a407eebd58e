"""The one store: SQLAlchemy Core tables and small repositories.

The default engine is a SQLite file under ``data/`` in WAL mode; set
``DATABASE_URL`` to use another database (for example PostgreSQL). Tables are
created on first use. Repositories take and return plain dicts / pydantic
models, never ORM objects.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    select,
)

metadata = MetaData()

routes = Table(
    "routes",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("title", String(300), nullable=False),
    Column("request_json", Text, nullable=False),
    Column("result_json", Text, nullable=False),
)


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their folder created and WAL mode."""
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

    metadata.create_all(engine)
    return engine


class Store:
    """Facade over the engine with one small repository per table."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.routes = RouteRepo(engine)

    @classmethod
    def from_url(cls, url: str) -> "Store":
        return cls(make_engine(url))

    @property
    def description(self) -> str:
        """What the UI shows as the storage engine (no credentials)."""
        url = self.engine.url
        if url.get_backend_name() == "sqlite":
            return f"SQLite ({Path(url.database or ':memory:').name})"
        return f"{url.get_backend_name()} ({url.host or 'local'})"


class RouteRepo:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(self, title: str, request: dict[str, Any], result: dict[str, Any]) -> str:
        route_id = str(uuid.uuid4())
        with self.engine.begin() as conn:
            conn.execute(
                routes.insert().values(
                    id=route_id,
                    created_at=_utcnow(),
                    title=title[:300],
                    request_json=json.dumps(request, ensure_ascii=False),
                    result_json=json.dumps(result, ensure_ascii=False),
                )
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

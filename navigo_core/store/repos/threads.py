"""Chat threads and their messages."""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, select

from navigo_core.store.engine import _begin_write, _insert_missing, _retried, _utcnow
from navigo_core.store.schema import _checked, messages, owner_key, threads


class ThreadRepo:
    """Chat threads and their messages; ``owner`` isolates browser sessions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @staticmethod
    def new_id() -> str:
        """A fresh thread id; nothing is stored until the thread's first message (:meth:`add_message` with
        ``owner``)."""
        return str(uuid.uuid4())

    @_retried
    def create(self, owner: str) -> str:
        """A new, empty thread of ``owner``, stored now; returns its id (a uuid)."""
        thread_id = self.new_id()
        now = _utcnow()
        with _begin_write(self.engine) as conn:
            conn.execute(threads.insert().values(id=thread_id, owner=owner_key(owner), created_at=now,
                                                 updated_at=now, title="", state_json=None))
        return thread_id

    def list(self, owner: str, limit: int = 50) -> list[dict[str, Any]]:
        """``owner``'s threads, most recently updated first: id, title (the first user message), created_at,
        updated_at."""
        stmt = (select(threads.c.id, threads.c.title, threads.c.created_at, threads.c.updated_at)
                .where(threads.c.owner == owner_key(owner))
                .order_by(threads.c.updated_at.desc(), threads.c.created_at.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def get(self, thread_id: str, owner: str | None = None) -> dict[str, Any] | None:
        """id, owner, title, created_at, updated_at (None if absent, or not ``owner``'s when given)."""
        stmt = select(threads.c.id, threads.c.owner, threads.c.title, threads.c.created_at,
                      threads.c.updated_at).where(threads.c.id == thread_id)
        with self.engine.connect() as conn:
            row = conn.execute(stmt).first()
        if row is None or (owner is not None and row.owner != owner_key(owner)):
            return None
        return dict(row._mapping)

    @_retried
    def add_message(self, thread_id: str, role: str, content: str, *, status: str | None = None,
                    meta: Mapping[str, Any] | None = None, owner: str | None = None) -> int:
        """Append a message; the first user message becomes the thread's title. Returns the message id.

        With ``owner``, a thread that does not exist yet is created for it in the same transaction (so no
        empty thread is ever stored); a thread of another owner raises KeyError, as does a missing thread
        without ``owner``.
        """
        now = _utcnow()
        row_values = _checked(messages, dict(
            thread_id=thread_id, created_at=now, role=role, content=content or "", status=status,
            meta_json=json.dumps(dict(meta), ensure_ascii=False, default=str) if meta else None))
        with _begin_write(self.engine) as conn:
            if owner is not None:
                _insert_missing(conn, threads, _checked(threads, dict(
                    id=thread_id, owner=owner_key(owner), created_at=now, updated_at=now, title="", state_json=None)))
            row = conn.execute(select(threads.c.title, threads.c.owner).where(threads.c.id == thread_id)).first()
            if row is None:
                raise KeyError(f"no thread {thread_id!r}")
            if owner is not None and row.owner != owner_key(owner):
                raise KeyError(f"thread {thread_id!r} belongs to another owner")
            result = conn.execute(messages.insert().values(**row_values))
            values: dict[str, Any] = {"updated_at": now}
            if role == "user" and not row.title:
                values["title"] = " ".join((content or "").split())[:300]
            conn.execute(threads.update().where(threads.c.id == thread_id).values(**values))
        return int(result.inserted_primary_key[0])

    def update_message(self, message_id: int, content: str | None = None, status: str | None = None,
                       meta: Mapping[str, Any] | None = None) -> None:
        """Change a message's content, status and/or meta (None: keep); e.g. the partial text of a broken stream."""
        values: dict[str, Any] = {}
        if content is not None:
            values["content"] = content
        if status is not None:
            values["status"] = status
        if meta is not None:
            values["meta_json"] = json.dumps(dict(meta), ensure_ascii=False, default=str)
        if not values:
            return
        self._update_message(message_id, _checked(messages, values))

    @_retried
    def _update_message(self, message_id: int, values: dict[str, Any]) -> None:
        with _begin_write(self.engine) as conn:
            conn.execute(messages.update().where(messages.c.id == message_id).values(**values))

    def messages(self, thread_id: str) -> builtins.list[dict[str, Any]]:
        """The thread's messages, oldest first: id, role, content, status, meta (dict), created_at."""
        stmt = select(messages).where(messages.c.thread_id == thread_id).order_by(messages.c.id)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        for row in rows:
            raw = row.pop("meta_json")
            row["meta"] = json.loads(raw) if raw else {}
        return rows

    @_retried
    def set_state(self, thread_id: str, state: Mapping[str, Any] | None) -> None:
        """Store the thread's clarification / flow state (a JSON-ready dict; None clears it)."""
        raw = json.dumps(dict(state), ensure_ascii=False, default=str) if state is not None else None
        with _begin_write(self.engine) as conn:
            conn.execute(threads.update().where(threads.c.id == thread_id).values(state_json=raw))

    def get_state(self, thread_id: str) -> dict[str, Any]:
        """The thread's state ({} when none was stored)."""
        with self.engine.connect() as conn:
            raw = conn.execute(select(threads.c.state_json).where(threads.c.id == thread_id)).scalar()
        return json.loads(raw) if raw else {}

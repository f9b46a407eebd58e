"""What each user said once and the app keeps: grade, language, home city."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, select

from navigo_core.store.engine import _begin_write, _insert_missing, _retried, _utcnow
from navigo_core.store.errors import StoreError
from navigo_core.store.schema import _checked, owner_key, profiles

FIELDS = ("grade", "language", "home_city")


class ProfileRepo:
    """One profile per user id: values given once (the grade stated in the chat, the language picked, the origin of
    a trip) are kept for that user only and used by the chat, the planner, applications and claims."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, user_id: str) -> dict[str, Any]:
        """``{"grade", "language", "home_city"}`` of ``user_id`` (each None until given)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(profiles).where(profiles.c.user_id == owner_key(user_id))).first()
        return {f: (getattr(row, f) if row is not None else None) for f in FIELDS}

    # A profile is a convenience: the chat and the pages go on without it. These two are what they call.
    def kept(self, user_id: str) -> dict[str, Any]:
        """:meth:`get`, or ``{}`` when the store cannot be read."""
        try:
            return self.get(user_id)
        except StoreError:
            return {}

    def keep(self, user_id: str, **values: str | None) -> bool:
        """:meth:`remember`; False (nothing kept) when the store cannot be written, e.g. a read-only one."""
        try:
            self.remember(user_id, **values)
        except StoreError:
            return False
        return True

    def remember(self, user_id: str, **values: str | None) -> None:
        """Keep the values given (empty or None ones are ignored; an unknown field raises ``TypeError``)."""
        unknown = set(values) - set(FIELDS)
        if unknown:
            raise TypeError(f"not a profile field: {sorted(unknown)}")
        given = {k: str(v).strip() for k, v in values.items() if v is not None and str(v).strip()}
        if not given or not str(user_id).strip():
            return
        self._remember(owner_key(user_id), _checked(profiles, given))

    @_retried
    def _remember(self, user_id: str, values: dict[str, Any]) -> None:
        now = _utcnow()
        with _begin_write(self.engine) as conn:
            _insert_missing(conn, profiles, {"user_id": user_id, "updated_at": now})
            conn.execute(profiles.update().where(profiles.c.user_id == user_id)
                         .values(updated_at=now, **values))

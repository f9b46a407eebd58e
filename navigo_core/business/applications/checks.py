"""An application's trip against the travel policy: the policy in force (fail closed), the traveller's grade
(:func:`~navigo_core.business.policy.requested_grade`),
the excesses of a trip."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date
from typing import TYPE_CHECKING, Any

from navigo_core.business.applications.errors import PolicyUnavailable
from navigo_core.business.applications.models import PolicyExcess
from navigo_core.business.policy import requested_grade

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.config import Settings


def require_policy(settings: Settings | None) -> Any:
    """The travel policy ``settings.travel_policy_file`` names (None or an empty setting: the shipped one, as for
    :class:`~navigo_core.planner.deps.PlannerDeps`), read now; :class:`PolicyUnavailable` when it cannot be read,
    whatever the reason. The caller passes its settings: this never reads the global ones."""
    from navigo_core.business.policy import PolicyError, policy_for_settings

    try:
        return policy_for_settings(settings)
    except PolicyError as exc:
        raise PolicyUnavailable(exc) from exc
    except Exception as exc:  # noqa: BLE001 - whatever the file holds: refuse, never check against nothing
        raise PolicyUnavailable(f"{type(exc).__name__}: {exc}") from exc


def policy_excesses(policy: Any, grade: str | None, *, cities: Iterable[str], start: date | None, end: date | None,
                    hotel_per_night: float | None = None, currency: str = "CNY", today: date | None = None,
                    checker: Callable[..., list[Any]] | None = None) -> list[PolicyExcess]:
    """The excesses of a trip under ``policy`` for ``grade`` (read by ``policy.resolve_grade``: empty or unknown,
    the default grade), one check per city."""
    if policy is None:
        return []
    if checker is None:
        from navigo_core.business.policy import check_trip

        checker = check_trip
    gid: str = policy.resolve_grade(grade)[0]
    nights = max((end - start).days, 0) if start and end else 0
    days = nights + 1 if start and end else None
    ahead = (start - today).days if start and today else None
    out: dict[str, PolicyExcess] = {}
    for city in cities:
        found = checker(policy, city=city, grade=gid, nights=max(nights, 1), hotel_per_night=hotel_per_night,
                        days=days, booked_days_ahead=ahead, currency=currency)
        for e in found:
            data = e.model_dump() if hasattr(e, "model_dump") else dict(e)
            out.setdefault(str(data.get("rule_id")), PolicyExcess(**{k: v for k, v in data.items()
                                                                      if k in PolicyExcess.model_fields}))
    return list(out.values())


def policy_and_grade(context: Any, message: str = "") -> tuple[Any, str, bool]:
    """(policy, grade, grade_assumed): :func:`~navigo_core.business.policy.requested_grade` (the message, the
    conversation, the user's profile, the settings) read by ``policy.resolve_grade`` (none or an
    unknown one: the policy's default grade, assumed; say so with ``navigo_core.business.policy.grade_note``).

    Fail closed: without a readable policy (a missing or broken ``TRAVEL_POLICY_FILE``, even one deleted
    while the app runs) it raises :class:`PolicyUnavailable`, so no business action goes on as if the
    trip complied."""
    policy = getattr(context, "policy", None) or require_policy(getattr(context, "settings", None))
    grade, assumed = policy.resolve_grade(requested_grade(context, message, policy))
    return policy, grade, assumed

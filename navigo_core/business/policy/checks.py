"""Checks of a trip or an expense against the travel policy, and the note on an assumed grade.

Checks (:func:`check_trip`, :func:`check_expense`) return :class:`Excess` items, each citing the
rule (id + text, en and zh) and the amount over in the caller's currency. Amounts in the policy are
in its ``currency`` (CNY); other currencies are converted with the static table of
:mod:`navigo_core.providers.prices` (an estimate).
"""

from __future__ import annotations

from typing import Any, Literal

from navigo_core.business.policy.models import CABINS, SEATS, AmountRule, Excess, Tier, TravelPolicy
from navigo_core.i18n import t

Category = Literal["hotel", "meal", "transport", "flight", "train", "other"]


#: Where :func:`requested_grade_origin` found the grade.
GradeOrigin = Literal["message", "conversation", "profile", "settings", "none"]


def requested_grade_origin(context: Any, message: str = "", policy: TravelPolicy | None = None) -> tuple[str, GradeOrigin]:
    """The grade the traveller gave, as written ("" when none), and where it was found, the first of:

    1. stated in ``message`` ("我是经理级": ``policy.stated_grade``);
    2. the conversation's (``context.subject["grade"]``);
    3. the signed-in user's kept one (``context.store.profiles.kept(context.user)``: given once, in an earlier
       conversation; a store that cannot be read keeps nothing);
    4. ``context.settings.employee_grade``.

    ``context`` is anything with (some of) those attributes: a gate context, the planner's deps, a page's
    context; a missing one is skipped. This is the one place that decides *which* grade a check is for;
    :meth:`TravelPolicy.resolve_grade` then reads it (empty or unknown: the default grade, assumed)."""
    stated = policy.stated_grade(message) if policy is not None and message else None
    if stated:
        return str(stated).strip(), "message"
    subject = getattr(context, "subject", None) or {}
    if str(subject.get("grade") or "").strip():
        return str(subject["grade"]).strip(), "conversation"
    profiles, user = getattr(getattr(context, "store", None), "profiles", None), getattr(context, "user", None)
    if profiles is not None and user:
        kept = str(profiles.kept(user).get("grade") or "").strip()
        if kept:
            return kept, "profile"
    configured = str(getattr(getattr(context, "settings", None), "employee_grade", "") or "").strip()
    return (configured, "settings") if configured else ("", "none")


def requested_grade(context: Any, message: str = "", policy: TravelPolicy | None = None) -> str:
    """The grade of :func:`requested_grade_origin`, without where it came from."""
    return requested_grade_origin(context, message, policy)[0]


def grade_note(policy: TravelPolicy, raw: str | None, lang: str = "en") -> str:
    """Why :meth:`TravelPolicy.resolve_grade` assumed the default grade for ``raw`` (none given, or not a grade
    of the policy), in ``lang``; "" when ``raw`` names a grade."""
    grade, assumed = policy.resolve_grade(raw)
    if not assumed:
        return ""
    label = policy.grade(grade).label(lang)
    if not str(raw or "").strip():
        return t("policy.grade.assumed_unset", lang, grade=grade, label=label)
    from navigo_core.errors import clip

    return t("policy.grade.assumed_unknown", lang, raw=clip(str(raw).strip(), 40), grade=grade, label=label,
             known=", ".join(policy.grades))


def _to(amount: float, src: str, dst: str) -> float:
    if src.upper() == dst.upper():
        return float(amount)
    from navigo_core.providers.prices import convert

    return convert(amount, src, dst)


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 0.005 else f"{x:,.2f}"


def _tier_label(tier: Tier) -> tuple[str, str]:
    return tier.label_en, tier.label_zh


def _amount_excess(policy: TravelPolicy, rule: AmountRule, category: str, tier: Tier, grade: str, *, spent: float,
                   units: float, unit_key: str, currency: str) -> list[Excess]:
    """``spent`` (total over ``units`` nights/days, in ``currency``) against the rule's per-unit amount."""
    cap_policy = rule.table[tier.id][grade]
    cap = round(_to(cap_policy, policy.currency, currency), 2)
    units = max(1.0, float(units or 1))
    per_unit = spent / units
    if per_unit <= cap + 0.005:
        return []
    over = round(spent - cap * units, 2)
    params = dict(rule_id=rule.id, cap=_fmt(cap), per_unit=_fmt(per_unit), over=_fmt(over), ccy=currency.upper(),
                  units=_fmt(units), grade=grade)
    return [Excess(
        rule_id=rule.id, category=category,
        rule=t(f"policy.rule.{category}", "en", text=rule.text("en"), tier=tier.label_en, grade=grade,
               cap=_fmt(cap_policy), ccy=policy.currency),
        rule_zh=t(f"policy.rule.{category}", "zh", text=rule.text("zh"), tier=tier.label_zh, grade=grade,
                  cap=_fmt(cap_policy), ccy=policy.currency),
        amount_over=over, currency=currency.upper(),
        message=t(f"policy.excess.{unit_key}", "en", what=t(f"policy.what.{category}", "en"), **params),
        message_zh=t(f"policy.excess.{unit_key}", "zh", what=t(f"policy.what.{category}", "zh"), **params),
    )]


def _class_excess(policy: TravelPolicy, kind: str, grade: str, used: str, hours: float | None) -> list[Excess]:
    order = CABINS if kind == "flight" else SEATS
    rule = policy.cabin_rule(grade, hours) if kind == "flight" else policy.train_rule(grade, hours)
    used_key = str(used or "").strip().lower().replace(" ", "_").replace("-", "_")
    used_key = {"first": "business" if kind == "flight" else "first_class", "premium": "premium_economy",
                "second": "second_class"}.get(used_key, used_key)
    if used_key not in order or order.index(used_key) <= order.index(rule.value):
        return []
    params = dict(rule_id=rule.id, grade=grade, hours=_fmt(float(hours or 0)))
    return [Excess(
        rule_id=rule.id, category=kind, rule=rule.text("en"), rule_zh=rule.text("zh"), amount_over=None,
        currency=policy.currency,
        message=t(f"policy.excess.{kind}", "en", used=t(f"policy.class.{kind}.{used_key}", "en"),
                  allowed=t(f"policy.class.{kind}.{rule.value}", "en"), **params),
        message_zh=t(f"policy.excess.{kind}", "zh", used=t(f"policy.class.{kind}.{used_key}", "zh"),
                     allowed=t(f"policy.class.{kind}.{rule.value}", "zh"), **params),
    )]


def _advance_excess(policy: TravelPolicy, days_ahead: int) -> list[Excess]:
    if days_ahead >= policy.advance_days:
        return []
    params = dict(rule_id=policy.advance_rule_id, days=days_ahead, need=policy.advance_days)
    return [Excess(rule_id=policy.advance_rule_id, category="advance", rule=policy.advance_text("en"),
                   rule_zh=policy.advance_text("zh"), amount_over=None, currency=policy.currency,
                   message=t("policy.excess.advance", "en", **params), message_zh=t("policy.excess.advance", "zh", **params))]


def check_trip(policy: TravelPolicy, *, city: Any, grade: str, nights: int, hotel_per_night: float | None,
               cabin: str | None = None, flight_hours: float | None = None, days: int | None = None,
               meals_per_day: float | None = None, booked_days_ahead: int | None = None,
               currency: str = "CNY", train_seat: str | None = None, train_hours: float | None = None,
               transport_per_day: float | None = None) -> list[Excess]:
    """Every way a planned trip breaks the policy (empty: compliant).

    ``hotel_per_night`` and ``meals_per_day`` are per traveller/room, in ``currency``;
    ``amount_over`` is the total over the trip (nights × excess per night), in ``currency``.
    """
    gid = policy._check_grade(grade)
    tier = policy.tier_of(city)
    out: list[Excess] = []
    n = max(1, int(nights or 0))
    d = max(1, int(days if days is not None else n + 1))
    if hotel_per_night is not None and nights:
        out += _amount_excess(policy, policy.hotel, "hotel", tier, gid, spent=hotel_per_night * n, units=n,
                              unit_key="per_night", currency=currency)
    if meals_per_day is not None:
        out += _amount_excess(policy, policy.meals, "meal", tier, gid, spent=meals_per_day * d, units=d,
                              unit_key="per_day", currency=currency)
    if transport_per_day is not None:
        out += _amount_excess(policy, policy.local_transport, "transport", tier, gid, spent=transport_per_day * d,
                              units=d, unit_key="per_day", currency=currency)
    if cabin:
        out += _class_excess(policy, "flight", gid, cabin, flight_hours)
    if train_seat:
        out += _class_excess(policy, "train", gid, train_seat, train_hours)
    if booked_days_ahead is not None:
        out += _advance_excess(policy, int(booked_days_ahead))
    return out


def check_expense(policy: TravelPolicy, *, city: Any, grade: str, category: Category, amount: float, currency: str,
                  nights: int = 1, days: int = 1, cabin: str | None = None, seat: str | None = None,
                  duration_hours: float | None = None) -> list[Excess]:
    """One expense against the policy: ``amount`` is the total for ``nights`` (hotel) or ``days``
    (meal, transport). Flight and train fares have no price cap; pass ``cabin`` / ``seat`` (and
    ``duration_hours``) to check the class. ``other`` is never checked."""
    gid = policy._check_grade(grade)
    tier = policy.tier_of(city)
    if category == "hotel":
        return _amount_excess(policy, policy.hotel, "hotel", tier, gid, spent=float(amount), units=max(1, nights),
                              unit_key="per_night", currency=currency)
    if category == "meal":
        return _amount_excess(policy, policy.meals, "meal", tier, gid, spent=float(amount), units=max(1, days),
                              unit_key="per_day", currency=currency)
    if category == "transport":
        return _amount_excess(policy, policy.local_transport, "transport", tier, gid, spent=float(amount),
                              units=max(1, days), unit_key="per_day", currency=currency)
    if category == "flight" and cabin:
        return _class_excess(policy, "flight", gid, cabin, duration_hours)
    if category == "train" and seat:
        return _class_excess(policy, "train", gid, seat, duration_hours)
    return []

"""Budget agent: arithmetic in code, every line with its formula, every estimate labelled.

* flights: (outbound + return fare per traveller) × travellers — the recommended offers'
  prices (``price / price_is_total_for``), converted to the budget's currency;
* ground transport (when no flight makes sense): 2 × distance × fare per km × travellers;
* accommodation: nights × rooms × nightly rate of the tier, rooms = ⌈travellers / occupancy⌉; with a
  budget and no hotel class named, the best tier that fits what is left after transport, food and
  local travel (the cheapest when none fits);
* food and local transport: days × travellers × daily cost at the destination's price level.

Unit prices are converted and rounded to cents first, so every formula multiplies out
exactly. ``BUDGET_EXCEEDED`` when the total is above the budget, with concrete tips.
Owns: ``budget``.
"""

from __future__ import annotations

import math
from typing import Any

from navigo_core.planner.agents._common import data, entry, lang_of, required, t, travellers
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import BUDGET_EXCEEDED, BudgetAssessment, BudgetLine, PlannerState, Tier

NAME = "budget"
TIER_ORDER: tuple[Tier, ...] = ("budget", "mid", "luxury")


def ready(state: PlannerState) -> bool:
    return (state.itinerary is not None and state.preferences is not None and state.flight_options is not None
            and state.budget is None and not state.blocked)


def fmt(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".") if x != int(x) else f"{x:,.0f}"


def explicit_tier(state: PlannerState) -> bool:
    """The user named a hotel class ("5-star", "hostel", "经济型"): the budget does not pick it."""
    from navigo_core.planner.agents.preference import BUDGET_WORDS, PREMIUM

    text = " ".join(state.inputs())
    return bool(PREMIUM.search(text) or BUDGET_WORDS.search(text))


def fitting_tier(left: float, nights: int, travellers: int, room_rate: Any) -> Tier:
    """The best hotel class whose rooms for ``nights`` fit in ``left`` (the cheapest when none does)."""
    data_occupancy = data("planning")["occupancy"]
    for tier in reversed(TIER_ORDER):
        rooms = math.ceil(travellers / int(data_occupancy.get(tier, 2)))
        if nights * rooms * room_rate(tier) <= left:
            return tier
    return TIER_ORDER[0]


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    req = required(state.user_request, "the user request")
    lang = lang_of(state)
    prices = deps.prices
    dest = req.destination
    country = (state.destination_candidates[0].country if state.destination_candidates else "") or getattr(dest, "country", "")
    level = prices.price_level(country)
    ccy = req.budget.currency.upper() if req.budget is not None else level.currency

    def conv(amount: float, src: str) -> float:
        return round(prices.convert(amount, src, ccy), 2)

    pax = travellers(state)
    n_days = len(state.itinerary or [])
    nights = max(0, n_days - 1)
    tier = required(state.preferences, "the preferences").accommodation_preference
    occupancy = int(data("planning")["occupancy"].get(tier, 2))
    rooms = math.ceil(pax / occupancy)
    est = t("planner.budget.estimate", lang)
    lines: list[BudgetLine] = []

    out = state.flight_by_id(state.recommended_flight_id)
    back = state.flight_by_id(state.recommended_return_flight_id)
    if out is not None:
        legs = [f for f in (out, back) if f is not None]
        units = [conv(f.price / f.price_is_total_for, f.currency) for f in legs]
        amount = round(pax * sum(units), 2)
        names = [t("planner.budget.outbound", lang), t("planner.budget.return", lang)]
        parts = " + ".join(f"{names[i]} {fmt(u)} {ccy}" for i, u in enumerate(units))
        formula = f"({parts}) × {pax} {t('planner.budget.travellers', lang)} = {fmt(amount)} {ccy}"
        if any(f.currency.upper() != ccy for f in legs):
            formula += " " + t("planner.budget.converted", lang, src=legs[0].currency)
        lines.append(BudgetLine(category="flights", formula=formula, amount=amount, currency=ccy,
                                estimated=any(f.estimated for f in legs) or any(f.currency.upper() != ccy for f in legs)))
    elif state.ground_distance_km:
        rates = data("planning")["ground_fare_per_km"]
        rate = rates.get(country) or rates["default"]
        unit = round(prices.convert(float(rate["amount"]), rate["currency"], ccy), 4)
        km = float(state.ground_distance_km)
        per_pax = round(2 * km * unit, 2)
        amount = round(per_pax * pax, 2)
        formula = (f"2 × {fmt(km)} km × {unit:g} {ccy}/km = {fmt(per_pax)} {ccy} × {pax} "
                   f"{t('planner.budget.travellers', lang)} = {fmt(amount)} {ccy}")
        lines.append(BudgetLine(category="ground_transport", formula=formula, amount=amount, currency=ccy))

    food = conv(level.food_per_day_usd, "USD")
    local = conv(level.local_transport_per_day_usd, "USD")
    fitted = None
    if req.budget is not None and nights > 0 and not explicit_tier(state):
        # the hotel class follows what the budget leaves per night after transport, food and local travel
        left = req.budget.amount - sum(x.amount for x in lines) - n_days * pax * (food + local)
        fitted = fitting_tier(left, nights, pax, lambda x: conv(level.room_usd(x), "USD"))
        if fitted != tier:
            tier = fitted
            occupancy = int(data("planning")["occupancy"].get(tier, 2))
            rooms = math.ceil(pax / occupancy)
    room = conv(level.room_usd(tier), "USD")
    amount = round(nights * rooms * room, 2)
    lines.append(BudgetLine(category="accommodation", currency=ccy, amount=amount, formula=(
        f"{nights} {t('planner.budget.nights', lang)} × {rooms} {t('planner.budget.rooms', lang)} × {fmt(room)} {ccy} "
        f"({t('planner.tier.' + tier, lang)}) = {fmt(amount)} {ccy}")))
    amount = round(n_days * pax * food, 2)
    lines.append(BudgetLine(category="food", currency=ccy, amount=amount, formula=(
        f"{n_days} {t('planner.budget.days', lang)} × {pax} {t('planner.budget.travellers', lang)} × {fmt(food)} {ccy} "
        f"= {fmt(amount)} {ccy}")))
    amount = round(n_days * pax * local, 2)
    lines.append(BudgetLine(category="local_transport", currency=ccy, amount=amount, formula=(
        f"{n_days} {t('planner.budget.days', lang)} × {pax} {t('planner.budget.travellers', lang)} × {fmt(local)} {ccy} "
        f"= {fmt(amount)} {ccy}")))
    for line in lines:
        if line.estimated and est not in line.formula:
            line.formula += f" ({est})"
    total = round(sum(x.amount for x in lines), 2)
    limit = req.budget.amount if req.budget is not None else None
    within = None if limit is None else total <= limit + 0.005
    flags: list[str] = []
    tips: list[str] = []
    if within is False and limit is not None:  # (within is None exactly when there is no limit)
        flags.append(BUDGET_EXCEEDED)
        tips.append(t("planner.tip.over", lang, over=fmt(round(total - limit, 2)), ccy=ccy))
        i = TIER_ORDER.index(tier)
        if i > 0:
            cheaper = TIER_ORDER[i - 1]
            save = round(nights * rooms * (room - conv(level.room_usd(cheaper), "USD")), 2)
            if save > 0:
                tips.append(t("planner.tip.tier", lang, tier=t("planner.tier." + cheaper, lang), save=fmt(save), ccy=ccy))
        if nights >= 2:
            save = round(rooms * room + pax * (food + local), 2)
            tips.append(t("planner.tip.night", lang, save=fmt(save), ccy=ccy))
        if out is not None and state.flight_options:
            cheapest = min(state.flight_options, key=lambda f: conv(f.price / f.price_is_total_for, f.currency))
            diff = round(pax * (conv(out.price / out.price_is_total_for, out.currency)
                                - conv(cheapest.price / cheapest.price_is_total_for, cheapest.currency)), 2)
            if diff > 0:
                tips.append(t("planner.tip.flight", lang, time=cheapest.depart_at.strftime("%H:%M"), save=fmt(diff), ccy=ccy))
        if out is not None:
            tips.append(t("planner.tip.train", lang))
    elif within is True and limit is not None:
        tips.append(t("planner.tip.left", lang, left=fmt(round(limit - total, 2)), ccy=ccy))
    assessment = BudgetAssessment(lines=lines, total=total, currency=ccy, budget=limit, within_budget=within, flags=flags,
                                  tips=tips, tier=tier, nights=nights, rooms=rooms, travellers=pax, estimated=True,
                                  note=t("planner.budget.note", lang, as_of=getattr(level, "as_of", "")))
    update: dict[str, Any] = {"budget": assessment}
    update.update(entry(NAME, deps, input_summary=f"budget {limit} {ccy}, {n_days} day(s), {pax} traveller(s)",
                        evidence=[f"total {fmt(total)} {ccy} vs budget {fmt(limit) if limit is not None else '-'}",
                                  f"tier: {tier}" + (" (fitted to the budget left per night)" if fitted else "")
                                  + f", rooms: {rooms}, nights: {nights}",
                                  f"flight: {state.recommended_flight_id or '-'} / {state.recommended_return_flight_id or '-'}",
                                  f"price level {country or '?'}: {getattr(level, 'level', '?')}"],
                        risk_flags=flags,
                        output_summary=f"total {fmt(total)} {ccy}; " + ("within budget" if within else
                                                                        "over budget" if within is False else "no budget")))
    return update

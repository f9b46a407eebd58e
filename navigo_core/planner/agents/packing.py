"""Packing agent: a deduplicated list fitted to the forecast, the activities and the travellers.

Rules in ``data/packing.yaml`` (``when``: always, international, rain, heavy_rain, cold, hot,
no_forecast, hiking, tea, outdoors_warm, children). Owns: ``packing``.
"""

from __future__ import annotations

from typing import Any

from navigo_core.planner.agents._common import data, entry, lang_of, t
from navigo_core.planner.deps import PlannerDeps
from navigo_core.planner.state import PackingItem, PlannerState

NAME = "packing"


def ready(state: PlannerState) -> bool:
    return state.itinerary is not None and state.weather is not None and state.packing is None and not state.blocked


def conditions(state: PlannerState) -> dict[str, bool]:
    req = state.user_request
    days = [w for w in state.weather or [] if w.available]
    mins = [w.temp_min_c for w in days if w.temp_min_c is not None]
    maxs = [w.temp_max_c for w in days if w.temp_max_c is not None]
    rain = [w for w in days if (w.precipitation_probability or 0) >= 40 or w.risk in ("HIGH", "MEDIUM")]
    interests = {a.interest for d in state.itinerary or [] for a in d.activities}
    outdoor = any(not a.indoor for d in state.itinerary or [] for a in d.activities if a.kind == "activity")
    o, d = getattr(req, "origin", None), getattr(req, "destination", None)
    return {
        "always": True,
        "international": bool(o and d and o.country and d.country and o.country != d.country),
        "rain": bool(rain),
        "heavy_rain": any(w.risk == "HIGH" for w in days),
        "cold": bool(mins) and min(mins) < 10,
        "hot": bool(maxs) and max(maxs) >= 28,
        "no_forecast": not days,
        "hiking": "hiking" in interests,
        "tea": "tea" in interests,
        "outdoors_warm": outdoor and bool(maxs) and max(maxs) >= 22,
        "children": bool(req and (req.children or 0) > 0),
    }


def run(state: PlannerState, deps: PlannerDeps) -> dict[str, Any]:
    if not ready(state):
        return {}
    lang = lang_of(state)
    cond = conditions(state)
    n_days = len(state.itinerary or [])
    items: list[PackingItem] = []
    seen: set[str] = set()
    for row in data("packing")["items"]:
        if not cond.get(row["when"], False) or row["id"] in seen:
            continue
        seen.add(row["id"])
        label = str(row.get(lang) or row["en"]).replace("{days}", str(n_days))
        items.append(PackingItem(id=row["id"], label=label, category=row["category"],
                                 reason=t(f"planner.pack.{row['when']}", lang)))
    days = [w for w in state.weather or [] if w.available]
    update: dict[str, Any] = {"packing": items}
    update.update(entry(NAME, deps, input_summary=f"{n_days} day(s), conditions: "
                                                  + ", ".join(k for k, v in cond.items() if v),
                        evidence=[f"forecast days: {len(days)}", f"HIGH-risk days: {sum(w.risk == 'HIGH' for w in days)}"],
                        output_summary=f"{len(items)} item(s)"))
    return update

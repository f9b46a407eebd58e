"""Route-planning scene: the route in a chat message, handed to the Route page.

The texts come from :func:`navigo_core.understand.parse_route` (origin, destination, stops,
strategy; names as the user wrote them). Nothing is resolved here (no place provider, no
network): they go into the reply's payload as ``route_request``, a dict that
``RouteRequest(**d)`` accepts, with ``handoff="route"`` so the Chat page can open the Route page
with it. Without an origin and a destination the reply asks for them and starts the
``route_plan`` flow; the next message is merged in (:func:`navigo_core.understand.update_route`;
the resume gate sends it here).
"""

from __future__ import annotations

from typing import Any

from navigo_core.i18n import t
from navigo_core.scenes.descriptor import (
    ActiveFlow,
    GateContext,
    SceneDescriptor,
    SceneReply,
    SceneRoute,
    join_list,
)
from navigo_core.understand import RouteReading, parse_route, update_route

FLOW_ID = "route_plan"
_CJK_STOP_MARK = r"经(?![济理典营常验历纬度费])"  # 经 as "via", not 经济/经理/…


def _found(message: str, flow: ActiveFlow | None) -> dict[str, Any]:
    """``{"origin", "destination", "stops"[, "strategy"]}``: this message, merged into a running flow's."""
    if flow is None:
        return parse_route(message).request()
    slots = flow.slots
    previous = RouteReading(origin=str(slots.get("origin", "")), destination=str(slots.get("destination", "")),
                            stops=list(slots.get("stops", [])), strategy=slots.get("strategy"))
    return update_route(previous, message).request()


# --- handler -------------------------------------------------------------------------

def handle(message: str, context: GateContext) -> SceneReply:
    lang = context.lang_for(message)
    flow = context.active_flow
    resuming = flow is not None and flow.flow_id == FLOW_ID
    found = _found(message, flow if resuming else None)
    origin, destination, stops = found["origin"], found["destination"], found["stops"]
    sep = "、" if lang == "zh" else ", "

    if origin and destination:
        request: dict[str, Any] = {"origin": origin, "destination": destination, "stops": stops}
        if found.get("strategy"):
            request["strategy"] = found["strategy"]
        round_trip = origin.casefold() == destination.casefold()
        if round_trip:
            text = t("scene.route_planning.summary_round", lang, origin=origin, stops=sep.join(stops) or "—")
        elif stops:
            text = t("scene.route_planning.summary", lang, origin=origin, destination=destination,
                     stops=sep.join(stops))
        else:
            text = t("scene.route_planning.summary_direct", lang, origin=origin, destination=destination)
        text += "\n" + t("scene.route_planning.open" if stops else "scene.route_planning.add_stops", lang)
        return SceneReply(scene_id=SCENE.scene_id, text=text, lang=lang,
                          payload={"route_request": request, "handoff": "route", "round_trip": round_trip})

    missing = [k for k in ("origin", "destination") if not found[k]]
    if not origin and not destination:
        text = t("scene.route_planning.ask_both", lang)
    elif not origin:
        text = t("scene.route_planning.ask_origin", lang, destination=destination)
    else:
        text = t("scene.route_planning.ask_destination", lang, origin=origin)
    if stops:
        text += " " + t("scene.route_planning.stops_so_far", lang, stops=join_list(stops, lang))
    partial = {k: v for k, v in found.items() if v}
    turns = (flow.turns + 1) if resuming and flow is not None else 1
    return SceneReply(
        scene_id=SCENE.scene_id, text=text, lang=lang, asks=True,
        payload={"route_request": partial, "missing": missing},
        flow=ActiveFlow(flow_id=FLOW_ID, scene_id=SCENE.scene_id, slots=found, turns=turns),
    )


SCENE = SceneDescriptor(
    scene_id="route_planning",
    label="scene.route_planning.label",
    signal_keywords=("route", "directions", "waypoint", "navigation", "detour", "路线", "线路", "导航", "途经", "路径",
                     "绕路"),
    ontology_fields=("origin", "destination", "stops", "strategy"),
    route=SceneRoute(intents=()),
    handler=handle,
    can_resume=True,
    flow_id=FLOW_ID,
    priority=20,
    capability="scene.route_planning.capability",
    prompt_fragment="scene.route_planning.prompt",
)

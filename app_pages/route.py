"""Route page: best visiting order of many stops, on a map, with navigation links.

Thin: widgets → navigo_core.route → render. All decisions live in the core.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from navigo_core.errors import InputError, NavigoError, PlaceResolutionError, ProviderError
from navigo_core.i18n import fmt_distance, fmt_duration
from navigo_core.maps import build_pick_map, build_route_map, from_map_coords
from navigo_core.providers.selection import choice as provider_choice
from navigo_core.route.exports import to_gpx, to_json
from navigo_core.route.form import (
    clicked_row,
    literal_points,
    out_of_date,
    pending_points,
    request_from_rows,
    rows_from_request,
)
from navigo_core.route.models import RouteRequest, RouteResult
from navigo_core.route.service import plan_route
from ui.auth import require_login
from ui.context import choice, lang, leaflet_prefix, route_deps, settings, show_error, store, tr
from ui.markdown import escape_markdown
from ui.route_view import FLY, new_question, render_choices, render_links, render_no_road, render_pick

S = st.session_state
USER = require_login()  # saved routes are the signed-in user's: saved, listed and opened for them only
S.setdefault("route.rows", [{"place": None, "pin": None, "group": None}])
S.setdefault("route.editor_v", 0)
S.setdefault("route.picked", {})
S.setdefault("route.last_click", None)
S.setdefault("route.current", None)
S.setdefault(FLY, [])


# ---------- callbacks (run before widgets are drawn, so they may set widget state) ----------
def _set_rows(rows: list[dict[str, Any]]) -> None:
    S["route.rows"] = rows or [{"place": None, "pin": None, "group": None}]
    S["route.editor_v"] += 1


def _add_pasted(rows: list[dict[str, Any]]) -> None:
    lines = [ln.strip() for ln in (S.get("route_paste") or "").splitlines() if ln.strip()]
    kept = [r for r in rows if r.get("place") not in (None, "")]
    _set_rows(kept + [{"place": ln, "pin": None, "group": None} for ln in lines])
    S["route_paste"] = ""


def _request_run(fallback: bool = False) -> None:
    S["route.run"] = {"fallback": fallback}


def _open_saved() -> None:
    saved = store().routes.get(S.get("route_history_choice") or "", owner=USER.id)
    if saved is None:
        return
    req = RouteRequest.model_validate(saved["request"])
    S["route_origin_mode"] = req.origin_mode
    S["route_origin"] = req.origin if req.origin_mode == "fixed" else ""
    S["route.current"] = req.current_location
    S["route_destination"] = req.destination
    S["route_strategy"] = req.strategy
    S[FLY] = [tuple(p) for p in req.fly_legs]
    _set_rows(rows_from_request(req))
    S["route.result"] = RouteResult.model_validate(saved["result"])
    S.pop("route.error", None)


# ---------- hand-off from the chat: the parsed stops, optimised at once ----------
_prefill = S.pop("route.prefill", None)
if _prefill:
    _req = RouteRequest.model_validate(_prefill)
    S["route_origin_mode"] = "fixed"
    S["route_origin"] = _req.origin
    S["route_destination"] = _req.destination
    S["route_strategy"] = _req.strategy
    # "… and back" / "回到上海" / "往返": the chat reads it as destination = origin
    S["route_round_trip"] = bool(_prefill.get("round_trip")) or (
        bool(_req.origin.strip()) and _req.origin.strip().casefold() == _req.destination.strip().casefold())
    S[FLY] = []
    _set_rows(rows_from_request(_req))
    S.pop("route.result", None)
    S.pop("route.error", None)
    _request_run()

# ---------- inputs ----------
st.title(tr("route.page.title"))
st.caption(tr("route.page.intro"))
s = settings()

left, right = st.columns([5, 7], gap="large")
with left:
    origin_mode = st.radio(
        tr("route.page.origin_mode"), ["fixed", "current"], key=choice("route_origin_mode"), horizontal=True,
        format_func=lambda m: tr(f"route.page.origin_mode.{m}"),
    )
    if origin_mode == "fixed":
        st.text_input(tr("route.page.origin"), key="route_origin", placeholder=tr("route.page.place_placeholder"))
    else:
        cur = S["route.current"]
        st.info(tr("route.page.current_set", lat=f"{cur[0]:.5f}", lon=f"{cur[1]:.5f}") if cur
                else tr("route.page.current_hint"), icon="📍")
    st.text_input(tr("route.page.destination"), key="route_destination",
                  placeholder=tr("route.page.place_placeholder"))
    st.checkbox(tr("route.page.round_trip"), key="route_round_trip", help=tr("route.page.round_trip_help"))

    st.markdown(f"**{tr('route.page.stops')}**")
    with st.container(key="route_stops"):
        edited = st.data_editor(
            pd.DataFrame(S["route.rows"], columns=["place", "pin", "group"]),
            key=f"route_stops_editor_{S['route.editor_v']}",
            num_rows="dynamic",
            hide_index=True,
            placeholder="",
            width="stretch",
            column_config={
                "place": st.column_config.TextColumn(tr("route.page.col.place"), help=tr("route.page.col.place_help"), width="medium"),
                "pin": st.column_config.NumberColumn(tr("route.page.col.pin"), help=tr("route.page.col.pin_help"), min_value=1, step=1, format="%d"),
                "group": st.column_config.TextColumn(tr("route.page.col.group"), help=tr("route.page.col.group_help")),
            },
        )
    rows = edited.to_dict("records")
    with st.expander(tr("route.page.paste"), key="route_paste_box"):
        st.text_area(tr("route.page.paste_label"), key="route_paste", height=100)
        st.button(tr("route.page.paste_add"), key="route_paste_add", on_click=_add_pasted, args=(rows,))

    c1, c2 = st.columns(2)
    strategy = c1.radio(
        tr("route.page.strategy"), ["fastest", "shortest", "balanced"], key=choice("route_strategy"),
        format_func=lambda v: tr(f"route.page.strategy.{v}"),
    )
    matrix_choice = provider_choice(s, "matrix")  # the available distance providers, the selected one first shown
    providers = list(matrix_choice.available)
    provider = c2.selectbox(
        tr("route.page.provider"), providers, index=providers.index(matrix_choice.default),
        key=choice("route_provider"),
        format_func=lambda v: tr(f"engine.{v}"),
    )
    st.button(tr("route.page.optimise"), key="route_optimise", type="primary", on_click=_request_run,
              width="stretch")


# ---------- run ----------
def _build_request() -> RouteRequest:
    mode = S.get("route_origin_mode", "fixed")
    origin = S.get("route_origin", "") if mode == "fixed" else tr("route.current_location")
    destination = S.get("route_destination", "")
    if S.get("route_round_trip"):
        destination = origin if mode == "fixed" else f"{S['route.current'][0]},{S['route.current'][1]}" if S["route.current"] else ""
    return request_from_rows(
        rows, origin_mode=mode, origin=origin, destination=destination,
        current_location=S["route.current"] if mode == "current" else None, strategy=strategy,
        fly_legs=[tuple(p) for p in S[FLY]],
    )


run = S.pop("route.run", None)
if run is not None:
    try:
        req = _build_request()
        deps = replace(route_deps(provider), picked=dict(S["route.picked"]))
        with st.spinner(tr("route.page.running")):
            S["route.result"] = plan_route(req, deps, allow_fallback=run["fallback"])
        S.pop("route.error", None)
    except NavigoError as exc:
        S["route.error"] = exc
        S.pop("route.result", None)
        if isinstance(exc, PlaceResolutionError):
            new_question()
    except ValueError as exc:  # a form value pydantic rejected
        S["route.error"] = InputError("error.input", detail=str(exc).splitlines()[0])
        S.pop("route.result", None)

with left:
    err = S.get("route.error")
    if isinstance(err, PlaceResolutionError) and err.candidates:
        render_pick(err, on_pick=_request_run)
    elif isinstance(err, ProviderError):
        show_error(err)
        st.button(tr("route.page.use_offline"), key="route_fallback", on_click=_request_run, args=(True,))
    elif isinstance(err, NavigoError):
        show_error(err)


# ---------- results ----------
result: RouteResult | None = S.get("route.result")
L = lang()
prefix = leaflet_prefix()
try:
    current_request: RouteRequest | None = _build_request()
except (NavigoError, ValueError):
    current_request = None
stale = result is not None and out_of_date(result.request, current_request)
with right:
    if result is not None:
        modes = ["flight" if leg.mode == "flight" else "no_road" if leg.no_road else "drive" for leg in result.legs]
        m = build_route_map(result.points, result.geometry, tiles=s.map_tiles, tiles_url=s.map_tiles_url,
                            attribution=s.map_tiles_attribution, lang=L, asset_prefix=prefix,
                            pending=pending_points(rows, result.points) if stale else (), leg_modes=modes)
    else:
        extra = [] if S["route.current"] is None else [S["route.current"]]
        m = build_pick_map(points=extra, tiles=s.map_tiles, tiles_url=s.map_tiles_url,
                           attribution=s.map_tiles_attribution, lang=L, asset_prefix=prefix,
                           pending=literal_points(rows))
    click_target = "current" if origin_mode == "current" else "stop"
    st.caption(tr(f"route.page.click_{click_target}"))
    with st.container(key="route_map_box"):
        out = st_folium(m, key="route_map", height=460, width=None, returned_objects=["last_clicked"])
    clicked = (out or {}).get("last_clicked")
    if clicked and clicked != S["route.last_click"]:
        S["route.last_click"] = clicked
        lat, lon = from_map_coords(float(clicked["lat"]), float(clicked["lng"]), s.map_tiles)
        lat, lon = round(lat, 6), round(lon, 6)
        if click_target == "current":
            S["route.current"] = (lat, lon)
        else:
            kept = [r for r in rows if r.get("place") not in (None, "")]
            _set_rows(kept + [clicked_row(lat, lon, L)])  # "Jiaxing (30.7522,120.75)", or the bare point
        st.rerun()

    if result is not None:
        if stale:
            st.warning(tr("route.page.out_of_date"), icon="🕒")
        engine = tr(f"engine.{result.provider}") + (f" · {tr('route.page.estimated')}" if result.estimated else "")
        # metrics as wide as their values, wrapping onto a new line rather than cutting "4 小时 36 分钟"
        with st.container(horizontal=True, key="route_metrics", gap="medium"):
            st.metric(tr("route.page.total_distance"), fmt_distance(result.total_distance_m, L), width="content")
            st.metric(tr("route.page.total_duration"), fmt_duration(result.total_duration_s, L), width="content")
            st.metric(tr("route.page.saved"), f"{result.saved_pct:.1f} %", width="content",
                      help=tr("route.page.saved_help", distance=fmt_distance(result.saved_distance_m, L),
                              duration=fmt_duration(result.saved_duration_s, L)))
            no_road = len(result.no_road_legs)
            st.metric(tr("route.page.quality"), tr("route.page.optimal") if result.optimal else tr("route.page.heuristic"),
                      delta=tr("route.page.no_road_delta", n=no_road) if no_road else None, delta_color="orange",
                      delta_arrow="off", help=tr("route.page.no_road_help") if no_road else None, width="content")
        st.caption(tr("route.page.engine_line", engine=engine, requests=result.upstream_requests,
                      ms=f"{result.solve_ms:.0f}", method=result.method))
        if result.fallback_from:
            st.warning(tr("route.note.fallback", provider=tr(f"engine.{result.fallback_from}"),
                          reason=escape_markdown(result.fallback_reason)), icon="↩️")
        render_no_road(result, on_change=_request_run)
        for note in result.notes:
            st.info(tr(note), icon="ℹ️")
        render_choices(result)

        st.markdown(f"**{tr('route.page.legs')}**")
        st.container(key="route_legs_box").dataframe(
            pd.DataFrame([
                {
                    "#": i,
                    tr("route.page.col.from"): leg.from_,
                    tr("route.page.col.to"): leg.to,
                    tr("route.page.col.mode"): tr("route.page.mode." + (
                        "flight" if leg.mode == "flight" else "no_road" if leg.no_road else "drive")),
                    tr("route.page.col.distance"): fmt_distance(leg.distance_m, L),
                    tr("route.page.col.duration"): fmt_duration(leg.duration_s, L),
                    tr("route.page.col.cum_distance"): fmt_distance(leg.cum_distance_m, L),
                    tr("route.page.col.cum_duration"): fmt_duration(leg.cum_duration_s, L),
                }
                for i, leg in enumerate(result.legs, start=1)
            ]),
            hide_index=True,
            placeholder="", width="stretch", key="route_legs",
        )

        render_links(result)  # one whole-route link per service that allows it; parts and legs folded

        if result.alternatives:
            with st.expander(tr("route.page.alternatives"), key="route_alternatives_box"):
                st.dataframe(pd.DataFrame([
                    {tr("route.page.col.order"): " → ".join(a.order),
                     tr("route.page.col.distance"): fmt_distance(a.distance_m, L),
                     tr("route.page.col.duration"): fmt_duration(a.duration_s, L)}
                    for a in result.alternatives
                ]), hide_index=True, width="stretch", key="route_alternatives")

        d1, d2 = st.columns(2)
        d1.download_button(tr("route.page.download_gpx"), to_gpx(result.points, legs=result.legs, geometry=result.geometry,
                                  name=tr("export.gpx.route_name"), lang=L),
                           file_name="navigo-route.gpx", mime="application/gpx+xml", key="route_download_gpx")
        d2.download_button(tr("route.page.download_json"), to_json(result), file_name="navigo-route.json",
                           mime="application/json", key="route_download_json")

        with st.form("route_save_form", border=False):
            title = st.text_input(tr("route.page.save_title"), value=" → ".join(result.order)[:120], key="route_save_title",
                                  max_chars=s.max_field_chars)
            if st.form_submit_button(tr("route.page.save"), key="route_save"):
                try:
                    store().routes.save(title or " → ".join(result.order), result.request.model_dump(mode="json"),
                                        result.model_dump(mode="json", by_alias=True), owner=USER.id)
                    st.success(tr("route.page.saved_ok"), icon="✅")
                except NavigoError as exc:  # a storage fault (read-only, damaged, too long): one sentence
                    show_error(exc)

with st.expander(tr("route.page.history"), expanded=False, key="route_history_box"):
    saved = store().routes.list(USER.id)
    if not saved:
        st.caption(tr("route.page.history_empty"))
    else:
        titles = {r["id"]: f"{r['title']} · {r['created_at']:%Y-%m-%d %H:%M}" for r in saved}
        st.selectbox(tr("route.page.history_pick"), list(titles), key="route_history_choice",
                     format_func=lambda i: titles[i])
        st.button(tr("route.page.history_open"), key="route_history_open", on_click=_open_saved)

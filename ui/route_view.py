"""Route page parts: the place pick, the names read from context, legs with no road, and the links.

Streamlit glue only: every decision (ranking, flags, which links exist) comes from ``navigo_core.route``.
User values (place names as typed) are escaped before they reach Markdown.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from navigo_core.errors import PlaceResolutionError, clip
from navigo_core.i18n import fmt_distance, t
from navigo_core.route.deeplinks import DeepLinks
from navigo_core.route.models import RouteResult
from ui.context import lang, show_error, tr
from ui.markdown import escape_markdown

S = st.session_state
PICK_SEQ = "route.pick_seq"  # one widget key per question: a pick never reads the previous one's value
FLY = "route.fly"  # legs the user chose to fly: [(text, text)]
SERVICES = ("google", "amap_web", "amap_app", "osm")


def new_question() -> None:
    """Call when a new place question is stored: its selectbox gets a fresh key."""
    S[PICK_SEQ] = S.get(PICK_SEQ, 0) + 1


def pick_key() -> str:
    return f"route_pick_choice_{S.get(PICK_SEQ, 0)}"


def _why(why: tuple[str, dict[str, Any]] | None, lng: str) -> str:
    if not why or not why[0]:
        return ""
    key, params = why
    return t(key, lng, **{k: escape_markdown(v) for k, v in params.items()})


def _chosen_index(value: Any, labels: list[str]) -> int:
    """The candidate the widget names: its index, or its label (what a browser sends); else the first."""
    if isinstance(value, int) and 0 <= value < len(labels):
        return value
    if isinstance(value, str) and value in labels:
        return labels.index(value)
    return 0


def _use_pick(query: str, candidates: list[Any], labels: list[str], key: str, on_pick: Any) -> None:
    S["route.picked"] = {**S.get("route.picked", {}), query: candidates[_chosen_index(S.get(key), labels)]}
    on_pick()


def render_pick(err: PlaceResolutionError, on_pick: Any) -> None:
    """The question for a name the context leaves in doubt: candidates ranked, the first explained."""
    lng = lang()
    show_error(err)
    km = list(getattr(err, "km", []) or [])
    labels = []
    for i, c in enumerate(err.candidates):
        label = c.label_in(lng)
        if i < len(km) and km[i] is not None:
            label = t("route.page.pick_option", lng, label=label, km=f"{km[i]:,.0f}")
        labels.append(label)
    key = pick_key()
    with st.container(key="route_pick"):
        st.selectbox(tr("route.page.pick", query=escape_markdown(clip(err.query))), range(len(labels)), key=key,
                     format_func=lambda i: labels[i] if isinstance(i, int) and 0 <= i < len(labels) else str(i))
        if why := _why(getattr(err, "why", None), lng):
            st.caption(tr("route.page.pick_first", why=why))
        st.button(tr("route.page.pick_use"), key="route_pick_use", on_click=_use_pick,
                  args=(err.query, list(err.candidates), labels, key, on_pick))


def render_choices(result: RouteResult) -> None:
    """How each name with namesakes became a place (the context's reason, or the user's pick)."""
    if not result.choices:
        return
    lng = lang()
    with st.expander(tr("route.page.choices", n=len(result.choices)), key="route_choices_box"):
        lines = []
        for c in result.choices:
            text, label = escape_markdown(c.text), escape_markdown(c.place.label_in(lng))
            if c.picked:
                lines.append(tr("route.page.choice_picked", text=text, label=label))
            else:
                lines.append(tr("route.page.choice_line", text=text, label=label, why=_why((c.why, c.why_params), lng)))
        st.markdown("\n".join(f"- {line}" for line in lines))


def _toggle_fly(pair: tuple[str, str], on_change: Any) -> None:
    key = frozenset(pair)
    current = [tuple(p) for p in S.get(FLY, [])]
    kept = [p for p in current if frozenset(p) != key]
    S[FLY] = kept if len(kept) != len(current) else [*current, pair]
    on_change()


def render_no_road(result: RouteResult, on_change: Any) -> None:
    """A warning per leg no car can make, each with "fly this leg"; flown legs can be driven again."""
    lng = lang()
    typed = result.typed or result.order
    for i, leg in enumerate(result.legs):
        pair = (typed[i], typed[i + 1]) if i + 1 < len(typed) else (leg.from_, leg.to)
        start, end = escape_markdown(leg.from_), escape_markdown(leg.to)
        if leg.no_road:
            st.warning(tr(f"route.page.no_road.{leg.no_road}", start=start, end=end,
                          distance=fmt_distance(leg.distance_m, lng)), icon="🌊")
            st.button(tr("route.page.fly_leg", start=start, end=end), key=f"route_fly_{i}", icon="✈️",
                      on_click=_toggle_fly, args=(pair, on_change))
        elif leg.mode == "flight":
            st.button(tr("route.page.drive_leg", start=start, end=end), key=f"route_drive_{i}", type="tertiary",
                      on_click=_toggle_fly, args=(pair, on_change))


def render_links(result: RouteResult) -> None:
    """One "whole route" link per service that takes the route in one link; parts and per-leg links folded."""
    links: DeepLinks = result.deep_links
    whole = {name: links.whole(name) for name in SERVICES}
    st.markdown(f"**{tr('route.page.open_in')}**")
    if any(whole.values()):
        st.caption(tr("route.page.links_whole"))
        with st.container(key="route_links", horizontal=True):
            for name in SERVICES:
                if whole[name]:
                    st.link_button(tr(f"route.page.link.{name}"), whole[name], key=f"route_link_{name}")
    else:
        st.caption(tr("route.page.links_whole_none"))
    with st.expander(tr("route.page.links_more"), key="route_links_more"):
        for name in SERVICES:
            parts: list[str] = getattr(links, name)
            if len(parts) > 1 and name != "osm":
                st.caption(tr("route.page.links_parts", service=tr(f"route.page.link.{name}"), n=len(parts)))
                with st.container(horizontal=True, key=f"route_parts_{name}"):
                    for i, url in enumerate(parts, start=1):
                        st.link_button(tr("route.page.links_part", i=i, n=len(parts)), url,
                                       key=f"route_link_{name}_part_{i}")
        if not links.amap_web and not links.amap_app:
            st.caption(tr("route.page.amap_china_only"))
        rows = []
        for n, leg in enumerate(links.legs, start=1):
            flight = n - 1 < len(result.legs) and result.legs[n - 1].mode == "flight"
            key = "route.page.links_leg" if leg.drivable else (
                "route.page.links_leg_flight" if flight else "route.page.links_leg_none")
            rows.append({"leg": tr(key, n=n, start=leg.start, end=leg.end),
                         **{name: getattr(leg, name) or None for name in ("google", "amap_web", "osm")}})
        names = [name for name in ("google", "amap_web", "osm") if any(r[name] for r in rows)]
        open_text = tr("route.page.links_open")
        st.dataframe(
            pd.DataFrame(rows, columns=["leg", *names]), hide_index=True, width="stretch", key="route_leg_links",
            column_config={"leg": st.column_config.TextColumn(tr("route.page.links_col_leg")),
                           **{name: st.column_config.LinkColumn(tr(f"route.page.link.{name}"), display_text=open_text,
                                                                width="small")
                              for name in names}},
        )

"""Route exports: GPX 1.1 for GPS devices and apps, JSON for everything else."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Protocol

from pydantic import BaseModel

from navigo_core import __version__
from navigo_core.geo import haversine_m
from navigo_core.i18n import fmt_distance, fmt_duration, t
from navigo_core.providers.places.base import Place

GPX_NS = "http://www.topografix.com/GPX/1/1"
GPX_SCHEMA = "http://www.topografix.com/GPX/1/1/gpx.xsd"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
GPX_CREATOR = f"NaviGo Workbench {__version__}"

SAME_PLACE_M = 1.0  # a route whose ends are closer than this is a round trip (as on the map)

# Characters XML 1.0 forbids anywhere (C0 controls except tab, LF, CR; surrogates; U+FFFE/F).
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class LegLike(Protocol):
    """What a leg must offer to annotate the GPX route (``navigo_core.route.models.Leg`` does)."""

    distance_m: float
    duration_s: float


def _xml_text(text: str) -> str:
    """``text`` without the characters XML cannot hold (escaping is ElementTree's job)."""
    return _XML_ILLEGAL.sub("", text)


def _coord(value: float) -> str:
    return f"{value:.7f}"


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = _xml_text(text)
    return element


def _leg_desc(n: int, leg: LegLike, origin: str, lang: str) -> str:
    """The leg as the Route page's table shows it (same number, same rounding, same units)."""
    flight = getattr(leg, "mode", "drive") == "flight"
    return t(
        "export.gpx.leg_flight" if flight else "export.gpx.leg",
        lang,
        n=n,
        distance=fmt_distance(leg.distance_m, lang),
        duration=fmt_duration(leg.duration_s, lang),
        origin=origin,
    )


def point_badges(points: Sequence[Place], lang: str = "en") -> list[str]:
    """The badge of each point, as the route map draws it: the start "S", stops 1…n, the destination "E";
    a round trip ends at its start, badge "S" (the map draws one marker for both)."""
    n = len(points)
    loop = n >= 2 and haversine_m(points[0].lat, points[0].lon, points[-1].lat, points[-1].lon) < SAME_PLACE_M
    out = []
    for i in range(n):
        if i == 0 or (loop and i == n - 1):
            out.append(t("map.badge.start", lang))
        elif i == n - 1:
            out.append(t("map.badge.destination", lang))
        else:
            out.append(str(i))
    return out


def to_gpx(
    points: Sequence[Place],
    legs: Sequence[LegLike] | None = None,
    geometry: Sequence[tuple[float, float]] | None = None,
    name: str = "NaviGo route",
    *,
    lang: str = "en",
) -> str:
    """The route as a GPX 1.1 document (UTF-8 text with an XML declaration).

    * one ``<wpt>`` per point, named with the route map's badge: ``"S · Shanghai"``, ``"1 · Suzhou"``, …,
      ``"E · Hangzhou"`` in visiting order (Chinese names where known when ``lang == "zh"``), its full
      label as ``<desc>``;
    * one ``<rte>`` whose ``<rtept>``\\ s follow the same order; when ``legs`` are
      given (one per consecutive pair of points), each point after the first
      describes the leg that reaches it, in the figures the page shows ("Leg 1: 98.8 km, about 1 h 30 min");
    * one ``<trk>`` with the road line when ``geometry`` (``(lat, lon)`` pairs,
      WGS-84) is given.
    """
    if legs is not None and points and len(legs) != len(points) - 1:
        raise ValueError(f"expected {len(points) - 1} legs for {len(points)} points, got {len(legs)}")

    root = ET.Element(
        "gpx",
        {
            "version": "1.1",
            "creator": GPX_CREATOR,
            "xmlns": GPX_NS,
            "xmlns:xsi": XSI_NS,
            "xsi:schemaLocation": f"{GPX_NS} {GPX_SCHEMA}",
        },
    )
    metadata = _sub(root, "metadata")
    _sub(metadata, "name", name)

    names = [(p.name_zh if lang == "zh" else "") or p.name for p in points]
    labels = [f"{badge} · {place_name}" for badge, place_name in zip(point_badges(points, lang), names)]
    for place, place_name, label in zip(points, names, labels):
        wpt = _sub(root, "wpt", lat=_coord(place.lat), lon=_coord(place.lon))
        _sub(wpt, "name", label)
        if (full := place.label_in(lang)) != place_name:
            _sub(wpt, "desc", full)

    rte = _sub(root, "rte")
    _sub(rte, "name", name)
    for i, (place, label) in enumerate(zip(points, labels)):
        rtept = _sub(rte, "rtept", lat=_coord(place.lat), lon=_coord(place.lon))
        _sub(rtept, "name", label)
        if legs is not None and i > 0:
            _sub(rtept, "desc", _leg_desc(i, legs[i - 1], names[i - 1], lang))

    if geometry:
        trk = _sub(root, "trk")
        _sub(trk, "name", name)
        seg = _sub(trk, "trkseg")
        for lat, lon in geometry:
            _sub(seg, "trkpt", lat=_coord(lat), lon=_coord(lon))

    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(obj: BaseModel | Mapping[str, Any] | list[Any]) -> str:
    """``obj`` (a pydantic model, or plain data that may hold models) as pretty UTF-8 JSON.

    Models are dumped in JSON mode with their aliases (a leg's ``from_`` is ``"from"``).
    """
    data: Any
    if isinstance(obj, BaseModel):
        data = obj.model_dump(mode="json", by_alias=True)
    elif isinstance(obj, Mapping):
        data = dict(obj)
    else:
        data = obj
    return json.dumps(data, ensure_ascii=False, indent=2, default=_json_default)

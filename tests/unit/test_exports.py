"""Route exports: GPX 1.1 structure and escaping, JSON dumps."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import date

import pytest
from pydantic import BaseModel, ConfigDict, Field

from navigo_core.providers.places.base import Place
from navigo_core.route.exports import GPX_NS, to_gpx, to_json

NS = {"g": GPX_NS}
POINTS = [
    Place(name="Shanghai", lat=31.2304, lon=121.4737, admin="Shanghai", country="CN", country_name="China"),
    Place(name="Suzhou", lat=31.2989, lon=120.5853, admin="Jiangsu", country="CN", country_name="China"),
    Place(name="Nanjing", lat=32.0603, lon=118.7969, admin="Jiangsu", country="CN", country_name="China"),
]


class _Leg(BaseModel):
    distance_m: float
    duration_s: float


def parse(gpx: str) -> ET.Element:
    return ET.fromstring(gpx.encode("utf-8"))


def test_gpx_structure() -> None:
    gpx = to_gpx(POINTS, name="Trip")
    assert gpx.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = parse(gpx)
    assert root.tag == f"{{{GPX_NS}}}gpx"
    assert root.get("version") == "1.1"
    assert root.get("creator", "").startswith("NaviGo")
    assert root.findtext("g:metadata/g:name", namespaces=NS) == "Trip"

    wpts = root.findall("g:wpt", NS)
    assert [w.findtext("g:name", namespaces=NS) for w in wpts] == ["S · Shanghai", "1 · Suzhou", "E · Nanjing"]
    assert [(float(w.get("lat")), float(w.get("lon"))) for w in wpts] == [(p.lat, p.lon) for p in POINTS]
    assert wpts[1].findtext("g:desc", namespaces=NS) == "Suzhou, Jiangsu, China"

    rte = root.findall("g:rte", NS)
    assert len(rte) == 1
    assert rte[0].findtext("g:name", namespaces=NS) == "Trip"
    rtepts = rte[0].findall("g:rtept", NS)
    assert [r.findtext("g:name", namespaces=NS) for r in rtepts] == ["S · Shanghai", "1 · Suzhou", "E · Nanjing"]
    assert [(float(r.get("lat")), float(r.get("lon"))) for r in rtepts] == [(p.lat, p.lon) for p in POINTS]
    assert root.find("g:trk", NS) is None  # no geometry, no track

    # Schema order of <gpx> children: metadata, wpt*, rte*, trk*.
    tags = [child.tag.split("}")[1] for child in root]
    assert tags == ["metadata", "wpt", "wpt", "wpt", "rte"]


def test_gpx_track_from_geometry() -> None:
    geometry = [(31.2304, 121.4737), (31.25, 121.0), (31.2989, 120.5853), (32.0603, 118.7969)]
    root = parse(to_gpx(POINTS, geometry=geometry))
    trkpts = root.findall("g:trk/g:trkseg/g:trkpt", NS)
    assert [(float(p.get("lat")), float(p.get("lon"))) for p in trkpts] == geometry
    tags = [child.tag.split("}")[1] for child in root]
    assert tags[-2:] == ["rte", "trk"]


def test_gpx_legs_describe_route_points() -> None:
    legs = [_Leg(distance_m=98_765, duration_s=5_400), _Leg(distance_m=201_000, duration_s=9_000)]
    root = parse(to_gpx(POINTS, legs=legs))
    descs = [r.findtext("g:desc", namespaces=NS) for r in root.findall("g:rte/g:rtept", NS)]
    assert descs[0] is None
    # the figures the Route page's legs table shows (fmt_distance, fmt_duration), not a second rounding
    assert descs[1] == "Leg 1: 98.8 km, about 1 h 30 min from Shanghai"
    assert descs[2] == "Leg 2: 201.0 km, about 2 h 30 min from Suzhou"
    zh = parse(to_gpx(POINTS, legs=legs, lang="zh"))
    assert "1 小时 30 分钟" in (zh.findall("g:rte/g:rtept", NS)[1].findtext("g:desc", namespaces=NS) or "")


def test_gpx_rejects_wrong_leg_count() -> None:
    with pytest.raises(ValueError):
        to_gpx(POINTS, legs=[_Leg(distance_m=1, duration_s=1)])


def test_gpx_escapes_names() -> None:
    tricky = [
        Place(name='A & B <"Tom\'s"> ]]>', lat=1.0, lon=2.0),
        Place(name="北京\x00\x1f控制符", lat=39.9, lon=116.4),
    ]
    gpx = to_gpx(tricky, name="R&D <trip>")
    root = parse(gpx)  # well-formed despite markup and control characters in names
    names = [w.findtext("g:name", namespaces=NS) for w in root.findall("g:wpt", NS)]
    assert names == ['S · A & B <"Tom\'s"> ]]>', "E · 北京控制符"]
    assert root.findtext("g:rte/g:name", namespaces=NS) == "R&D <trip>"
    assert "<trip>" not in gpx


def test_gpx_empty_route_is_well_formed() -> None:
    root = parse(to_gpx([]))
    assert root.findall("g:wpt", NS) == []
    assert root.find("g:rte", NS) is not None


class _Result(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    points: list[Place]
    day: date


def test_to_json_model_uses_aliases_and_keeps_unicode() -> None:
    result = _Result(from_="上海", points=POINTS[:1], day=date(2026, 5, 1))
    text = to_json(result)
    assert "上海" in text  # ensure_ascii=False
    assert text.startswith("{\n  ")  # indent=2
    data = json.loads(text)
    assert data["from"] == "上海"
    assert data["day"] == "2026-05-01"
    assert data["points"][0]["lat"] == pytest.approx(31.2304)


def test_to_json_dict_with_nested_models() -> None:
    data = json.loads(to_json({"stops": POINTS[:2], "when": date(2026, 1, 2), "tags": {"b", "a"}}))
    assert [s["name"] for s in data["stops"]] == ["Shanghai", "Suzhou"]
    assert data["when"] == "2026-01-02"
    assert data["tags"] == ["a", "b"]


def test_to_json_rejects_unknown_objects() -> None:
    with pytest.raises(TypeError):
        to_json({"x": object()})


def test_gpx_uses_chinese_names_in_chinese() -> None:
    sh = Place(name="Shanghai", name_zh="上海", lat=31.23, lon=121.47, country_name="China", country_name_zh="中国")
    hz = Place(name="Hangzhou", name_zh="杭州", lat=30.27, lon=120.16)
    zh = parse(to_gpx([sh, hz], lang="zh"))
    assert [w.findtext("g:name", namespaces=NS) for w in zh.findall("g:wpt", NS)] == ["起 · 上海", "终 · 杭州"]
    assert zh.find("g:wpt", NS).findtext("g:desc", namespaces=NS) == "上海，中国"
    en = parse(to_gpx([sh, hz]))
    assert [w.findtext("g:name", namespaces=NS) for w in en.findall("g:wpt", NS)] == ["S · Shanghai", "E · Hangzhou"]


def test_gpx_numbers_match_the_route_map() -> None:
    """Issue 15: the GPX named stop 1 "2." while the map's marker said "1"; now both use the map's badges,
    also on a round trip (one "S" marker on the map for start and end) and in Chinese."""
    import folium

    from navigo_core.maps import build_route_map
    from navigo_core.route.exports import point_badges

    def map_badges(points: list[Place], lang: str) -> list[str]:
        found = []
        for marker in (e for e in build_route_map(points, lang=lang)._children.values() if isinstance(e, folium.Marker)):
            (icon,) = [c for c in marker._children.values() if isinstance(c, folium.DivIcon)]
            found.append(icon.options["html"].split(">", 1)[1].split("<", 1)[0])
        return found

    four = [*POINTS, Place(name="Hefei", lat=31.82, lon=117.23)]
    loop = [*POINTS, POINTS[0]]
    for points in (four, loop):
        for lang in ("en", "zh"):
            gpx_badges = [w.findtext("g:name", namespaces=NS).split(" · ")[0]
                          for w in parse(to_gpx(points, lang=lang)).findall("g:wpt", NS)]
            drawn = map_badges(points, lang)
            assert gpx_badges[:len(drawn)] == drawn == point_badges(points, lang)[:len(drawn)]
    assert point_badges(loop) == ["S", "1", "2", "S"]

"""Offline maps: no CDN links, local Leaflet, markers, route line, GCJ-02 for AMap, basemap."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import folium
import pytest
import yaml

from navigo_core.geo import wgs84_to_gcj02
from navigo_core.i18n import LANGS
from navigo_core.maps import (
    LEAFLET_URL_PREFIX,
    OfflineBasemap,
    build_pick_map,
    build_route_map,
    country_outlines,
    ensure_leaflet_assets,
    from_map_coords,
    outlines_geojson,
    to_map_coords,
)
from navigo_core.maps.basemap import view_bbox
from navigo_core.maps.folium_map import TextPopup
from navigo_core.providers.places.base import Place

SHANGHAI = Place(name="Shanghai", lat=31.1774276, lon=121.5272106)
SHANGHAI_GCJ = (31.17530398364597, 121.531541859215)
CITIES = [
    ("Shanghai", 31.2304, 121.4737),
    ("Suzhou", 31.2989, 120.5853),
    ("Wuxi", 31.4912, 120.3119),
    ("Changzhou", 31.8107, 119.9741),
    ("Nanjing", 32.0603, 118.7969),
    ("Hefei", 31.8206, 117.2272),
    ("Hangzhou", 30.2741, 120.1551),
    ("Ningbo", 29.8683, 121.544),
    ("Shaoxing", 30.0, 120.58),
    ("Jiaxing", 30.7461, 120.7555),
]
TEN = [Place(name=n, lat=a, lon=b) for n, a, b in CITIES]
PARIS = Place(name="Paris", lat=48.8566, lon=2.3522)
EXTERNAL_RESOURCE = re.compile(r"""<(?:script|link)\b[^>]*(?:src|href)=["']https?://""", re.IGNORECASE)


def render(m: folium.Map) -> str:
    return m.get_root().render()


def walk(element: Any) -> list[Any]:
    out = [element]
    for child in getattr(element, "_children", {}).values():
        out += walk(child)
    return out


def markers(m: folium.Map) -> list[folium.Marker]:
    return [e for e in walk(m) if isinstance(e, folium.Marker)]


def marker_icon(marker: folium.Marker) -> folium.DivIcon:
    (icon,) = [c for c in marker._children.values() if isinstance(c, folium.DivIcon)]
    return icon


def tooltip_text(element: Any) -> str:
    (tip,) = [c for c in element._children.values() if isinstance(c, folium.Tooltip)]
    return tip.text


def polylines(m: folium.Map) -> list[folium.PolyLine]:
    return [e for e in walk(m) if isinstance(e, folium.PolyLine)]


# --- no CDN ------------------------------------------------------------------------


@pytest.mark.parametrize("builder", ["route", "pick"])
def test_offline_map_has_no_internet_urls(builder: str) -> None:
    m = build_route_map(TEN) if builder == "route" else build_pick_map((31.2, 121.5), 8, TEN[:3])
    html = render(m)
    assert "http://" not in html and "https://" not in html
    assert f'<script src="{LEAFLET_URL_PREFIX}/leaflet.js"></script>' in html
    assert f'href="{LEAFLET_URL_PREFIX}/leaflet.css"' in html
    assert "$(" not in html and "jquery" not in html.lower()  # nothing needs jQuery
    for element in walk(m):
        for _, url in getattr(element, "default_js", []) + getattr(element, "default_css", []):
            assert url.startswith(LEAFLET_URL_PREFIX), (type(element).__name__, url)


def test_asset_prefix_is_configurable() -> None:
    html = render(build_route_map(TEN[:2], asset_prefix="/base/app/static/vendor/leaflet/"))
    assert '<script src="/base/app/static/vendor/leaflet/leaflet.js"></script>' in html
    assert 'L.Icon.Default.imagePath = "/base/app/static/vendor/leaflet/images/"' in html


def test_folium_defaults_are_left_alone() -> None:
    build_route_map(TEN[:2])
    assert any("cdn.jsdelivr.net" in url for _, url in folium.Map.default_js)  # instance override only


def test_streamlit_folium_gets_only_local_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """What st_folium hands the component: its js/css links and the header it keeps."""
    sf = pytest.importorskip("streamlit_folium")
    sent: dict[str, Any] = {}

    def fake_component(**kwargs: Any) -> Any:
        sent.update(kwargs)
        return kwargs["default"]

    monkeypatch.setattr(sf, "_component_func", fake_component)
    sf.st_folium(build_route_map(TEN, geometry=[(p.lat, p.lon) for p in TEN]), key="t", height=400)
    assert sent["js_links"] == [f"{LEAFLET_URL_PREFIX}/leaflet.js"]
    assert sent["css_links"] == [f"{LEAFLET_URL_PREFIX}/leaflet.css"]
    assert not EXTERNAL_RESOURCE.search(sent["header"])
    assert "#map_div.leaflet-container" in sent["header"]  # the sea background follows the map id
    assert "https://" not in sent["script"]
    assert sent["script"].count("L.marker(") == len(TEN)


def test_online_tiles_add_only_the_tile_url() -> None:
    html = render(build_route_map(TEN[:2], tiles="osm"))
    assert "https://tile.openstreetmap.org/{z}/{x}/{y}.png" in html
    assert not EXTERNAL_RESOURCE.search(html)
    assert "navigoLand" not in html  # tiles replace the offline basemap


# --- markers and line --------------------------------------------------------------


def test_one_numbered_marker_per_point() -> None:
    m = build_route_map(TEN)
    found = markers(m)
    assert len(found) == len(TEN)
    badges = [re.search(r">([^<]*)</div>", marker_icon(mk).options["html"]).group(1) for mk in found]
    assert badges == ["S", *map(str, range(1, 9)), "E"]
    html0, html_last = marker_icon(found[0]).options["html"], marker_icon(found[-1]).options["html"]
    assert "navigo-pin--start" in html0 and "navigo-pin--end" in html_last
    assert [mk.location for mk in found] == [[p.lat, p.lon] for p in TEN]
    assert tooltip_text(found[0]) == "Start: Shanghai"
    assert tooltip_text(found[3]) == "Stop 3: Changzhou"
    assert tooltip_text(found[-1]) == "Destination: Jiaxing"
    popups = [c for mk in found for c in mk._children.values() if isinstance(c, TextPopup)]
    assert [p.text for p in popups] == [p.label for p in TEN]


def test_markers_in_chinese() -> None:
    found = markers(build_route_map(TEN[:3], lang="zh"))
    assert tooltip_text(found[0]) == "起点：Shanghai"
    assert tooltip_text(found[1]) == "途经点 1：Suzhou"
    assert ">终<" in marker_icon(found[2]).options["html"]


def test_round_trip_has_one_start_marker() -> None:
    loop = [TEN[0], TEN[1], TEN[2], TEN[0]]
    found = markers(build_route_map(loop))
    assert len(found) == 3
    assert tooltip_text(found[0]) == "Start and destination: Shanghai"


def test_names_cannot_break_the_script() -> None:
    evil = Place(name="`${alert(1)}` </script><b>x</b> \\", lat=31.0, lon=121.0)
    m = build_route_map([evil, PARIS])
    html = render(m)
    assert "</script><b>" not in html
    # The tooltip (pasted into a JS template literal) is entity-escaped; the popup is a JSON string.
    assert html.count("${alert") == 1
    assert 'content.textContent = "`${alert(1)}` \\u003c/script\\u003e' in html
    assert tooltip_text(markers(m)[0]).startswith("Start: &#96;&#36;{alert(1)}&#96; &lt;/script&gt;")


def test_route_line_follows_geometry() -> None:
    geometry = [(31.2304, 121.4737), (31.26, 121.0), (31.2989, 120.5853), (31.5, 120.4), (31.4912, 120.3119)]
    m = build_route_map(TEN[:3], geometry=geometry)
    (line,) = polylines(m)
    assert line.locations == [list(c) for c in geometry]
    assert line.options.get("dashArray") is None  # a road line is solid
    assert tooltip_text(line) == "Road route"


def test_straight_dashed_line_without_geometry() -> None:
    (line,) = polylines(build_route_map(TEN[:4]))
    assert line.locations == [[p.lat, p.lon] for p in TEN[:4]]
    assert line.options["dashArray"]


def test_single_point_and_empty_maps() -> None:
    single = build_route_map([PARIS])
    assert len(markers(single)) == 1 and polylines(single) == []
    empty = build_route_map([])
    assert markers(empty) == [] and polylines(empty) == []
    assert "fitBounds" not in render(empty)


def test_fits_bounds_to_the_route() -> None:
    m = build_route_map(TEN)
    (fit,) = [e for e in walk(m) if isinstance(e, folium.FitBounds)]
    lats = [p.lat for p in TEN]
    lons = [p.lon for p in TEN]
    assert fit.bounds == [[min(lats), min(lons)], [max(lats), max(lons)]]
    assert 5 <= m.options["zoom"] <= 9  # a rough first zoom, refined by fitBounds


# --- tiles and GCJ-02 ----------------------------------------------------------------


def test_amap_tiles_draw_in_gcj02() -> None:
    geometry = [(SHANGHAI.lat, SHANGHAI.lon), (PARIS.lat, PARIS.lon)]
    m = build_route_map([SHANGHAI, PARIS], geometry=geometry, tiles="amap")
    html = render(m)
    assert "webrd0{s}.is.autonavi.com" in html and '"subdomains": "1234"' in html
    shanghai, paris = markers(m)
    assert shanghai.location == pytest.approx(list(SHANGHAI_GCJ), abs=1e-9)
    assert paris.location == [PARIS.lat, PARIS.lon]  # outside China: unchanged
    (line,) = polylines(m)
    assert line.locations[0] == pytest.approx([round(c, 5) for c in SHANGHAI_GCJ])
    assert line.locations[1] == [PARIS.lat, PARIS.lon]


@pytest.mark.parametrize("tiles", ["none", "osm", "custom"])
def test_other_tiles_draw_in_wgs84(tiles: str) -> None:
    m = build_route_map([SHANGHAI, PARIS], tiles=tiles, tiles_url="https://tiles.example/{z}/{x}/{y}.png")
    assert markers(m)[0].location == [SHANGHAI.lat, SHANGHAI.lon]


def test_custom_tiles() -> None:
    url = "https://tiles.example/{z}/{x}/{y}.png"
    html = render(build_route_map(TEN[:2], tiles="custom", tiles_url=url, attribution="© Example"))
    assert url in html and '"attribution": "\\u00a9 Example"' in html
    assert "Custom map tiles" in render(build_route_map(TEN[:2], tiles="custom", tiles_url=url))
    no_url = render(build_route_map(TEN[:2], tiles="custom"))
    assert "navigoLand" in no_url and "https://" not in no_url  # falls back to the offline basemap


def test_unknown_tiles_rejected() -> None:
    with pytest.raises(ValueError):
        build_route_map(TEN[:2], tiles="satellite")  # type: ignore[arg-type]


def test_map_coords_round_trip() -> None:
    assert to_map_coords(SHANGHAI.lat, SHANGHAI.lon, "amap") == pytest.approx(SHANGHAI_GCJ, abs=1e-9)
    assert from_map_coords(*SHANGHAI_GCJ, "amap") == pytest.approx((SHANGHAI.lat, SHANGHAI.lon), abs=1e-8)
    assert to_map_coords(SHANGHAI.lat, SHANGHAI.lon, "osm") == (SHANGHAI.lat, SHANGHAI.lon)
    assert from_map_coords(*SHANGHAI_GCJ, "none") == SHANGHAI_GCJ


def test_pick_map() -> None:
    m = build_pick_map((SHANGHAI.lat, SHANGHAI.lon), 10, [TEN[0]], tiles="amap")
    assert m.location == pytest.approx(list(SHANGHAI_GCJ))
    assert m.options["zoom"] == 10
    assert len(markers(m)) == 1 and polylines(m) == []
    html = render(m)
    assert '"navigo-pick"' in html and "crosshair" in html
    offline = build_pick_map((48.0, 10.0), 4)
    assert any(isinstance(e, OfflineBasemap) for e in walk(offline))


# --- offline basemap ---------------------------------------------------------------


def _ring_ok(ring: list[list[float]]) -> bool:
    return (
        len(ring) >= 4
        and ring[0] == ring[-1]
        and all(len(pos) == 2 and -180 <= pos[0] <= 180 and -90 <= pos[1] <= 90 for pos in ring)
    )


def test_country_outlines_valid_and_cached() -> None:
    outlines = country_outlines()
    assert outlines is country_outlines()  # merged once
    assert len(outlines) > 150
    ids = {o.feature["id"] for o in outlines}
    assert {"CHN", "FRA", "USA", "BRA", "AUS"} <= ids
    for o in outlines:
        geometry = o.feature["geometry"]
        assert geometry["type"] == "MultiPolygon" and geometry["coordinates"]
        for polygon in geometry["coordinates"]:
            assert all(_ring_ok(ring) for ring in polygon)
            for lon, lat in polygon[0]:
                assert o.bbox[0] <= lat <= o.bbox[2] and o.bbox[1] <= lon <= o.bbox[3]
            assert all(round(v, 3) == v for pos in polygon[0] for v in pos)


def test_outlines_filtered_by_bbox() -> None:
    world = outlines_geojson()
    assert world["type"] == "FeatureCollection" and len(world["features"]) == len(country_outlines())
    east_china = outlines_geojson(view_bbox([(p.lat, p.lon) for p in TEN]))
    ids = {f["id"] for f in east_china["features"]}
    assert "CHN" in ids and "BRA" not in ids and "FRA" not in ids
    assert 0 < len(ids) < len(world["features"]) / 4


def test_offline_basemap_rendered() -> None:
    m = build_route_map(TEN)
    (basemap,) = [e for e in walk(m) if isinstance(e, OfflineBasemap)]
    assert {f["id"] for f in basemap.data["features"]} >= {"CHN"}
    html = render(m)
    assert ".leaflet-container { background: #dbe9f6; }" in html
    assert "Country outlines: Natural Earth" in html
    assert "navigoGraticule" in html and 'map.on("moveend", draw)' in html


def test_ten_point_map_html_stays_small() -> None:
    html = render(build_route_map(TEN))
    assert len(html.encode("utf-8")) < 80_000


# --- Leaflet assets --------------------------------------------------------------------


def test_ensure_leaflet_assets_copies_and_is_idempotent(tmp_path: Path) -> None:
    prefix = ensure_leaflet_assets(tmp_path)
    assert prefix == LEAFLET_URL_PREFIX == "/app/static/vendor/leaflet"
    target = tmp_path / "vendor" / "leaflet"
    js, css = target / "leaflet.js", target / "leaflet.css"
    assert js.stat().st_size > 100_000 and "L.version" not in css.read_text()
    assert "Leaflet" in js.read_text(encoding="utf-8")[:500]
    assert {"marker-icon.png", "layers.png"} <= {p.name for p in (target / "images").iterdir()}
    assert not [p for p in target.rglob(".*")]  # no temporary files left behind

    stamps = {p: p.stat().st_mtime_ns for p in target.rglob("*") if p.is_file()}
    assert ensure_leaflet_assets(tmp_path) == prefix
    assert {p: p.stat().st_mtime_ns for p in target.rglob("*") if p.is_file()} == stamps  # nothing rewritten

    original = js.read_bytes()
    js.write_text("tampered")
    (target / "images" / "layers.png").unlink()
    ensure_leaflet_assets(tmp_path)
    assert js.read_bytes() == original
    assert (target / "images" / "layers.png").exists()


# --- catalog ----------------------------------------------------------------------------


def test_maps_catalog_entries() -> None:
    path = Path(__file__).resolve().parents[2] / "navigo_core" / "i18n" / "maps.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, entry in entries.items():
        assert key.split(".")[0] in {"map", "links", "export"}, key
        assert set(entry) == set(LANGS), key
        fields = [set(re.findall(r"{(\w+)}", entry[lang])) for lang in LANGS]
        assert fields[0] == fields[1], key


def test_pick_map_defaults_and_bare_coordinates() -> None:
    world = build_pick_map()
    assert world.options["zoom"] == 2 and markers(world) == []
    m = build_pick_map(points=[(31.2, 121.5)], tiles="amap")
    (marker,) = markers(m)
    assert marker.location == pytest.approx(list(wgs84_to_gcj02(31.2, 121.5)))
    assert tooltip_text(marker) == "Start: 31.20000, 121.50000"
    assert m.options["zoom"] == 10
    two = build_pick_map(points=[TEN[0], (30.2741, 120.1551)])
    assert 5 <= two.options["zoom"] <= 9
    assert two.location == pytest.approx([(31.2304 + 30.2741) / 2, (121.4737 + 120.1551) / 2])


def test_chinese_names_on_chinese_maps() -> None:
    sh = Place(name="Shanghai", name_zh="上海", lat=31.23, lon=121.47, country_name="China", country_name_zh="中国")
    (zh_marker, _) = markers(build_route_map([sh, PARIS], lang="zh"))
    assert tooltip_text(zh_marker) == "起点：上海"
    (popup,) = [c for c in zh_marker._children.values() if isinstance(c, TextPopup)]
    assert popup.text == "上海，中国"
    (en_marker, _) = markers(build_route_map([sh, PARIS]))
    assert tooltip_text(en_marker) == "Start: Shanghai"


# --- issue 15: stops not yet solved, flights and legs with no road, bare coordinates ---------


def test_pending_stops_flights_and_no_road_legs_are_drawn_apart() -> None:
    clicked = Place(name="30.1,120.9", lat=30.1, lon=120.9, source="latlon")
    named = Place(name="Jiaxing", lat=30.7522, lon=120.75, source="latlon")
    m = build_route_map(TEN[:4], leg_modes=["drive", "flight", "no_road"], pending=[clicked, named], lang="en")
    found = markers(m)
    assert len(found) == 6
    new = [tooltip_text(x) for x in found if "navigo-pin--new" in marker_icon(x).options["html"]]
    assert new == ["New stop (not in the route yet): point 30.10000, 120.90000",
                   "New stop (not in the route yet): Jiaxing"]
    lines = polylines(m)
    assert len(lines) == 3  # one segment per leg, each styled by its mode
    assert [tooltip_text(line) for line in lines] == [
        "Straight lines between the points, not the roads", "Flight estimate", "No road: this leg cannot be driven"]
    assert len({line.options["color"] for line in lines}) == 3
    assert len(polylines(build_route_map(TEN[:4], leg_modes=["drive"] * 3))) == 1  # all drives: one line


def test_pick_map_shows_clicked_stops_before_any_route() -> None:
    clicked = Place(name="30.1,120.9", lat=30.1, lon=120.9, source="latlon")
    m = build_pick_map(pending=[clicked], lang="zh")
    (marker,) = markers(m)
    assert "navigo-pin--new" in marker_icon(marker).options["html"]
    assert tooltip_text(marker) == "新途经点（尚未计入路线）：坐标点 30.10000, 120.90000"

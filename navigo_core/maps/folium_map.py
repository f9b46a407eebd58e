"""Route and pick maps built with folium that load nothing from the internet.

Folium's ``Map`` pulls Leaflet, jQuery, Bootstrap, awesome-markers and fonts
from CDNs; :class:`OfflineMap` keeps only Leaflet, served by our own server
(see :mod:`navigo_core.maps.assets`). Every element added here is a plain
folium element with no ``default_js``/``default_css`` of its own (``Marker``,
``DivIcon``, ``Tooltip``, ``PolyLine``, ``FitBounds``, ``TileLayer``) or one of
ours; ``folium.Popup`` is avoided because its script needs jQuery.

Tiles:

* ``none`` — the offline basemap (:class:`~navigo_core.maps.basemap.OfflineBasemap`);
* ``osm`` — OpenStreetMap tiles;
* ``amap`` — AMap tiles, drawn in GCJ-02: every coordinate inside China is
  converted before drawing (use :func:`from_map_coords` on clicked positions);
* ``custom`` — ``tiles_url`` with ``attribution`` (empty URL: the offline basemap).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Literal, cast, get_args

import folium
from branca.element import MacroElement
from folium.template import Template

from navigo_core.geo import gcj02_to_wgs84, haversine_m, wgs84_to_gcj02
from navigo_core.i18n import t
from navigo_core.maps.assets import LEAFLET_URL_PREFIX
from navigo_core.maps.basemap import DEFAULT_PAD_DEG, BBox, OfflineBasemap, view_bbox
from navigo_core.providers.places.base import Place
from navigo_core.providers.places.latlon import format_latlon

Tiles = Literal["none", "osm", "amap", "custom"]
LatLon = tuple[float, float]

OSM_TILES_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
AMAP_TILES_URL = "https://webrd0{s}.is.autonavi.com/appmaptile?lang=zh_cn&size=1&scale=1&style=8&x={x}&y={y}&z={z}"
ROUTE_COLOR = "#2563eb"
START_COLOR = "#16a34a"
END_COLOR = "#dc2626"
NEW_COLOR = "#f59e0b"  # a stop added since the route was solved
FLIGHT_COLOR = "#7c3aed"
NO_ROAD_COLOR = "#dc2626"
MARKER_SIZE = 26
MAX_FIT_ZOOM = 13
PICK_MAX_ZOOM = 10
WORLD_CENTER: tuple[float, float] = (20.0, 0.0)
WORLD_ZOOM = 2
LINE_DECIMALS = 5  # about 1 m
SAME_PLACE_M = 1.0  # a route whose ends are closer than this is a round trip
FIT_WIDTH_PX = 600  # the map width assumed for the initial zoom (fitBounds then refines it)

_MARKER_CSS = f"""
.navigo-pin {{
  display: flex; align-items: center; justify-content: center; box-sizing: border-box;
  width: {MARKER_SIZE}px; height: {MARKER_SIZE}px; border-radius: 50%;
  border: 2px solid #fff; box-shadow: 0 1px 4px rgba(15, 23, 42, .45);
  color: #fff; font: 600 12px/1 system-ui, -apple-system, "Segoe UI", "PingFang SC", "Microsoft YaHei", sans-serif;
  background: {ROUTE_COLOR};
}}
.navigo-pin--start {{ background: {START_COLOR}; }}
.navigo-pin--end {{ background: {END_COLOR}; }}
.navigo-pin--small {{ font-size: 10px; letter-spacing: -.5px; }}
.navigo-pin--new {{ background: {NEW_COLOR}; border-style: dashed; }}
.leaflet-container.leaflet-grab.navigo-pick {{ cursor: crosshair; }}
"""


class OfflineMap(folium.Map):
    """A ``folium.Map`` whose only external resources are the local Leaflet files."""

    def __init__(self, *args: object, asset_prefix: str = LEAFLET_URL_PREFIX, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.asset_prefix = asset_prefix.rstrip("/")
        # Instance attributes: they shadow folium's CDN lists for this map only, and
        # streamlit_folium reads them (getattr) to build the component's js/css links.
        self.default_js = [("leaflet", f"{self.asset_prefix}/leaflet.js")]
        self.default_css = [("leaflet_css", f"{self.asset_prefix}/leaflet.css")]


class _MapSetup(MacroElement):
    """Per-map setup: our marker stylesheet (page header) and Leaflet's default icon path.

    Setting ``L.Icon.Default.imagePath`` up front stops Leaflet from guessing it
    from the stylesheet, which fails (it drops the ``images/`` folder) when
    streamlit_folium injects leaflet.css after the map script has started.
    """

    _template = Template(
        """
        {% macro header(this, kwargs) %}<style>{{ this.css }}</style>{% endmacro %}
        {% macro script(this, kwargs) %}
            L.Icon.Default.imagePath = {{ this.image_path|tojson }};
        {% endmacro %}
        """
    )

    def __init__(self, css: str, image_path: str) -> None:
        super().__init__()
        self._name = "MapSetup"
        self.css = css
        self.image_path = image_path


class _ClassName(MacroElement):
    """Adds a CSS class to the map container (e.g. the crosshair cursor of the pick map)."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            L.DomUtil.addClass({{ this._parent.get_name() }}.getContainer(), {{ this.class_name|tojson }});
        {% endmacro %}
        """
    )

    def __init__(self, class_name: str) -> None:
        super().__init__()
        self._name = "ClassName"
        self.class_name = class_name


class TextPopup(MacroElement):
    """A plain-text popup bound to its parent layer (``folium.Popup`` needs jQuery).

    The content is a DOM node filled with ``textContent`` (no HTML injection),
    which is also what streamlit_folium reads (``innerText``) to report
    ``last_object_clicked_popup``.
    """

    _template = Template(
        """
        {% macro script(this, kwargs) %}
            (function (layer) {
                var content = document.createElement("div");
                content.textContent = {{ this.text|tojson }};
                layer.bindPopup(content, {maxWidth: 300});
            })({{ this._parent.get_name() }});
        {% endmacro %}
        """
    )

    def __init__(self, text: str) -> None:
        super().__init__()
        self._name = "TextPopup"
        self.text = text


def js_html_text(text: str) -> str:
    """``text`` made safe for folium's ``Tooltip``, which pastes it into a JS template literal as HTML."""
    return html.escape(text).replace("\\", "&#92;").replace("`", "&#96;").replace("$", "&#36;")


def to_map_coords(lat: float, lon: float, tiles: str) -> LatLon:
    """WGS-84 → the coordinates drawn on a map with ``tiles`` (GCJ-02 in China for AMap)."""
    return wgs84_to_gcj02(lat, lon) if tiles == "amap" else (lat, lon)


def from_map_coords(lat: float, lon: float, tiles: str) -> LatLon:
    """A position read off a map with ``tiles`` (e.g. a click) → WGS-84."""
    return gcj02_to_wgs84(lat, lon) if tiles == "amap" else (lat, lon)


def _effective_tiles(tiles: str, tiles_url: str) -> Tiles:
    """The tiles actually drawn: ``custom`` without a URL falls back to the offline basemap."""
    if tiles not in get_args(Tiles):
        raise ValueError(f"unknown map tiles {tiles!r}")
    return "none" if tiles == "custom" and not tiles_url.strip() else cast(Tiles, tiles)


def _new_map(
    center: LatLon,
    zoom: int,
    *,
    tiles: str,
    tiles_url: str,
    attribution: str,
    lang: str,
    asset_prefix: str,
    basemap_bbox: BBox | None,
) -> OfflineMap:
    """An empty map with the tiles (or the offline basemap) and our stylesheet."""
    m = OfflineMap(location=list(center), zoom_start=zoom, tiles=None, min_zoom=1, asset_prefix=asset_prefix)
    if tiles == "none":
        OfflineBasemap(basemap_bbox, t("map.attribution.outlines", lang)).add_to(m)
    elif tiles == "osm":
        folium.TileLayer(OSM_TILES_URL, attr=t("map.attribution.osm", lang), max_zoom=19, name="osm").add_to(m)
    elif tiles == "amap":
        folium.TileLayer(
            AMAP_TILES_URL, attr=t("map.attribution.amap", lang), subdomains="1234", max_zoom=18, name="amap"
        ).add_to(m)
    else:
        folium.TileLayer(
            tiles_url.strip(), attr=attribution.strip() or t("map.attribution.custom", lang), max_zoom=19, name="custom"
        ).add_to(m)
    _MapSetup(_MARKER_CSS, f"{m.asset_prefix}/images/").add_to(m)
    return m


def _is_loop(points: Sequence[Place]) -> bool:
    """True when the route ends where it starts (a round trip)."""
    return len(points) >= 2 and haversine_m(points[0].lat, points[0].lon, points[-1].lat, points[-1].lon) < SAME_PLACE_M


def _marker_role(index: int, count: int, lang: str, *, loop: bool = False) -> tuple[str, str, str]:
    """``(badge text, CSS modifier, role label)`` of point ``index`` among ``count``."""
    if index == 0:
        role = t("map.role.start_destination" if loop else "map.role.start", lang)
        return t("map.badge.start", lang), "navigo-pin--start", role
    if index == count - 1:
        return t("map.badge.destination", lang), "navigo-pin--end", t("map.role.destination", lang)
    label = str(index)
    return label, "navigo-pin--small" if len(label) >= 3 else "", t("map.role.stop", lang, n=index)


def marker_name(place: Place, lang: str) -> str:
    """The name a marker shows: the place's name, or "point 30.75220, 120.75000" for bare coordinates."""
    name = (place.name_zh if lang == "zh" else "") or place.name
    if place.source in ("latlon", "map") and (not name.strip() or name == format_latlon(place.lat, place.lon)):
        return t("map.point", lang, lat=f"{place.lat:.5f}", lon=f"{place.lon:.5f}")
    return name


def _marker(m: folium.Map, place: Place, badge: str, modifier: str, role: str, tiles: str, lang: str) -> None:
    icon = folium.DivIcon(
        html=f'<div class="navigo-pin {modifier}">{html.escape(badge)}</div>',
        icon_size=(MARKER_SIZE, MARKER_SIZE),
        icon_anchor=(MARKER_SIZE // 2, MARKER_SIZE // 2),
        class_name="navigo-marker",
    )
    name = marker_name(place, lang)
    tooltip = folium.Tooltip(js_html_text(t("map.tooltip", lang, role=role, name=name)), sticky=False)
    marker = folium.Marker(list(to_map_coords(place.lat, place.lon, tiles)), icon=icon, tooltip=tooltip)
    label = place.label_in(lang)
    TextPopup(name if place.source in ("latlon", "map") and label == place.name else label).add_to(marker)
    marker.add_to(m)


def _add_markers(m: folium.Map, points: Sequence[Place], tiles: str, lang: str) -> None:
    """One numbered marker per point: start "S" (green), stops 1..n, destination "E" (red).

    A round trip's destination is its start: one "S" marker stands for both.
    """
    loop = _is_loop(points)
    for i, place in enumerate(points[:-1] if loop else points):
        badge, modifier, role = _marker_role(i, len(points), lang, loop=loop)
        _marker(m, place, badge, modifier, role, tiles, lang)


def _add_pending(m: folium.Map, pending: Sequence[Place], tiles: str, lang: str) -> None:
    """A "+" marker (amber, dashed) per stop that is not part of the solved route yet."""
    for place in pending:
        _marker(m, place, t("map.badge.new", lang), "navigo-pin--new", t("map.role.new_stop", lang), tiles, lang)


def _add_route_line(m: folium.Map, line: Sequence[LatLon], *, road: bool, lang: str) -> None:
    """The road line (solid) or straight segments between the points (dashed)."""
    coords = [[round(lat, LINE_DECIMALS), round(lon, LINE_DECIMALS)] for lat, lon in line]
    style: dict[str, float | str] = (
        {"weight": 5, "opacity": 0.85} if road else {"weight": 3, "opacity": 0.8, "dash_array": "8 8"}
    )
    tooltip = js_html_text(t("map.line.road" if road else "map.line.straight", lang))
    folium.PolyLine(coords, color=ROUTE_COLOR, tooltip=tooltip, **style).add_to(m)


def _add_leg_lines(m: folium.Map, drawn: Sequence[LatLon], modes: Sequence[str], lang: str) -> None:
    """Straight segments leg by leg: drives dashed blue, flights dotted violet, legs with no road red."""
    styles: dict[str, tuple[str, str, str]] = {
        "drive": (ROUTE_COLOR, "8 8", "map.line.straight"),
        "flight": (FLIGHT_COLOR, "2 8", "map.role.flight"),
        "no_road": (NO_ROAD_COLOR, "12 6", "map.role.no_road"),
    }
    for (a, b), mode in zip(zip(drawn, drawn[1:]), modes):
        color, dash, key = styles.get(mode, styles["drive"])
        coords = [[round(a[0], LINE_DECIMALS), round(a[1], LINE_DECIMALS)],
                  [round(b[0], LINE_DECIMALS), round(b[1], LINE_DECIMALS)]]
        folium.PolyLine(coords, color=color, weight=3, opacity=0.85, dash_array=dash,
                        tooltip=js_html_text(t(key, lang))).add_to(m)


def _bounds(coords: Sequence[LatLon]) -> list[list[float]]:
    lats = [c[0] for c in coords]
    lons = [c[1] for c in coords]
    return [[min(lats), min(lons)], [max(lats), max(lons)]]


def _center(bounds: list[list[float]]) -> LatLon:
    (south, west), (north, east) = bounds
    return (south + north) / 2, (west + east) / 2


def _fit_zoom(bounds: list[list[float]]) -> int:
    """The zoom at which ``bounds`` fits about ``FIT_WIDTH_PX`` (Mercator-stretched in latitude)."""
    (south, west), (north, east) = bounds
    stretch = 1 / max(math.cos(math.radians((south + north) / 2)), 0.2)
    span = max(east - west, (north - south) * stretch, 1e-6)
    return max(1, min(MAX_FIT_ZOOM, math.floor(math.log2(FIT_WIDTH_PX * 360 / (256 * span)))))


def build_route_map(
    points: Sequence[Place],
    geometry: Sequence[LatLon] | None = None,
    *,
    tiles: Tiles = "none",
    tiles_url: str = "",
    attribution: str = "",
    lang: str = "en",
    asset_prefix: str = LEAFLET_URL_PREFIX,
    pending: Sequence[Place] = (),
    leg_modes: Sequence[str] | None = None,
) -> OfflineMap:
    """The route map: numbered markers, the route line, fitted to the route.

    ``points`` are in visiting order (origin first, destination last);
    ``geometry`` is the road line as ``(lat, lon)`` pairs, WGS-84. Without it the
    points are joined by dashed straight segments; ``leg_modes`` (one per leg: "drive",
    "flight", "no_road") then styles each segment. ``pending``: stops added since the
    route was solved, drawn as "+" markers. Without points the map shows the world.
    """
    tiles = _effective_tiles(tiles, tiles_url)
    wgs = [(p.lat, p.lon) for p in points]
    road = [(lat, lon) for lat, lon in geometry] if geometry else []
    drawn = [to_map_coords(lat, lon, tiles) for lat, lon in (road or wgs)]
    marked = [to_map_coords(lat, lon, tiles) for lat, lon in wgs]
    extra = [to_map_coords(p.lat, p.lon, tiles) for p in pending]
    extent = marked + drawn + extra
    bounds = _bounds(extent) if extent else None
    center = _center(bounds) if bounds else WORLD_CENTER
    m = _new_map(
        center,
        _fit_zoom(bounds) if bounds else WORLD_ZOOM,
        tiles=tiles,
        tiles_url=tiles_url,
        attribution=attribution,
        lang=lang,
        asset_prefix=asset_prefix,
        basemap_bbox=view_bbox(wgs + road + [(p.lat, p.lon) for p in pending]),
    )
    if len(drawn) >= 2 and not road and leg_modes is not None and len(leg_modes) == len(drawn) - 1 \
            and any(mode != "drive" for mode in leg_modes):
        _add_leg_lines(m, drawn, leg_modes, lang)
    elif len(drawn) >= 2:
        _add_route_line(m, drawn, road=bool(road), lang=lang)
    _add_markers(m, points, tiles, lang)
    _add_pending(m, pending, tiles, lang)
    if bounds:
        m.fit_bounds(bounds, padding=(30, 30), max_zoom=MAX_FIT_ZOOM)
    return m


def _as_place(point: Place | LatLon) -> Place:
    """A place for ``point``; a bare ``(lat, lon)`` is named by its coordinates."""
    if isinstance(point, Place):
        return point
    lat, lon = point
    return Place(name=f"{lat:.5f}, {lon:.5f}", lat=lat, lon=lon, source="map")


def build_pick_map(
    center: LatLon | None = None,
    zoom: int | None = None,
    points: Sequence[Place | LatLon] = (),
    *,
    tiles: Tiles = "none",
    tiles_url: str = "",
    attribution: str = "",
    lang: str = "en",
    asset_prefix: str = LEAFLET_URL_PREFIX,
    pending: Sequence[Place] = (),
) -> OfflineMap:
    """A map to click a point on, with a crosshair cursor.

    ``points`` already chosen (places, or bare ``(lat, lon)`` pairs, WGS-84) are
    shown as numbered markers; ``pending`` stops (not in a solved route) as "+" markers. ``center`` (WGS-84) and ``zoom`` default to a
    view of the points (at most zoom ``PICK_MAX_ZOOM``), or of the world without
    points. Clicked positions are in the map's coordinates: pass them through
    :func:`from_map_coords`.
    """
    tiles = _effective_tiles(tiles, tiles_url)
    places = [_as_place(p) for p in points]
    wgs = [(p.lat, p.lon) for p in [*places, *pending]]
    bounds = _bounds(wgs) if wgs else None
    if center is None:
        center = _center(bounds) if bounds else WORLD_CENTER
    if zoom is None:
        zoom = min(_fit_zoom(bounds), PICK_MAX_ZOOM) if bounds else WORLD_ZOOM
    # Four times the degrees visible across a ~1000 px wide map: the outlines worth embedding.
    span = 360.0 / 2 ** max(zoom, 0) * 4
    m = _new_map(
        to_map_coords(*center, tiles),
        zoom,
        tiles=tiles,
        tiles_url=tiles_url,
        attribution=attribution,
        lang=lang,
        asset_prefix=asset_prefix,
        basemap_bbox=None if span >= 180 else view_bbox([center, *wgs], pad_deg=max(DEFAULT_PAD_DEG, span)),
    )
    _ClassName("navigo-pick").add_to(m)
    _add_markers(m, places, tiles, lang)
    _add_pending(m, pending, tiles, lang)
    return m

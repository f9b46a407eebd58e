"""An offline basemap: country outlines on a light-blue sea with an adaptive graticule.

The outlines come from the PyPI package ``countryinfo`` (MIT; its GeoJSON is
johan/world.geo.json, derived from Natural Earth). Each country's
``data/<country>.json`` holds a ``geoJSON`` FeatureCollection; they are merged
once, rounded to 3 decimals (~100 m, far below the data's own precision) and
cached. A map embeds only the countries near its view, to keep the HTML small.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

from branca.element import MacroElement
from folium.template import Template

COORD_DECIMALS = 3
SEA_COLOR = "#dbe9f6"
LAND_COLOR = "#f6f4ef"
BORDER_COLOR = "#a3adb8"
GRATICULE_COLOR = "#bcd2ea"
DEFAULT_PAD_DEG = 20.0

# (south, west, north, east) in degrees, WGS-84.
BBox = tuple[float, float, float, float]
Position = list[float]
Ring = list[Position]


@dataclass(frozen=True)
class CountryOutline:
    """One country's outline feature and its bounding box."""

    feature: dict[str, Any]
    bbox: BBox


def _simplify_ring(ring: Iterable[Sequence[float]]) -> Ring | None:
    """The ring rounded to ``COORD_DECIMALS``, repeats removed; None when it collapses."""
    out: Ring = []
    for lon, lat, *_ in ring:
        pos = [round(lon, COORD_DECIMALS), round(lat, COORD_DECIMALS)]
        if not out or pos != out[-1]:
            out.append(pos)
    if out and out[0] != out[-1]:
        out.append(out[0])
    return out if len(out) >= 4 else None


def _simplify_polygon(rings: Iterable[Iterable[Sequence[float]]]) -> list[Ring] | None:
    """A polygon's rings simplified; None when its outer ring collapses (holes may drop)."""
    simplified = [_simplify_ring(r) for r in rings]
    if not simplified or simplified[0] is None:
        return None
    return [r for r in simplified if r is not None]


def _simplify_geometry(geometry: dict[str, Any]) -> dict[str, Any] | None:
    """A Polygon/MultiPolygon simplified to a MultiPolygon; None when nothing is left."""
    kind = geometry.get("type")
    if kind == "Polygon":
        polygons = [geometry["coordinates"]]
    elif kind == "MultiPolygon":
        polygons = geometry["coordinates"]
    else:
        return None
    kept = [p for p in (_simplify_polygon(poly) for poly in polygons) if p is not None]
    return {"type": "MultiPolygon", "coordinates": kept} if kept else None


def _bbox(geometry: dict[str, Any]) -> BBox:
    lons = [pos[0] for poly in geometry["coordinates"] for pos in poly[0]]
    lats = [pos[1] for poly in geometry["coordinates"] for pos in poly[0]]
    return min(lats), min(lons), max(lats), max(lons)


@lru_cache(maxsize=1)
def country_outlines() -> tuple[CountryOutline, ...]:
    """Every country outline in ``countryinfo``'s data, simplified, sorted by id (cached)."""
    outlines: list[CountryOutline] = []
    for entry in (files("countryinfo") / "data").iterdir():
        if not entry.name.endswith(".json"):
            continue
        collection = json.loads(entry.read_text(encoding="utf-8")).get("geoJSON") or {}
        for feature in collection.get("features") or []:
            geometry = _simplify_geometry(feature.get("geometry") or {})
            if geometry is None:
                continue
            slim = {"type": "Feature", "id": str(feature.get("id", "")), "properties": {}, "geometry": geometry}
            outlines.append(CountryOutline(feature=slim, bbox=_bbox(geometry)))
    outlines.sort(key=lambda o: o.feature["id"])
    return tuple(outlines)


def _intersects(a: BBox, b: BBox) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def pad_bbox(bbox: BBox, pad_deg: float) -> BBox:
    """``bbox`` grown by ``pad_deg`` on every side, clamped to the world."""
    south, west, north, east = bbox
    return (
        max(-90.0, south - pad_deg),
        max(-180.0, west - pad_deg),
        min(90.0, north + pad_deg),
        min(180.0, east + pad_deg),
    )


def outlines_geojson(bbox: BBox | None = None) -> dict[str, Any]:
    """A FeatureCollection of the country outlines intersecting ``bbox`` (all when None).

    The features are shared with the cache: treat them as read-only.
    """
    features = [o.feature for o in country_outlines() if bbox is None or _intersects(o.bbox, bbox)]
    return {"type": "FeatureCollection", "features": features}


def view_bbox(points: Sequence[tuple[float, float]], pad_deg: float = DEFAULT_PAD_DEG) -> BBox | None:
    """The box of ``(lat, lon)`` points padded generously (by their span, at least ``pad_deg``).

    None (the whole world) without points. The padding keeps the outlines
    around the route when the user zooms out a few levels.
    """
    if not points:
        return None
    lats = [p[0] for p in points]
    lons = [p[1] for p in points]
    span = max(max(lats) - min(lats), max(lons) - min(lons))
    return pad_bbox((min(lats), min(lons), max(lats), max(lons)), max(pad_deg, span))


def compact_json(data: Any) -> str:
    """JSON without spaces, safe to paste into a ``<script>`` (like jinja's ``tojson``)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")


class OfflineBasemap(MacroElement):
    """Country outlines, a sea-coloured background and a graticule that adapts to the zoom.

    Drawn in two map panes below the overlay pane (graticule under land, so its
    lines show on the sea only); both are non-interactive, so clicks reach the
    map. The graticule is recomputed in the browser on every move: about one
    line per 100–250 px, in steps of 30°, 20°, 10°, 5°, 2°, 1°, 0.5° … 0.01°.
    """

    _template = Template(
        """
        {% macro header(this, kwargs) %}
            <style>#{{ this._parent.get_name() }}.leaflet-container { background: {{ this.sea_color }}; }</style>
        {% endmacro %}

        {% macro script(this, kwargs) %}
            (function (map) {
                function pane(name, z) {
                    var p = map.createPane(name);
                    p.style.zIndex = z;
                    p.style.pointerEvents = "none";
                }
                pane("navigoGraticule", 240);
                pane("navigoLand", 250);
                L.geoJSON({{ this.data_json }}, {
                    pane: "navigoLand",
                    interactive: false,
                    attribution: {{ this.attribution|tojson }},
                    style: {{ this.land_style|tojson }}
                }).addTo(map);
                var grid = L.layerGroup().addTo(map);
                var steps = [30, 20, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01];
                function draw() {
                    var target = 280 / Math.pow(2, map.getZoom());
                    var s = steps[steps.length - 1];
                    for (var k = 0; k < steps.length; k++) { if (steps[k] <= target) { s = steps[k]; break; } }
                    var b = map.getBounds();
                    var south = Math.max(-85, b.getSouth()), north = Math.min(85, b.getNorth());
                    var west = b.getWest(), east = b.getEast(), lines = [], i;
                    for (i = Math.ceil(west / s); i * s <= east; i++) { lines.push([[south, i * s], [north, i * s]]); }
                    for (i = Math.ceil(south / s); i * s <= north; i++) { lines.push([[i * s, west], [i * s, east]]); }
                    grid.clearLayers();
                    grid.addLayer(L.polyline(lines, {
                        pane: "navigoGraticule", interactive: false,
                        color: {{ this.graticule_color|tojson }}, weight: 1, opacity: 1
                    }));
                }
                map.on("moveend", draw);
                draw();
            })({{ this._parent.get_name() }});
        {% endmacro %}
        """
    )

    def __init__(self, bbox: BBox | None, attribution: str) -> None:
        super().__init__()
        self._name = "OfflineBasemap"
        self.data = outlines_geojson(bbox)
        self.data_json = compact_json(self.data)
        self.attribution = attribution
        self.sea_color = SEA_COLOR
        self.graticule_color = GRATICULE_COLOR
        self.land_style = {
            "color": BORDER_COLOR,
            "weight": 0.7,
            "opacity": 1,
            "fillColor": LAND_COLOR,
            "fillOpacity": 1,
        }

"""Navigation deep links: URL formats, splitting of long routes, GCJ-02, name encoding."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from navigo_core.geo import wgs84_to_gcj02
from navigo_core.providers.places.base import Place
from navigo_core.route.deeplinks import (
    AMAP_APP_MAX_VIAS,
    GOOGLE_MAX_WAYPOINTS,
    DeepLinks,
    amap_web_link,
    build_deep_links,
    osm_link,
    split_route,
)

SHANGHAI = Place(name="Shanghai", lat=31.1774276, lon=121.5272106)
SHANGHAI_GCJ = (31.17530398364597, 121.531541859215)
PARIS = Place(name="Paris", lat=48.8566, lon=2.3522)
LYON = Place(name="Lyon", lat=45.764, lon=4.8357)
SUZHOU = Place(name="Suzhou", lat=31.30408, lon=120.59538, admin="Jiangsu", country="CN", country_name="China")
HANGZHOU = Place(name="Hangzhou", lat=30.29365, lon=120.16142, admin="Zhejiang", country="CN", country_name="China")


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def one(url: str, key: str) -> str:
    values = params(url)[key]
    assert len(values) == 1, (key, values)
    return values[0]


def latlon(text: str) -> tuple[float, float]:
    lat, lon = text.split(",")
    return float(lat), float(lon)


def route(n_stops: int, *, lat0: float = 30.0, lon0: float = 110.0) -> list[Place]:
    """Origin, ``n_stops`` stops, destination, on a line inside China."""
    return [Place(name=f"P{i}", lat=lat0 + i * 0.1, lon=lon0 + i * 0.1) for i in range(n_stops + 2)]


def amap_web_points(url: str) -> list[tuple[float, float, str]]:
    """(lat, lon, name) of from, vias, to — in driving order."""
    q = params(url)
    order = q["from"] + q.get("via", []) + q["to"]
    out = []
    for part in order:
        lon, lat, *name = part.split(",", 2)
        out.append((float(lat), float(lon), name[0] if name else ""))
    return out


# --- splitting --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_points", "max_vias", "expected"),
    [
        (0, 1, []),
        (1, 1, []),
        (2, 1, [(0, 1)]),
        (3, 1, [(0, 2)]),
        (4, 1, [(0, 2), (2, 3)]),
        (7, 1, [(0, 2), (2, 4), (4, 6)]),
        (4, 0, [(0, 1), (1, 2), (2, 3)]),
        (22, 9, [(0, 10), (10, 20), (20, 21)]),
        (22, 16, [(0, 17), (17, 21)]),
    ],
)
def test_split_route_spans_share_endpoints(n_points: int, max_vias: int, expected: list[tuple[int, int]]) -> None:
    spans = split_route(n_points, max_vias)
    assert spans == expected
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert end == start


def test_split_route_rejects_negative_vias() -> None:
    with pytest.raises(ValueError):
        split_route(3, -1)


@pytest.mark.parametrize(
    ("n_stops", "amap_web", "amap_app", "google", "osm"),
    [(0, 1, 1, 1, 1), (1, 1, 1, 1, 2), (5, 3, 1, 1, 6), (9, 5, 1, 1, 10), (10, 6, 1, 2, 11), (20, 11, 2, 3, 21)],
)
def test_link_counts(n_stops: int, amap_web: int, amap_app: int, google: int, osm: int) -> None:
    links = build_deep_links(route(n_stops))
    assert (len(links.amap_web), len(links.amap_app), len(links.google), len(links.osm)) == (
        amap_web,
        amap_app,
        google,
        osm,
    )


@pytest.mark.parametrize("points", [[], [SHANGHAI]])
def test_no_route_no_links(points: list[Place]) -> None:
    assert build_deep_links(points) == DeepLinks()


@pytest.mark.parametrize("n_stops", [0, 1, 5, 20])
def test_links_chain_through_the_whole_route(n_stops: int) -> None:
    """Following each service's links in order visits every point in order, ends shared."""
    points = route(n_stops)
    expected_wgs = [(p.lat, p.lon) for p in points]
    expected_gcj = [wgs84_to_gcj02(p.lat, p.lon) for p in points]
    links = build_deep_links(points)

    def chain(legs: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
        for prev, nxt in zip(legs, legs[1:]):
            assert prev[-1] == nxt[0]
        return legs[0] + [p for leg in legs[1:] for p in leg[1:]]

    def close(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
        return len(a) == len(b) and all(abs(x - u) < 1e-6 and abs(y - v) < 1e-6 for (x, y), (u, v) in zip(a, b))

    web = [[(lat, lon) for lat, lon, _ in amap_web_points(u)] for u in links.amap_web]
    assert all(len(leg) <= 3 for leg in web)
    assert close(chain(web), expected_gcj)

    app = []
    for u in links.amap_app:
        q = params(u)
        vias = []
        if "vialats" in q:
            vias = list(zip(map(float, q["vialats"][0].split("|")), map(float, q["vialons"][0].split("|"))))
            assert len(q["vianames"][0].split("|")) == len(vias)
        assert len(vias) <= AMAP_APP_MAX_VIAS
        start = (float(one(u, "slat")), float(one(u, "slon")))
        end = (float(one(u, "dlat")), float(one(u, "dlon")))
        app.append([start, *vias, end])
    assert close(chain(app), expected_gcj)

    google = []
    for u in links.google:
        q = params(u)
        waypoints = q["waypoints"][0].split("|") if "waypoints" in q else []
        assert len(waypoints) <= GOOGLE_MAX_WAYPOINTS
        google.append([one(u, "origin"), *waypoints, one(u, "destination")])
    for prev, nxt in zip(google, google[1:]):
        assert prev[-1] == nxt[0]
    assert google[0] + [p for leg in google[1:] for p in leg[1:]] == [p.name for p in points]  # by name

    osm = [[latlon(x) for x in one(u, "route").split(";")] for u in links.osm]
    assert all(len(leg) == 2 for leg in osm)
    assert close(chain(osm), expected_wgs)


# --- formats --------------------------------------------------------------------


def test_amap_web_format() -> None:
    url = build_deep_links([SHANGHAI, SUZHOU, HANGZHOU]).amap_web[0]
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "uri.amap.com", "/navigation")
    q = params(url)
    assert set(q) == {"from", "to", "via", "mode", "policy", "src", "coordinate", "callnative"}
    assert (one(url, "mode"), one(url, "policy"), one(url, "src")) == ("car", "1", "navigo")
    assert (one(url, "coordinate"), one(url, "callnative")) == ("gaode", "0")
    lat, lon = wgs84_to_gcj02(HANGZHOU.lat, HANGZHOU.lon)
    assert one(url, "to") == f"{lon:.6f},{lat:.6f},Hangzhou"  # lon,lat,name in GCJ-02


def test_amap_app_format() -> None:
    url = build_deep_links([SHANGHAI, SUZHOU, HANGZHOU]).amap_app[0]
    assert url.startswith("amapuri://route/plan/?")
    q = params(url)
    assert one(url, "sourceApplication") == "navigo"
    assert (one(url, "dev"), one(url, "t")) == ("0", "0")
    d_lat, d_lon = wgs84_to_gcj02(HANGZHOU.lat, HANGZHOU.lon)
    assert (one(url, "dname"), one(url, "dlat"), one(url, "dlon")) == ("Hangzhou", f"{d_lat:.6f}", f"{d_lon:.6f}")
    v_lat, v_lon = wgs84_to_gcj02(SUZHOU.lat, SUZHOU.lon)
    assert (one(url, "vialats"), one(url, "vialons"), one(url, "vianames")) == (f"{v_lat:.6f}", f"{v_lon:.6f}", "Suzhou")
    assert "vialats" not in params(build_deep_links([SHANGHAI, HANGZHOU]).amap_app[0])
    assert set(q) >= {"slat", "slon", "sname"}


def test_google_format() -> None:
    url = build_deep_links([PARIS, LYON, SUZHOU]).google[0]
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("www.google.com", "/maps/dir/")
    assert one(url, "api") == "1"
    assert one(url, "travelmode") == "driving"
    # Google gets names (with admin area and country when known), not raw coordinates
    assert one(url, "origin") == "Paris"
    assert one(url, "waypoints") == "Lyon"
    assert one(url, "destination") == "Suzhou, Jiangsu, China"
    assert "waypoints" not in params(build_deep_links([PARIS, LYON]).google[0])
    # a point typed or clicked as coordinates keeps them (WGS-84 everywhere, even in China)
    point = Place(name="31.177428,121.527211", lat=SHANGHAI.lat, lon=SHANGHAI.lon, source="latlon")
    assert one(build_deep_links([point, PARIS]).google[0], "origin") == "31.177428,121.527211"


def test_osm_format() -> None:
    url = build_deep_links([PARIS, LYON]).osm[0]
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("www.openstreetmap.org", "/directions")
    assert one(url, "engine") == "fossgis_osrm_car"
    assert one(url, "route") == "48.856600,2.352200;45.764000,4.835700"


def test_single_link_builders_reject_too_many_points() -> None:
    with pytest.raises(ValueError):
        amap_web_link(route(2))
    with pytest.raises(ValueError):
        osm_link(route(1))


# --- GCJ-02 ------------------------------------------------------------------------


def test_gcj02_test_vector_appears_in_amap_links() -> None:
    """WGS (31.1774276, 121.5272106) → GCJ (31.17530398364597, 121.531541859215)."""
    assert wgs84_to_gcj02(SHANGHAI.lat, SHANGHAI.lon) == pytest.approx(SHANGHAI_GCJ, abs=1e-9)
    links = build_deep_links([SHANGHAI, HANGZHOU])
    assert one(links.amap_web[0], "from") == "121.531542,31.175304,Shanghai"
    assert (one(links.amap_app[0], "slat"), one(links.amap_app[0], "slon")) == ("31.175304", "121.531542")
    # OSM keeps WGS-84.
    assert one(links.osm[0], "route").startswith("31.177428,121.527211;")


def test_gcj02_used_inside_china_only() -> None:
    inside = route(1)
    for url in build_deep_links(inside).amap_web:
        for (lat, lon, _), p in zip(amap_web_points(url), inside):
            assert (lat, lon) != pytest.approx((p.lat, p.lon), abs=1e-4)  # shifted by GCJ-02
            assert (lat, lon) == pytest.approx(wgs84_to_gcj02(p.lat, p.lon), abs=1e-6)

    # AMap only covers China: no AMap link for a route outside it, nor for a stretch that leaves it
    outside = build_deep_links([PARIS, LYON])
    assert outside.amap_web == [] and outside.amap_app == [] and outside.google and outside.osm
    mixed = build_deep_links([SHANGHAI, HANGZHOU, PARIS])
    assert mixed.amap_web == [] and mixed.amap_app == []
    assert [bool(leg.amap_web) for leg in mixed.legs] == [True, False]  # the leg inside China keeps one


# --- names ---------------------------------------------------------------------------


def test_names_are_percent_encoded() -> None:
    start = Place(name="上海 虹桥站 & Co?", lat=31.194, lon=121.32)
    end = Place(name="Mont-Saint-Michel #1 / 50%", lat=30.29, lon=120.16)
    links = build_deep_links([start, end])
    web = links.amap_web[0]
    assert "上海" not in web and " " not in web and "#" not in web  # all encoded
    assert amap_web_points(web)[0][2] == "上海 虹桥站 & Co?"
    assert amap_web_points(web)[1][2] == "Mont-Saint-Michel #1 / 50%"
    app = links.amap_app[0]
    assert one(app, "sname") == "上海 虹桥站 & Co?"
    assert one(app, "dname") == "Mont-Saint-Michel #1 / 50%"


def test_amap_separators_in_names_do_not_split_fields() -> None:
    a = Place(name="Beijing, Haidian", lat=39.96, lon=116.3)
    b = Place(name="A|B", lat=39.9, lon=116.4)
    c = Place(name="C", lat=39.8, lon=116.5)
    links = build_deep_links([a, b, c])
    assert [name for _, _, name in amap_web_points(links.amap_web[0])] == ["Beijing， Haidian", "A｜B", "C"]
    assert one(links.amap_app[0], "vianames").split("|") == ["A｜B"]


def test_empty_name_gives_coordinates_only() -> None:
    nameless = Place(name="", lat=31.0, lon=121.0)
    links = build_deep_links([nameless, HANGZHOU])
    lat, lon = wgs84_to_gcj02(31.0, 121.0)
    assert one(links.amap_web[0], "from") == f"{lon:.6f},{lat:.6f}"
    assert "sname" not in params(links.amap_app[0])
    assert one(links.google[0], "origin") == "31.000000,121.000000"


def test_amap_prefers_chinese_names() -> None:
    sh = Place(name="Shanghai", name_zh="上海", lat=31.23, lon=121.47)
    links = build_deep_links([sh, HANGZHOU])
    assert amap_web_points(links.amap_web[0])[0][2] == "上海"
    assert one(links.amap_app[0], "sname") == "上海"


# --- whole route, per-leg links, legs no car can drive (issue 15) --------------------


def test_one_whole_route_link_per_service_that_allows_it_and_one_link_per_leg() -> None:
    """12 points: Google takes the whole route in one link only up to 9 waypoints; every leg has its own."""
    ten = route(9)  # 11 points, 9 waypoints: one Google link
    links = build_deep_links(ten)
    assert links.whole("google") == links.google[0] and len(links.google) == 1
    assert links.whole("amap_app") and not links.whole("amap_web") and not links.whole("osm")
    assert len(links.legs) == len(ten) - 1
    assert all(leg.google and leg.osm and leg.amap_web for leg in links.legs)
    assert not build_deep_links(route(10)).whole("google")  # 10 waypoints: Google needs two parts


def test_legs_that_cannot_be_driven_split_the_route_and_get_no_driving_links() -> None:
    points = [PARIS, LYON, SHANGHAI, HANGZHOU]
    links = build_deep_links(points, drivable=[True, False, True])
    assert [leg.drivable for leg in links.legs] == [True, False, True]
    assert links.legs[1].google == links.legs[1].osm == links.legs[1].amap_web == ""
    assert not links.whole("google")  # the route needs a flight: there is no single driving link
    assert len(links.google) == 2 and len(links.amap_web) == 1  # Paris → Lyon, Shanghai → Hangzhou (AMap: China only)
    assert one(links.google[0], "destination") == "Lyon" and one(links.google[1], "origin") == "Shanghai"
    with pytest.raises(ValueError):
        build_deep_links(points, drivable=[True])

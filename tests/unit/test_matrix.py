"""Distance matrices: the offline estimate, OSRM and AMap against fake servers, and the factory."""

from __future__ import annotations


import httpx
import pytest

from navigo_core.config import Settings
from navigo_core.errors import ProviderError, ProviderHTTPError, ProviderNotConfigured, ProviderTimeout
from navigo_core.geo import haversine_m, wgs84_to_gcj02
from navigo_core.providers.matrix import (
    AmapMatrixProvider,
    OfflineMatrixProvider,
    OsrmMatrixProvider,
    estimate_duration_s,
    make_matrix_provider,
)
from navigo_core.providers.places.amap import to_amap_location
from navigo_core.providers.places.base import Place
from tests.fakes import amap as fake_amap_mod
from tests.fakes import osrm as fake_osrm_mod
from tests.fakes.amap import FakeAmap
from tests.fakes.osrm import FakeOsrm
from tests.fakes.server import FakeServer

pytestmark = pytest.mark.usefixtures("no_internet")

SHANGHAI = Place(name="Shanghai", lat=31.2222, lon=121.4581, country="CN", country_name="China")
SUZHOU = Place(name="Suzhou", lat=31.3041, lon=120.5954, admin="Jiangsu", country="CN", country_name="China")
HANGZHOU = Place(name="Hangzhou", lat=30.2936, lon=120.1614, admin="Zhejiang", country="CN", country_name="China")
NANJING = Place(name="Nanjing", lat=32.0617, lon=118.7778, admin="Jiangsu", country="CN", country_name="China")
POINTS = [SHANGHAI, SUZHOU, HANGZHOU, NANJING]


def latlon(p: Place) -> tuple[float, float]:
    return (p.lat, p.lon)


# --- offline ----------------------------------------------------------------

def test_offline_matrix_shape_flags_and_symmetry() -> None:
    m = OfflineMatrixProvider().matrix(POINTS)
    n = len(POINTS)
    assert (m.provider, m.estimated, m.requests) == ("offline", True, 0)
    assert len(m.distance_m) == len(m.duration_s) == n
    for i in range(n):
        assert m.distance_m[i][i] == 0 and m.duration_s[i][i] == 0
        for j in range(n):
            assert m.distance_m[i][j] == m.distance_m[j][i]
            assert m.duration_s[i][j] == m.duration_s[j][i]
            if i != j:
                assert m.distance_m[i][j] > 0 and m.duration_s[i][j] > 0


@pytest.mark.parametrize("factor", [1.3, 1.5])
def test_offline_distance_is_haversine_times_circuity(factor: float) -> None:
    m = OfflineMatrixProvider(factor).matrix(POINTS)
    for i, a in enumerate(POINTS):
        for j, b in enumerate(POINTS):
            assert m.distance_m[i][j] == pytest.approx(haversine_m(a.lat, a.lon, b.lat, b.lon) * factor)


def test_offline_factory_uses_the_circuity_setting() -> None:
    p = make_matrix_provider(Settings(matrix_provider="offline", circuity_factor=1.7))
    d = p.matrix([SHANGHAI, SUZHOU]).distance_m[0][1]
    assert d == pytest.approx(haversine_m(*latlon(SHANGHAI), *latlon(SUZHOU)) * 1.7)


def test_offline_durations_are_plausible() -> None:
    m = OfflineMatrixProvider().matrix([SHANGHAI, SUZHOU, NANJING])
    # Shanghai → Suzhou: ~84 km great circle, ~110 km road: about 1.5 h by car.
    assert 3600 < m.duration_s[0][1] < 2.5 * 3600
    # Shanghai → Nanjing: ~270 km great circle, ~350 km road: 3.5–6 h.
    assert 3.5 * 3600 < m.duration_s[0][2] < 6 * 3600
    # A 1 km city leg: a few minutes, not 40 seconds at highway speed.
    assert 2 * 60 < estimate_duration_s(1000) < 8 * 60


def test_offline_duration_grows_with_distance() -> None:
    distances = [100 * 1.15 ** k for k in range(80)]  # 100 m … ~6,000 km
    durations = [estimate_duration_s(d) for d in distances]
    assert all(b > a for a, b in zip(durations, durations[1:]))
    speeds_kmh = [d / t * 3.6 for d, t in zip(distances, durations)]
    assert min(speeds_kmh) >= 15 - 1e-9 and max(speeds_kmh) <= 90 + 1e-9


def test_offline_has_no_geometry() -> None:
    assert OfflineMatrixProvider().geometry(POINTS) is None


# --- factory ----------------------------------------------------------------

def test_factory_picks_by_setting_and_name(fake_osrm: FakeOsrm) -> None:
    s = Settings(matrix_provider="auto", osrm_url=fake_osrm.url, amap_key="")
    assert isinstance(make_matrix_provider(s), OsrmMatrixProvider)
    assert isinstance(make_matrix_provider(s, name="offline"), OfflineMatrixProvider)
    assert isinstance(make_matrix_provider(Settings(matrix_provider="auto", osrm_url="", amap_key="")),
                      OfflineMatrixProvider)


def test_factory_osrm_without_url_names_the_setting() -> None:
    with pytest.raises(ProviderNotConfigured) as info:
        make_matrix_provider(Settings(osrm_url=""), name="osrm")
    assert "OSRM_URL" in info.value.message("en") and "OSRM_URL" in info.value.message("zh")


def test_factory_amap_without_key_and_unknown_name() -> None:
    with pytest.raises(ProviderNotConfigured) as info:
        make_matrix_provider(Settings(amap_key=""), name="amap")
    assert "AMAP_KEY" in info.value.message("en")
    with pytest.raises(ProviderNotConfigured) as info:
        make_matrix_provider(Settings(), name="teleport")
    assert "teleport" in info.value.message("en") and "osrm" in info.value.message("en")


# --- OSRM (fake) ------------------------------------------------------------

def osrm(fake: FakeServer, timeout_s: float = 2.0) -> OsrmMatrixProvider:
    return OsrmMatrixProvider(fake.url, profile="driving", timeout_s=timeout_s)


def test_osrm_matrix_in_one_request_matches_the_server(fake_osrm: FakeOsrm) -> None:
    m = osrm(fake_osrm).matrix(POINTS)
    assert (m.provider, m.estimated, m.requests) == ("osrm", False, 1)
    assert len(fake_osrm.requests) == 1
    req = fake_osrm.requests[0]
    assert req.path.startswith("/table/v1/driving/")
    assert req.params["annotations"] == "duration,distance"
    assert req.path.endswith(f"{SHANGHAI.lon:.6f},{SHANGHAI.lat:.6f};{SUZHOU.lon:.6f},{SUZHOU.lat:.6f};"
                             f"{HANGZHOU.lon:.6f},{HANGZHOU.lat:.6f};{NANJING.lon:.6f},{NANJING.lat:.6f}")
    for i, a in enumerate(POINTS):
        for j, b in enumerate(POINTS):
            want_d = 0.0 if i == j else fake_osrm_mod.expected_distance_m(latlon(a), latlon(b))
            want_t = 0.0 if i == j else fake_osrm_mod.expected_duration_s(latlon(a), latlon(b))
            assert m.distance_m[i][j] == pytest.approx(want_d, abs=0.1)
            assert m.duration_s[i][j] == pytest.approx(want_t, abs=0.1)


def test_osrm_uses_the_profile_setting(fake_osrm: FakeOsrm) -> None:
    p = make_matrix_provider(Settings(osrm_url=fake_osrm.url, osrm_profile="bike"), name="osrm")
    p.matrix([SHANGHAI, SUZHOU])
    assert fake_osrm.requests[0].path.startswith("/table/v1/bike/")


def test_osrm_geometry_is_lat_lon(fake_osrm: FakeOsrm) -> None:
    line = osrm(fake_osrm).geometry([SHANGHAI, SUZHOU, HANGZHOU])
    assert line is not None and len(line) == 2 * fake_osrm_mod.POINTS_PER_LEG + 1
    assert line[0] == pytest.approx(latlon(SHANGHAI), abs=1e-6)
    assert line[-1] == pytest.approx(latlon(HANGZHOU), abs=1e-6)
    assert line[fake_osrm_mod.POINTS_PER_LEG] == pytest.approx(latlon(SUZHOU), abs=1e-6)
    assert all(30 < lat < 32 and 120 < lon < 122 for lat, lon in line)  # not swapped
    req = fake_osrm.requests[-1]
    assert req.path.startswith("/route/v1/driving/") and req.params["geometries"] == "geojson"
    assert req.params["overview"] == "full" and len(fake_osrm.requests) == 1


def test_osrm_timeout(fake_osrm: FakeOsrm) -> None:
    fake_osrm.set_fault(latency_s=2.0)
    with pytest.raises(ProviderTimeout) as info:  # the 2 s answer is cut at 0.2 s: no timeout, no error
        osrm(fake_osrm, timeout_s=0.2).matrix(POINTS)
    assert info.value.params["seconds"] == "0.2" and "0.2" in info.value.message("en")
    assert info.value.provider == "OSRM"


def test_osrm_hang_is_a_timeout(fake_osrm: FakeOsrm) -> None:
    fake_osrm.set_fault(hang=True)
    with pytest.raises(ProviderTimeout):
        osrm(fake_osrm, timeout_s=0.2).geometry([SHANGHAI, SUZHOU])


def test_osrm_server_error(fake_osrm: FakeOsrm) -> None:
    fake_osrm.set_fault(status=500)
    with pytest.raises(ProviderHTTPError) as info:
        osrm(fake_osrm).matrix(POINTS)
    assert info.value.code == "error.provider_http" and info.value.params["status"] == 500
    assert "500" in info.value.message("en")


@pytest.mark.parametrize("http_status", [400, 200])
def test_osrm_error_code_carries_osrm_message(fake_osrm: FakeOsrm, http_status: int) -> None:
    fake_osrm.error = ("NoTable", "No table found for these coordinates")
    fake_osrm.error_http_status = http_status
    with pytest.raises(ProviderHTTPError) as info:
        osrm(fake_osrm).matrix(POINTS)
    assert info.value.code == "matrix.osrm_error"
    msg = info.value.message("en")
    assert "NoTable" in msg and "No table found for these coordinates" in msg
    assert "No table found" in info.value.message("zh")


def test_osrm_null_cell_names_both_points(fake_osrm: FakeOsrm) -> None:
    fake_osrm.unreachable = {(1, 3)}
    with pytest.raises(ProviderError) as info:
        osrm(fake_osrm).matrix(POINTS)
    err = info.value
    assert err.code == "matrix.unreachable" and not isinstance(err, ProviderHTTPError)
    assert "Suzhou, Jiangsu, China" in err.message("en") and "Nanjing, Jiangsu, China" in err.message("en")


def test_osrm_malformed_json(fake_osrm: FakeOsrm) -> None:
    fake_osrm.set_fault(malformed_json=True)
    with pytest.raises(ProviderError) as info:
        osrm(fake_osrm).matrix(POINTS)
    assert info.value.code == "provider.bad_json" and "JSON" in info.value.message("en")


def test_osrm_unreachable_server_says_where() -> None:
    dead = FakeServer().start()
    url = dead.url
    dead.stop()
    with pytest.raises(ProviderError) as info:
        OsrmMatrixProvider(url, timeout_s=1).matrix(POINTS)
    assert info.value.code == "provider.unreachable" and url in info.value.message("en")


def test_fault_for_one_request_only(fake_osrm: FakeOsrm) -> None:
    fake_osrm.set_fault(status=503, times=1)
    with pytest.raises(ProviderHTTPError):
        osrm(fake_osrm).matrix(POINTS)
    assert osrm(fake_osrm).matrix(POINTS).requests == 1
    assert len(fake_osrm.requests) == 2


def test_single_point_needs_no_request(fake_osrm: FakeOsrm) -> None:
    m = osrm(fake_osrm).matrix([SHANGHAI])
    assert m.distance_m == [[0.0]] and m.requests == 0 and fake_osrm.requests == []


# --- AMap (fake) ------------------------------------------------------------

def amap(fake: FakeAmap, key: str | None = None) -> AmapMatrixProvider:
    return AmapMatrixProvider(key or fake.key, base_url=fake.url, client=httpx.Client(timeout=2))


def test_amap_matrix_one_request_per_destination_in_gcj(fake_amap: FakeAmap) -> None:
    m = amap(fake_amap).matrix(POINTS[:3])
    assert (m.provider, m.estimated, m.requests) == ("amap", False, 3)
    reqs = fake_amap.requests_to("/v3/distance")
    assert len(reqs) == 3 and len(fake_amap.requests) == 3
    gcj = [to_amap_location(p.lat, p.lon) for p in POINTS[:3]]
    for j, req in enumerate(reqs):
        assert req.params["destination"] == gcj[j] and req.params["origins"] == "|".join(gcj)
        assert req.params["type"] == "1"
    # The wire coordinates are GCJ-02, not the WGS-84 input.
    glat, glon = wgs84_to_gcj02(SHANGHAI.lat, SHANGHAI.lon)
    assert gcj[0] == f"{glon:.6f},{glat:.6f}" and gcj[0] != f"{SHANGHAI.lon:.6f},{SHANGHAI.lat:.6f}"
    for i in range(3):
        assert m.distance_m[i][i] == 0 and m.duration_s[i][i] == 0
    want = fake_amap_mod.expected_distance_m(wgs84_to_gcj02(*latlon(SHANGHAI)), wgs84_to_gcj02(*latlon(HANGZHOU)))
    assert m.distance_m[0][2] == pytest.approx(round(want), abs=1)


def test_amap_geometry_back_in_wgs84(fake_amap: FakeAmap) -> None:
    line = amap(fake_amap).geometry([SHANGHAI, SUZHOU, HANGZHOU])
    assert line is not None and len(line) == 3
    for got, p in zip(line, [SHANGHAI, SUZHOU, HANGZHOU]):
        assert haversine_m(got[0], got[1], p.lat, p.lon) < 1.0
    assert "waypoints" in fake_amap.requests[-1].params


def test_amap_bad_key(fake_amap: FakeAmap) -> None:
    with pytest.raises(ProviderHTTPError) as info:
        amap(fake_amap, key="nope").matrix(POINTS[:2])
    assert "INVALID_USER_KEY" in info.value.message("en")


def test_amap_matrix_timeout(fake_amap: FakeAmap) -> None:
    fake_amap.set_fault(latency_s=2.0)
    with pytest.raises(ProviderTimeout) as info:  # the 2 s answer is cut at 0.2 s
        AmapMatrixProvider("k", base_url=fake_amap.url, timeout_s=0.2).matrix(POINTS)
    assert "0.2" in info.value.message("en")

"""Places: lat,lon literals, the offline gazetteer, strict resolution, AMap and Nominatim against fakes."""

from __future__ import annotations


import httpx
import pytest

from navigo_core.config import Settings
from navigo_core.errors import InputError, PlaceResolutionError, ProviderHTTPError, ProviderNotConfigured, ProviderTimeout
from navigo_core.geo import haversine_m, wgs84_to_gcj02
from navigo_core.i18n import catalog
from navigo_core.providers.places import (
    AmapPlaceProvider,
    GazetteerPlaceProvider,
    NominatimPlaceProvider,
    Place,
    format_latlon,
    load_index,
    make_place_provider,
    parse_latlon,
    place_to_text,
    resolve_place,
)
from navigo_core.providers.places.gazetteer import _alternate_keys, normalize_name
from tests.fakes.amap import FakeAmap
from tests.fakes.nominatim import FakeNominatim, result

pytestmark = pytest.mark.usefixtures("no_internet")

GAZ = GazetteerPlaceProvider()


def resolve(text: str | Place) -> Place:
    return resolve_place(text, GAZ)


def error_of(text: str) -> PlaceResolutionError:
    with pytest.raises(PlaceResolutionError) as info:
        resolve(text)
    return info.value


# --- lat,lon literals -------------------------------------------------------

@pytest.mark.parametrize("text", ["31.23,121.47", "31.23, 121.47", " +31.23 ,121.47 ", "31.23，121.47",
                                  "31.23°N, 121.47°E", "31.23N,121.47E"])
def test_latlon_forms(text: str) -> None:
    p = parse_latlon(text)
    assert p is not None and (p.lat, p.lon) == (31.23, 121.47) and p.source == "latlon"


def test_latlon_signs_and_hemispheres() -> None:
    assert (parse_latlon("-33.87,-151.21").lat, parse_latlon("-33.87,-151.21").lon) == (-33.87, -151.21)
    p = parse_latlon("33.87S, 151.21E")
    assert (p.lat, p.lon) == (-33.87, 151.21)


def test_named_latlon_keeps_the_name() -> None:
    p = parse_latlon("Home (31.2,121.5)")
    assert p is not None and p.name == "Home" and (p.lat, p.lon) == (31.2, 121.5)


@pytest.mark.parametrize("text", ["Shanghai", "Route 66", "12", "1,2,3", "Paris, France"])
def test_not_a_latlon(text: str) -> None:
    assert parse_latlon(text) is None


def test_latitude_out_of_range_says_which_and_how() -> None:
    with pytest.raises(InputError) as info:
        parse_latlon("123,145")
    err = info.value
    assert err.code == "place.lat_range"
    assert "123" in err.message("en") and "−90…90" in err.message("en") and "lat,lon" in err.message("en")
    assert "123" in err.message("zh") and "纬度" in err.message("zh")


def test_swapped_lon_lat_is_detected_and_the_fix_suggested() -> None:
    with pytest.raises(InputError) as info:
        parse_latlon("121.47, 31.23")
    assert info.value.code == "place.latlon_swapped"
    assert "31.23,121.47" in info.value.message("en")


def test_longitude_out_of_range() -> None:
    with pytest.raises(InputError) as info:
        parse_latlon("45,200")
    assert info.value.code == "place.lon_range" and "200" in info.value.message("en")


def test_place_to_text_round_trips() -> None:
    suzhou = resolve("苏州")
    again = resolve(place_to_text(suzhou))
    assert again.name == suzhou.name
    assert haversine_m(again.lat, again.lon, suzhou.lat, suzhou.lon) < 1.0
    assert format_latlon(31.0, -0.5) == "31,-0.5"


# --- gazetteer and strict resolution ----------------------------------------

def test_shanghai_in_chinese() -> None:
    p = resolve("上海")
    assert (p.name, p.country, p.source) == ("Shanghai", "CN", "gazetteer")
    assert p.population and p.population > 10_000_000


def test_hangzhou() -> None:
    p = resolve("杭州")
    assert p.name == "Hangzhou" and p.admin == "Zhejiang" and p.admin_zh == "浙江"


def test_suzhou_in_chinese_is_jiangsu_not_anhui() -> None:
    p = resolve("苏州")
    assert p.name == "Suzhou" and p.admin == "Jiangsu" and p.admin_zh == "江苏"
    assert p.label_in("zh") == "苏州，江苏，中国"
    other = resolve("宿州")
    assert other.admin == "Anhui" and other.admin_zh == "安徽"
    assert haversine_m(p.lat, p.lon, other.lat, other.lon) > 200_000


def test_suzhou_in_english_is_ambiguous_between_jiangsu_and_anhui() -> None:
    err = error_of("Suzhou")
    assert err.code == "place.ambiguous"
    assert {c.admin for c in err.candidates} == {"Jiangsu", "Anhui"}
    assert {c.admin_zh for c in err.candidates} == {"江苏", "安徽"}
    msg = err.message("en")
    assert "Jiangsu" in msg and "Anhui" in msg and "Suzhou, Jiangsu" in msg


def test_paris_is_ambiguous_france_and_texas() -> None:
    err = error_of("Paris")
    assert err.code == "place.ambiguous" and err.query == "Paris"
    labels = [c.label for c in err.candidates]
    assert any("France" in lab for lab in labels) and any("Texas" in lab for lab in labels)
    assert err.candidates[0].country == "FR"  # most populous first
    assert "“Paris, France”" in err.message("en")
    assert "Paris" in err.message("zh") and "多个地点" in err.message("zh")


@pytest.mark.parametrize("text, country, admin", [
    ("Paris, France", "FR", "Île-de-France"),
    ("Paris, FR", "FR", "Île-de-France"),
    ("Paris, TX", "US", "Texas"),
    ("Paris, Texas", "US", "Texas"),
    ("Paris, Texas, United States", "US", "Texas"),
    ("苏州, 江苏", "CN", "Jiangsu"),
    ("苏州，江苏省", "CN", "Jiangsu"),
    ("Suzhou, Anhui", "CN", "Anhui"),
    ("London, UK", "GB", "England"),
])
def test_qualifiers_disambiguate(text: str, country: str, admin: str) -> None:
    p = resolve(text)
    assert (p.country, p.admin) == (country, admin)


def test_alternate_and_accented_names() -> None:
    assert resolve("München").name == "Munich"
    assert resolve("sao paulo").country == "BR"
    # "Berlin" is also an old alternate name of North Canton, Ohio: a main-name match wins.
    assert resolve("Berlin").country == "DE"


@pytest.mark.parametrize("code, city, country", [("PVG", "Shanghai", "CN"), ("JFK", "New York", "US")])
def test_iata_codes(code: str, city: str, country: str) -> None:
    p = resolve(code)
    assert p.source == "iata" and p.ref == code and p.country == country
    town = resolve(city)
    assert haversine_m(p.lat, p.lon, town.lat, town.lon) < 60_000


def test_airport_has_chinese_admin() -> None:
    assert resolve("PVG").admin_zh == "上海"


def test_unknown_place_has_a_clear_message() -> None:
    err = error_of("Xyzzyqq")
    assert err.code == "place.unknown" and err.query == "Xyzzyqq"
    assert "Xyzzyqq" in err.message("en") and "lat,lon" in err.message("en")
    assert "Xyzzyqq" in err.message("zh")


def test_unknown_place_offers_near_misses() -> None:
    err = error_of("Shanghia")
    assert err.code == "place.unknown"
    assert "Shanghai" in [c.name for c in err.candidates]
    assert "Suzhou" in [c.name for c in error_of("苏洲").candidates]


def test_wrong_qualifier_lists_the_unqualified_matches() -> None:
    err = error_of("Paris, Narnia")
    assert err.code == "place.unknown"
    assert {c.country for c in err.candidates} == {"FR", "US"}


@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_blank_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError) as info:
        resolve_place(text, GAZ, role="start")
    assert info.value.code == "place.blank" and not isinstance(info.value, PlaceResolutionError)
    assert "lat,lon" in info.value.message("en")


def test_a_picked_place_is_accepted_as_is() -> None:
    picked = error_of("Suzhou").candidates[1]
    assert resolve(picked) is picked


def test_latlon_literal_resolves_without_search() -> None:
    p = resolve("31.23, 121.47")
    assert p.source == "latlon" and (p.lat, p.lon) == (31.23, 121.47)


def test_role_is_carried_on_the_error() -> None:
    with pytest.raises(PlaceResolutionError) as info:
        resolve_place("Paris", GAZ, role="end")
    assert info.value.role == "end"
    with pytest.raises(InputError) as bad:
        resolve_place("95,200", GAZ, role="start")
    assert bad.value.params["role"] == "start"


def test_fast_index_normalization_matches_normalize_name() -> None:
    names = ["Saint-Étienne", "St. Louis", "L'Aquila", "São Paulo", "Đà Nẵng", "苏州市", "广西壮族自治区",
             "ＰＡＲＩＳ", "  New   York ", "Łódź", "x1", "Москва", "-", "Ōsaka-shi"]
    # Not indexed: digits, non-Latin non-CJK scripts, full-width forms, nothing left after normalizing.
    indexable = [n for n in names if n not in ("x1", "Москва", "-", "ＰＡＲＩＳ")]
    assert sorted(_alternate_keys(names)) == sorted(normalize_name(n) for n in indexable)
    assert normalize_name("苏州市") == "苏州" and normalize_name("São Paulo") == "sao paulo"
    assert normalize_name("Łódź") == "lodz" and normalize_name("Đà Nẵng") == "da nang"
    assert normalize_name("ＰＡＲＩＳ") == "paris"  # typed with a full-width IME


def test_gazetteer_loads_once_and_lookups_repeat() -> None:
    """Timings live in benchmarks/ (a busy CI machine must not fail a correct build); here: loading is once
    per process and a lookup gives the same answer every time."""
    first_load = load_index()
    assert first_load > 0 and load_index() == first_load  # built once, the second call reuses it
    first = [p.label for p in GAZ.search("Suzhou")]
    for _ in range(20):
        assert [p.label for p in GAZ.search("Suzhou")] == first
        assert [p.label for p in GAZ.search("苏州, 江苏")] == ["Suzhou, Jiangsu, China"]


# --- factory ----------------------------------------------------------------

def test_factory_defaults_to_the_gazetteer() -> None:
    assert make_place_provider(Settings(places_provider="auto", amap_key="", nominatim_url="")).name == "gazetteer"


def test_factory_names_the_missing_setting() -> None:
    with pytest.raises(ProviderNotConfigured) as info:
        make_place_provider(Settings(places_provider="amap", amap_key=""))
    assert "AMAP_KEY" in info.value.message("en") and "AMAP_KEY" in info.value.message("zh")
    with pytest.raises(ProviderNotConfigured) as info:
        make_place_provider(Settings(places_provider="nominatim", nominatim_url=""))
    assert "NOMINATIM_URL" in info.value.message("en")


def test_factory_builds_http_providers_from_settings(fake_amap: FakeAmap, fake_nominatim: FakeNominatim) -> None:
    amap = make_place_provider(Settings(places_provider="auto", amap_key=fake_amap.key, amap_base_url=fake_amap.url))
    assert isinstance(amap, AmapPlaceProvider) and amap.base_url == fake_amap.url
    nom = make_place_provider(Settings(places_provider="auto", amap_key="", nominatim_url=fake_nominatim.url))
    assert isinstance(nom, NominatimPlaceProvider)


# --- AMap (fake) ------------------------------------------------------------

SUZHOU_WGS = (31.29890, 120.58530)


def _amap(fake: FakeAmap, key: str | None = None) -> AmapPlaceProvider:
    return AmapPlaceProvider(key or fake.key, base_url=fake.url, client=httpx.Client(timeout=2))


def test_amap_geocode_converts_gcj_to_wgs(fake_amap: FakeAmap) -> None:
    glat, glon = wgs84_to_gcj02(*SUZHOU_WGS)
    fake_amap.geocodes["苏州"] = [{
        "formatted_address": "江苏省苏州市", "country": "中国", "province": "江苏省", "city": "苏州市",
        "district": [], "adcode": "320500", "location": f"{glon:.6f},{glat:.6f}", "level": "市",
    }]
    p = resolve_place("苏州", _amap(fake_amap))
    assert p.source == "amap" and p.admin == "Jiangsu" and p.admin_zh == "江苏" and p.country == "CN"
    assert haversine_m(p.lat, p.lon, *SUZHOU_WGS) < 1.0  # GCJ-02 offset (~500 m) removed
    assert haversine_m(glat, glon, *SUZHOU_WGS) > 100
    assert fake_amap.requests[-1].params["address"] == "苏州"


def test_amap_falls_back_to_poi_search_and_sends_qualifiers(fake_amap: FakeAmap) -> None:
    fake_amap.pois["东方明珠"] = [
        {"id": "B00155L3FP", "name": "东方明珠", "location": "121.499718,31.239703", "pname": "上海市",
         "cityname": "上海市", "adname": "浦东新区"},
    ]
    p = resolve_place("东方明珠, 上海", _amap(fake_amap))
    assert p.name == "东方明珠" and p.ref == "B00155L3FP" and p.admin == "Shanghai"
    geo, text = fake_amap.requests_to("/v3/geocode/geo"), fake_amap.requests_to("/v3/place/text")
    assert geo[0].params["address"] == "上海东方明珠"
    assert text[0].params["keywords"] == "东方明珠" and text[0].params["city"] == "上海"


def test_amap_error_status_carries_info_and_hides_the_key(fake_amap: FakeAmap) -> None:
    with pytest.raises(ProviderHTTPError) as info:
        _amap(fake_amap, key="wrong-secret").search("苏州")
    msg = info.value.message("en")
    assert "INVALID_USER_KEY" in msg and "10001" in msg and "AMAP_KEY" in msg
    assert "wrong-secret" not in msg


# --- Nominatim (fake) -------------------------------------------------------

def test_nominatim_parses_results_and_identifies_itself(fake_nominatim: FakeNominatim) -> None:
    fake_nominatim.results["Suzhou"] = [
        result("Suzhou", 31.2989, 120.5853, state="Jiangsu", country="China", cc="CN", osm_id=1, name_zh="苏州市"),
        result("Suzhou", 33.6461, 116.9782, state="Anhui", country="China", cc="CN", osm_id=2, name_zh="宿州市"),
    ]
    fake_nominatim.results["Paris, France"] = [
        result("Paris", 48.8589, 2.3200, state="Île-de-France", country="France", cc="FR", osm_id=7444),
    ]
    nom = NominatimPlaceProvider(fake_nominatim.url, timeout_s=2)
    p = resolve_place("Paris, France", nom)
    assert (p.name, p.country, p.admin, p.source, p.ref) == ("Paris", "FR", "Île-de-France", "nominatim", "relation/7444")
    assert (p.lat, p.lon) == (48.8589, 2.32)
    req = fake_nominatim.requests[-1]
    assert req.params["format"] == "jsonv2" and req.params["q"] == "Paris, France"
    assert req.headers["user-agent"].startswith("NaviGo-Workbench/")
    with pytest.raises(PlaceResolutionError) as info:
        resolve_place("Suzhou", nom)
    assert {c.admin_zh for c in info.value.candidates} == {"江苏", "安徽"}
    assert info.value.candidates[0].name_zh == "苏州市"


def test_nominatim_http_error(fake_nominatim: FakeNominatim) -> None:
    fake_nominatim.set_fault(status=503)
    with pytest.raises(ProviderHTTPError) as info:
        NominatimPlaceProvider(fake_nominatim.url, timeout_s=2).search("Paris")
    assert info.value.params["status"] == 503 and "Nominatim" in info.value.message("en")


# --- catalog ----------------------------------------------------------------

def test_every_places_key_has_en_and_zh() -> None:
    keys = [k for k in catalog() if k.split(".")[0] in ("place", "matrix", "provider")]
    assert len(keys) > 20
    for key in keys:
        assert catalog()[key].get("en") and catalog()[key].get("zh"), key


# --- timeouts: every provider gives up after its timeout with a specific message --------

@pytest.mark.parametrize("fault", [{"latency_s": 2.0}, {"hang": True}])
def test_amap_places_timeout(fake_amap: FakeAmap, fault: dict[str, object]) -> None:
    fake_amap.set_fault(**fault)
    provider = AmapPlaceProvider("k", base_url=fake_amap.url, timeout_s=0.2)
    with pytest.raises(ProviderTimeout) as info:  # a 2 s answer or a hang, cut at 0.2 s
        provider.search("苏州")
    assert "0.2" in info.value.message("en")


@pytest.mark.parametrize("fault", [{"latency_s": 2.0}, {"hang": True}])
def test_nominatim_timeout(fake_nominatim: FakeNominatim, fault: dict[str, object]) -> None:
    fake_nominatim.set_fault(**fault)
    with pytest.raises(ProviderTimeout) as info:  # a 2 s answer or a hang, cut at 0.2 s
        NominatimPlaceProvider(fake_nominatim.url, timeout_s=0.2).search("Paris")
    assert "Nominatim" in info.value.message("en")

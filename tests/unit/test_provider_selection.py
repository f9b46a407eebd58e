"""The one place that selects providers (navigo_core/providers/selection.py): the names known, those available,
the one selected, the bundle built from them, and that the consumers, the Route page and the CLI read from it."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path
from typing import Any

import pytest

from navigo_core import cli
from navigo_core.clarify import ClarifyAgent
from navigo_core.config import Settings
from navigo_core.errors import InputError, ProviderNotConfigured
from navigo_core.planner.deps import make_planner_deps
from navigo_core.providers import (
    KINDS,
    ProviderChoice,
    Providers,
    choice,
    choices,
    make_providers,
    names_known,
)
from navigo_core.providers.flights import FLIGHT_PROVIDERS, OfflineFlightProvider, effective_flights_provider
from navigo_core.providers.matrix import MATRIX_PROVIDERS, OfflineMatrixProvider, OsrmMatrixProvider
from navigo_core.providers.places import PLACE_PROVIDERS, AmapPlaceProvider, GazetteerPlaceProvider
from navigo_core.providers.pois import POI_PROVIDERS, OfflinePoiProvider, OverpassPoiProvider, effective_poi_provider
from navigo_core.providers.weather import (
    WEATHER_PROVIDERS,
    OfflineWeatherProvider,
    OpenMeteoWeatherProvider,
    effective_weather_provider,
)
from navigo_core.route.service import make_route_deps
from navigo_core.scenes import make_gate_context
from tests.fakes.osrm import FakeOsrm

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {"places": "gazetteer", "matrix": "offline", "flights": "offline", "weather": "offline", "pois": "offline"}

# Every field the selection reads, at its default: given explicitly, so no environment variable, .env or
# secrets file of the machine running the tests can change what these tests see.
_DEFAULTS: dict[str, Any] = {
    "places_provider": "auto", "amap_key": "", "nominatim_url": "", "matrix_provider": "auto", "osrm_url": "",
    "flights_provider": "auto", "duffel_access_token": "", "weather_provider": "auto", "weather_online": False,
    "open_meteo_url": "https://api.open-meteo.com", "poi_provider": "auto", "poi_online": False,
    "overpass_url": "https://overpass-api.de/api", "llm_api_key": "",
}


def settings(**fields: Any) -> Settings:
    return Settings(_env_file=None, **{**_DEFAULTS, **fields})


# --- choices ------------------------------------------------------------------------------------------------

def test_default_settings_select_and_offer_only_the_offline_providers() -> None:
    found = choices(settings())
    assert tuple(found) == KINDS == ("places", "matrix", "flights", "weather", "pois")
    known = {"places": PLACE_PROVIDERS, "matrix": MATRIX_PROVIDERS, "flights": FLIGHT_PROVIDERS,
             "weather": WEATHER_PROVIDERS, "pois": POI_PROVIDERS}
    for kind, c in found.items():
        assert isinstance(c, ProviderChoice) and c.kind == kind
        assert c.names_known == known[kind] == names_known(kind)
        assert c.available == (OFFLINE[kind],) and c.selected == c.default == OFFLINE[kind], c
        assert set(c.needs) == set(c.names_known) - {OFFLINE[kind]}  # every other name says what it needs


@pytest.mark.parametrize(("fields", "kind", "available", "selected"), [
    ({"osrm_url": "http://osrm.test"}, "matrix", ("offline", "osrm"), "osrm"),
    ({"amap_key": "k"}, "matrix", ("offline", "amap"), "amap"),
    ({"osrm_url": "http://osrm.test", "amap_key": "k"}, "matrix", ("offline", "osrm", "amap"), "osrm"),
    ({"osrm_url": "http://osrm.test", "matrix_provider": "offline"}, "matrix", ("offline", "osrm"), "offline"),
    ({"amap_key": "k"}, "places", ("gazetteer", "amap"), "amap"),
    ({"nominatim_url": "http://nominatim.test"}, "places", ("gazetteer", "nominatim"), "nominatim"),
    ({"amap_key": "k", "places_provider": "gazetteer"}, "places", ("gazetteer", "amap"), "gazetteer"),
    ({"duffel_access_token": "t"}, "flights", ("offline", "duffel"), "duffel"),
    ({"weather_online": True}, "weather", ("offline", "open_meteo"), "open_meteo"),
    ({"weather_provider": "open_meteo"}, "weather", ("offline", "open_meteo"), "open_meteo"),  # named: opted in
    ({"weather_online": True, "weather_provider": "offline"}, "weather", ("offline", "open_meteo"), "offline"),
    ({"poi_online": True}, "pois", ("offline", "overpass"), "overpass"),
    ({"poi_online": True, "overpass_url": " "}, "pois", ("offline",), "overpass"),  # no URL: not available
])
def test_keys_urls_and_online_flags_make_providers_available(fields: dict[str, Any], kind: str,
                                                             available: tuple[str, ...], selected: str) -> None:
    s = settings(**fields)
    c = choices(s)[kind]  # type: ignore[index]
    assert (c.available, c.selected) == (available, selected)
    shared = {"places", "matrix"} if "amap_key" in fields else {kind}  # AMAP_KEY serves places and distances
    others = {k: v.selected for k, v in choices(s).items() if k not in shared}
    assert others == {k: v for k, v in OFFLINE.items() if k not in shared}  # the other kinds stay offline


def test_selected_is_the_settings_effective_provider_and_default_falls_back_to_offline() -> None:
    for s in (settings(), settings(osrm_url="http://o.test", amap_key="k", duffel_access_token="t",
                                   weather_online=True, poi_online=True)):
        found = choices(s)
        assert found["places"].selected == s.effective_places_provider
        assert found["matrix"].selected == s.effective_matrix_provider
        assert found["flights"].selected == effective_flights_provider(s)
        assert found["weather"].selected == effective_weather_provider(s)
        assert found["pois"].selected == effective_poi_provider(s)
    named = choice(settings(matrix_provider="osrm"), "matrix")  # named, but OSRM_URL unset
    assert named.selected == "osrm" and named.available == ("offline",)
    assert named.default == "offline"  # what the Route page shows first (as it always did)


def test_require_accepts_the_available_and_refuses_the_rest_as_bad_input() -> None:
    c = choice(settings(amap_key="k"), "matrix")
    assert c.require(None) == c.require("") == c.require("auto") == "amap"
    assert c.require("offline") == "offline" and c.require("amap") == "amap"
    with pytest.raises(InputError) as exc:
        c.require("osrm")
    assert "osrm is not configured: set OSRM_URL" in exc.value.message("en")
    assert "offline, amap" in exc.value.message("en") and "OSRM_URL" in exc.value.message("zh")
    with pytest.raises(InputError) as exc:
        c.require("teleport")
    assert "teleport" in exc.value.message("en")
    with pytest.raises(InputError) as exc:
        choice(settings(), "pois").require("overpass")
    assert "POI_ONLINE=true" in exc.value.message("en")


# --- the bundle -----------------------------------------------------------------------------------------------

def test_make_providers_builds_the_selected_kinds_once() -> None:
    bundle = make_providers(settings())
    assert isinstance(bundle, Providers) and dict(bundle.names) == OFFLINE
    assert isinstance(bundle.places, GazetteerPlaceProvider)
    assert isinstance(bundle.matrix, OfflineMatrixProvider) and bundle.offline_matrix is bundle.matrix
    assert isinstance(bundle.flights, OfflineFlightProvider)
    assert isinstance(bundle.weather, OfflineWeatherProvider)
    assert isinstance(bundle.pois, OfflinePoiProvider)
    assert bundle.places is bundle.places and bundle.pois is bundle.pois  # built once

    online = make_providers(settings(osrm_url="http://127.0.0.1:9", amap_key="k", amap_base_url="http://127.0.0.1:9",
                                     weather_online=True, poi_online=True))  # built, never called
    assert isinstance(online.places, AmapPlaceProvider)
    assert isinstance(online.matrix, OsrmMatrixProvider) and isinstance(online.offline_matrix, OfflineMatrixProvider)
    assert isinstance(online.weather, OpenMeteoWeatherProvider) and isinstance(online.pois, OverpassPoiProvider)
    assert isinstance(make_providers(settings(osrm_url="http://127.0.0.1:9"), matrix="offline").matrix,
                      OfflineMatrixProvider)


def test_with_matrix_shares_the_other_providers() -> None:
    bundle = make_providers(settings(osrm_url="http://127.0.0.1:9"))
    assert bundle.with_matrix(None) is bundle and bundle.with_matrix("osrm") is bundle
    offline = bundle.with_matrix("offline")
    assert offline.names["matrix"] == "offline" and isinstance(offline.matrix, OfflineMatrixProvider)
    assert offline.places is bundle.places and offline.offline_matrix is bundle.offline_matrix
    assert isinstance(bundle.matrix, OsrmMatrixProvider)


def test_a_misconfigured_kind_fails_only_when_it_is_used() -> None:
    """FLIGHTS_PROVIDER=duffel without its token breaks flights, not the route page or the gate."""
    s = settings(flights_provider="duffel", weather_provider="open_meteo", open_meteo_url="")
    bundle = make_providers(s)
    assert isinstance(bundle.places, GazetteerPlaceProvider)
    with pytest.raises(ProviderNotConfigured):
        bundle.flights
    assert isinstance(make_route_deps(s, providers=bundle).matrix, OfflineMatrixProvider)
    context = make_gate_context(s, router=object(), llm=None, providers=bundle)
    assert context.weather is None and context.places is bundle.places  # as before: no forecasts, scene says so


# --- the consumers take their providers from the bundle -------------------------------------------------------

def test_the_consumers_take_the_bundles_providers() -> None:
    s = settings(osrm_url="http://127.0.0.1:9")
    bundle = make_providers(s)
    route = make_route_deps(s, providers=bundle)
    assert route.places is bundle.places and route.matrix is bundle.matrix
    assert route.offline_matrix is bundle.offline_matrix
    overridden = make_route_deps(s, matrix_name="offline", providers=bundle)  # the page's selectbox, --provider
    assert isinstance(overridden.matrix, OfflineMatrixProvider) and overridden.places is bundle.places
    planner = make_planner_deps(s, providers=bundle)
    assert (planner.places, planner.flights, planner.weather, planner.pois) == (
        bundle.places, bundle.flights, bundle.weather, bundle.pois)
    context = make_gate_context(s, router=object(), llm=None, providers=bundle)
    assert context.places is bundle.places and context.weather is bundle.weather
    assert ClarifyAgent(s, providers=bundle).places is bundle.places
    from navigo_core.chat import ChatService

    chat = ChatService(None, s, providers=bundle)
    assert chat.providers is bundle and chat.agent.places is bundle.places


# --- the command line -----------------------------------------------------------------------------------------

def _provider_action() -> Any:
    parser = cli._build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    route = sub.choices["route"]  # type: ignore[index]
    return next(a for a in route._actions if a.dest == "provider")


def test_cli_provider_choices_are_the_known_matrix_names() -> None:
    assert tuple(_provider_action().choices) == names_known("matrix") == MATRIX_PROVIDERS


ROUTE = ["route", "--origin", "Shanghai", "--destination", "Hangzhou", "--stop", "Suzhou", "--lang", "en"]


@pytest.mark.parametrize(("name", "setting"), [("osrm", "OSRM_URL"), ("amap", "AMAP_KEY")])
def test_cli_refuses_an_unconfigured_provider_with_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str],
                                                          name: str, setting: str) -> None:
    monkeypatch.setattr(cli, "get_settings", lambda **kw: settings(**kw))  # never the machine's environment
    assert cli.main([*ROUTE, "--provider", name]) == cli.EXIT_INPUT == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert f"{name} is not configured: set {setting}" in captured.err


def test_cli_uses_a_configured_provider(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                        fake_osrm: FakeOsrm) -> None:
    monkeypatch.setattr(cli, "get_settings", lambda **kw: settings(osrm_url=fake_osrm.url, **kw))
    assert cli.main([*ROUTE, "--stop", "Jiaxing", "--provider", "osrm"]) == 0, capsys.readouterr().err
    assert "provider=osrm" in capsys.readouterr().out
    assert cli.main([*ROUTE, "--stop", "Jiaxing", "--provider", "offline"]) == 0
    assert "provider=offline" in capsys.readouterr().out


# --- no one else selects a provider ---------------------------------------------------------------------------

FACTORIES = frozenset({"make_place_provider", "make_matrix_provider", "make_flight_provider",
                       "make_weather_provider", "make_poi_provider"})
# where a factory may be named: the selection module, and each kind's package, which defines its factory
FACTORY_HOMES = frozenset({"navigo_core/providers/selection.py", *(
    f"navigo_core/providers/{kind}/__init__.py" for kind in ("places", "matrix", "flights", "weather", "pois"))})


def _factory_uses(root: Path) -> list[tuple[str, int, str]]:
    """Every call of, reference to or import of a ``make_*_provider`` factory in navigo_core/, ui/, app_pages/
    (file, line, name), outside the files allowed to name one."""
    found: list[tuple[str, int, str]] = []
    for package in ("navigo_core", "ui", "app_pages"):
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in FACTORY_HOMES:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
                names = [node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(
                    node, ast.Attribute) else [a.name for a in node.names] if isinstance(
                    node, (ast.Import, ast.ImportFrom)) else []
                found += [(rel, getattr(node, "lineno", 0), n) for n in names if n.rsplit(".", 1)[-1] in FACTORIES]
    return found


def test_only_the_selection_module_calls_the_provider_factories() -> None:
    """The route service, the planner, the gate, the clarify agent, the pages and the composition roots take their
    providers from a Providers bundle; none builds one from the settings itself."""
    assert _factory_uses(ROOT) == []


def test_the_factory_scan_catches_a_consumer_building_its_own(tmp_path: Path) -> None:
    only_sources = shutil.ignore_patterns("__pycache__", "data", "*.yaml", "*.json", "*.md", "*.npz", "*.mako")
    for package in ("navigo_core", "ui", "app_pages"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=only_sources)
    (tmp_path / "navigo_core" / "route" / "_probe.py").write_text(
        "from navigo_core.providers import matrix\n\n\ndef deps(settings):\n"
        "    return matrix.make_matrix_provider(settings)\n", encoding="utf-8")
    (tmp_path / "app_pages" / "_probe.py").write_text(
        "from navigo_core.providers.weather import make_weather_provider\n", encoding="utf-8")
    assert sorted(_factory_uses(tmp_path)) == [("app_pages/_probe.py", 1, "make_weather_provider"),
                                               ("navigo_core/route/_probe.py", 5, "make_matrix_provider")]

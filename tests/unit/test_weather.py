"""Weather: Open-Meteo against a fake server (parsing, risk levels, horizon), offline, errors, the factory."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from navigo_core.config import Settings
from navigo_core.errors import InputError, ProviderError, ProviderHTTPError, ProviderNotConfigured, ProviderTimeout
from navigo_core.i18n import t
from navigo_core.providers.weather import (
    HORIZON_DAYS,
    OfflineWeatherProvider,
    OpenMeteoWeatherProvider,
    WeatherProvider,
    effective_weather_provider,
    make_weather_provider,
    risk_of,
    summary_key,
)
from tests.fakes.open_meteo import FakeOpenMeteo

pytestmark = pytest.mark.usefixtures("no_internet")

TODAY = date(2025, 5, 1)
LAT, LON = 30.2741, 120.1551  # Hangzhou


def om(fake: FakeOpenMeteo, timeout_s: float = 2.0) -> OpenMeteoWeatherProvider:
    return OpenMeteoWeatherProvider(fake.url, timeout_s=timeout_s)


def day(code: int | None, tmax: float | None = 25.0, tmin: float | None = 15.0, prob: int | None = 0) -> dict:
    return {"weather_code": code, "temperature_2m_max": tmax, "temperature_2m_min": tmin,
            "precipitation_probability_max": prob}


def test_open_meteo_request_and_parsing(fake_open_meteo: FakeOpenMeteo) -> None:
    fake_open_meteo.today = TODAY
    fake_open_meteo.days = {TODAY: day(0, 26.5, 14.0, 5), TODAY + timedelta(days=1): day(95, 22.0, 18.0, 80)}
    out = om(fake_open_meteo).forecast(LAT, LON, TODAY, TODAY + timedelta(days=2), today=TODAY)
    assert [d.date for d in out] == [TODAY + timedelta(days=i) for i in range(3)]
    (req,) = fake_open_meteo.requests
    assert req.path == "/v1/forecast"
    assert req.params == {
        "latitude": "30.2741", "longitude": "120.1551", "timezone": "auto",
        "daily": "weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max",
        "start_date": "2025-05-01", "end_date": "2025-05-03",
    }
    first, storm, default = out
    assert (first.weather_code, first.temp_max_c, first.temp_min_c, first.precipitation_probability) == (0, 26.5, 14.0, 5)
    assert first.available and not first.estimated and first.provider == "open_meteo"
    assert first.summary == "weather.code.clear" and t(first.summary, "zh") == "晴"
    assert first.risk == "LOW"
    assert storm.risk == "HIGH" and storm.summary == "weather.code.thunderstorm"
    assert default.weather_code == 1 and default.available  # the fake's default day


@pytest.mark.parametrize(("code", "prob", "risk"), [
    (1, 0, "LOW"), (1, None, "LOW"), (1, 39, "LOW"), (1, 40, "MEDIUM"), (3, 69, "MEDIUM"), (3, 70, "HIGH"),
    (95, 0, "HIGH"), (96, None, "HIGH"), (99, 10, "HIGH"), (65, 10, "HIGH"), (67, 10, "HIGH"),
    (66, 10, "HIGH"), (82, 10, "HIGH"), (75, 10, "HIGH"), (86, 10, "HIGH"),
    (63, 10, "MEDIUM"), (45, 0, "MEDIUM"), (61, 10, "LOW"), (None, None, "LOW"),
])
def test_risk_levels(code: int | None, prob: int | None, risk: str) -> None:
    assert risk_of(code, prob) == risk


def test_risk_thresholds_through_the_fake(fake_open_meteo: FakeOpenMeteo) -> None:
    probs = [39, 40, 69, 70]
    fake_open_meteo.days = {TODAY + timedelta(days=i): day(2, prob=p) for i, p in enumerate(probs)}
    fake_open_meteo.days[TODAY + timedelta(days=4)] = day(65, prob=None)
    out = om(fake_open_meteo).forecast(LAT, LON, TODAY, TODAY + timedelta(days=4), today=TODAY)
    assert [d.risk for d in out] == ["LOW", "MEDIUM", "MEDIUM", "HIGH", "HIGH"]
    assert out[4].precipitation_probability is None and out[4].summary == "weather.code.heavy_rain"


def test_beyond_horizon_and_past_days_are_not_requested(fake_open_meteo: FakeOpenMeteo) -> None:
    fake_open_meteo.today = TODAY  # the fake rejects dates outside the horizon, like Open-Meteo
    start, end = TODAY - timedelta(days=2), TODAY + timedelta(days=HORIZON_DAYS + 3)
    out = om(fake_open_meteo).forecast(LAT, LON, start, end, today=TODAY)
    assert len(out) == (end - start).days + 1
    (req,) = fake_open_meteo.requests
    assert req.params["start_date"] == "2025-05-01" and req.params["end_date"] == "2025-05-16"
    available = [d.date for d in out if d.available]
    assert available[0] == TODAY and available[-1] == TODAY + timedelta(days=15) and len(available) == 16
    for d in out:
        if not d.available:
            assert d.summary == "weather.no_forecast" and d.risk == "LOW"
            assert d.temp_max_c is None and d.weather_code is None and d.precipitation_probability is None
    assert t("weather.no_forecast") == "no forecast available"


def test_range_entirely_outside_the_horizon_sends_no_request(fake_open_meteo: FakeOpenMeteo) -> None:
    far = TODAY + timedelta(days=40)
    out = om(fake_open_meteo).forecast(LAT, LON, far, far + timedelta(days=6), today=TODAY)
    assert len(out) == 7 and not any(d.available for d in out)
    past = om(fake_open_meteo).forecast(LAT, LON, TODAY - timedelta(days=5), TODAY - timedelta(days=1), today=TODAY)
    assert len(past) == 5 and not any(d.available for d in past)
    assert fake_open_meteo.requests == []


def test_null_values_are_kept_as_none(fake_open_meteo: FakeOpenMeteo) -> None:
    fake_open_meteo.days = {TODAY: day(3, None, 10.0, None), TODAY + timedelta(days=1): day(None, None, None, None)}
    a, b = om(fake_open_meteo).forecast(LAT, LON, TODAY, TODAY + timedelta(days=1), today=TODAY)
    assert a.available and a.temp_max_c is None and a.temp_min_c == 10.0 and a.precipitation_probability is None
    assert not b.available  # an all-null day is not invented


def test_offline_weather_is_unavailable_and_invents_nothing() -> None:
    out = OfflineWeatherProvider().forecast(LAT, LON, TODAY, TODAY + timedelta(days=3), today=TODAY)
    assert len(out) == 4
    for d in out:
        assert not d.available and d.provider == "offline" and d.risk == "LOW" and d.summary == "weather.offline"
        assert d.weather_code is None and d.temp_min_c is None and d.temp_max_c is None
    assert t("weather.offline") == "no forecast: offline" and t("weather.offline", "zh")


def test_bad_ranges() -> None:
    with pytest.raises(InputError) as exc:
        OfflineWeatherProvider().forecast(LAT, LON, TODAY, TODAY - timedelta(days=1), today=TODAY)
    assert exc.value.code == "weather.bad_range"
    with pytest.raises(InputError):
        OfflineWeatherProvider().forecast(LAT, LON, TODAY, TODAY + timedelta(days=400), today=TODAY)


def test_open_meteo_timeout(fake_open_meteo: FakeOpenMeteo) -> None:
    fake_open_meteo.set_fault(hang=True)
    with pytest.raises(ProviderTimeout) as exc:
        om(fake_open_meteo, timeout_s=0.2).forecast(LAT, LON, TODAY, TODAY, today=TODAY)
    assert "Open-Meteo" in exc.value.message("en") and "0.2" in exc.value.message("en")


def test_open_meteo_http_errors(fake_open_meteo: FakeOpenMeteo) -> None:
    with pytest.raises(ProviderHTTPError) as exc:
        om(fake_open_meteo).forecast(95.0, LON, TODAY, TODAY, today=TODAY)  # the fake checks, as Open-Meteo does
    assert "400" in exc.value.message("en") and "Latitude must be in range" in exc.value.message("en")
    fake_open_meteo.set_fault(status=502)
    with pytest.raises(ProviderHTTPError) as exc:
        om(fake_open_meteo).forecast(LAT, LON, TODAY, TODAY, today=TODAY)
    assert "502" in exc.value.message("en") and "injected fault" in exc.value.message("en")
    fake_open_meteo.set_fault(malformed_json=True)
    with pytest.raises(ProviderError) as exc2:
        om(fake_open_meteo).forecast(LAT, LON, TODAY, TODAY, today=TODAY)
    assert exc2.value.code == "provider.bad_json"


def test_summary_keys_exist_in_catalog() -> None:
    from navigo_core.i18n import catalog
    from navigo_core.providers.weather.open_meteo import CODE_SUMMARY

    for key in {*CODE_SUMMARY.values(), summary_key(None), summary_key(12345)}:
        assert key in catalog(), key


def test_factory_auto_never_online_by_default(fake_open_meteo: FakeOpenMeteo) -> None:
    s = Settings(weather_provider="auto", weather_online=False)
    assert effective_weather_provider(s) == "offline"
    assert isinstance(make_weather_provider(s), OfflineWeatherProvider)
    s = Settings(weather_provider="auto", weather_online=True, open_meteo_url=fake_open_meteo.url + "/")
    p = make_weather_provider(s)
    assert isinstance(p, OpenMeteoWeatherProvider) and isinstance(p, WeatherProvider)
    assert p.forecast(LAT, LON, TODAY, TODAY, today=TODAY)[0].available
    assert isinstance(make_weather_provider(Settings(weather_provider="open_meteo", weather_online=False)),
                      OpenMeteoWeatherProvider)
    assert isinstance(make_weather_provider(s, name="offline"), OfflineWeatherProvider)
    with pytest.raises(ProviderNotConfigured):
        make_weather_provider(s, name="darksky")
    assert Settings().weather_online is False  # the default never calls the internet

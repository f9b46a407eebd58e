"""The Route page in real Chromium, with every non-local request blocked (no internet)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app

pytestmark = pytest.mark.e2e


def test_route_page_optimises_and_draws_the_map_offline(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/route")
    wait_for_app(page)

    page.get_by_label("Origin place").fill("上海")
    page.get_by_label("Destination").fill("杭州")
    page.get_by_label("Destination").press("Enter")
    wait_for_app(page)

    page.locator(".st-key-route_paste_box").get_by_text("Paste several stops").click()
    page.get_by_label("One stop per line").fill("嘉兴\n苏州\n无锡")
    page.locator(".st-key-route_paste_box").get_by_label("One stop per line").blur()
    wait_for_app(page)
    page.get_by_role("button", name="Add to the table").click()
    wait_for_app(page)
    # the stops reached the table when the box is emptied (the grid is a canvas: its text is not in the page)
    expect(page.get_by_label("One stop per line")).to_have_value("", timeout=60_000)

    page.get_by_role("button", name="Optimise route").click()
    wait_for_app(page)

    # the ordered table of legs and the result summary
    legs = page.locator(".st-key-route_legs_box [data-testid='stDataFrame']")
    expect(legs).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Proven optimal", exact=True)).to_be_visible()
    expect(page.get_by_text("Total distance", exact=True)).to_be_visible()

    # a Leaflet map inside the st_folium iframe: one marker per point and the route line
    frame = page.frame_locator(".st-key-route_map_box iframe").first
    expect(frame.locator(".leaflet-container")).to_be_visible(timeout=30_000)
    expect(frame.locator(".leaflet-marker-icon")).to_have_count(5, timeout=30_000)
    expect(frame.locator("path.leaflet-interactive").first).to_be_attached()
    # the offline basemap drew country outlines (no tiles needed)
    expect(frame.locator(".leaflet-tile")).to_have_count(0)

    # deep links: one whole-route link per service that takes the route in one (AMap inside China only),
    # the parts and the per-leg links folded under an expander
    for name in ("AMap (app)", "Google Maps"):
        expect(page.locator(".st-key-route_links").get_by_role("link", name=name)).to_be_visible()
    google = page.locator(".st-key-route_links").get_by_role("link", name="Google Maps").get_attribute("href") or ""
    assert google.startswith("https://www.google.com/maps/dir/?api=1")
    more = page.locator(".st-key-route_links_more")
    more.get_by_text("Links per leg and in parts").click()
    expect(more.get_by_text("AMap (web): the route in 2 parts")).to_be_visible()  # one via per AMap web link
    expect(more.get_by_role("link", name="Part 1/2")).to_be_visible()
    expect(more.locator("[data-testid='stDataFrame']")).to_be_visible()  # one row of links per leg

    # no exception box, and nothing was fetched from outside this machine
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_route_page_shows_guardrail_message(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/route")
    wait_for_app(page)
    page.get_by_label("Origin place").fill("上海")
    page.get_by_label("Destination").fill("杭州")
    page.get_by_label("Destination").press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Optimise route").click()
    wait_for_app(page)
    expect(page.get_by_text("There are no stops.")).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def test_language_switch_keeps_what_the_user_typed(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/route")
    wait_for_app(page)
    page.get_by_label("Origin place").fill("上海")
    page.get_by_label("Origin place").press("Enter")
    wait_for_app(page)
    page.locator(".st-key-lang_choice").click()
    page.get_by_role("option", name="中文").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="路线：多个途经点的最佳顺序")).to_be_visible()
    expect(page.get_by_label("起点地点")).to_have_value("上海")
    # the translated radio still shows its selection
    expect(page.get_by_role("radio", name="固定地点")).to_be_checked()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)

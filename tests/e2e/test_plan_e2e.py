"""The Plan page in real Chromium: run a plan, see every section, download the three exports."""

from __future__ import annotations

import json

import pytest
from icalendar import Calendar
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app

pytestmark = pytest.mark.e2e

REQUEST = "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking"


def test_plan_page_runs_a_plan_and_exports(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/plan")
    wait_for_app(page)
    page.get_by_label("Your trip").fill(REQUEST)
    page.get_by_role("button", name="Plan it").click()
    wait_for_app(page)

    expect(page.get_by_role("heading", name="Summary")).to_be_visible(timeout=60_000)
    for section in ("Destination candidates", "Flights", "Itinerary", "Budget", "Packing list",
                    "Safety and validation", "Decision log"):
        expect(page.get_by_text(section, exact=True).first).to_be_visible()
    expect(page.get_by_text("Day 1", exact=False).first).to_be_visible()
    expect(page.locator(".st-key-plan_cur_log [data-testid='stDataFrame']")).to_be_visible()
    expect(page.locator(".st-key-plan_cur_budget_chart [data-testid='stVegaLiteChart']")).to_be_visible()

    downloads = {}
    for label in ("Download Markdown", "Download JSON", "Download calendar (ICS)"):
        with page.expect_download() as info:
            page.get_by_role("button", name=label).click()
        downloads[label] = info.value.path().read_bytes()
    assert downloads["Download Markdown"].decode().startswith("#")
    state = json.loads(downloads["Download JSON"])
    assert state["status"] == "done" and len(state["itinerary"]) == 5
    cal = Calendar.from_ical(downloads["Download calendar (ICS)"])
    assert len([c for c in cal.walk("VEVENT")]) >= 5

    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external

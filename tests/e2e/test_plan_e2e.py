"""The Plan page in real Chromium: run a plan, see every section, download the three exports."""

from __future__ import annotations

import json

import pytest
from icalendar import Calendar
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, download, wait_for_app

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
        downloads[label] = download(page, label)
    assert downloads["Download Markdown"].decode().startswith("#")
    state = json.loads(downloads["Download JSON"])
    assert state["status"] == "done" and len(state["itinerary"]) == 5
    cal = Calendar.from_ical(downloads["Download calendar (ICS)"])
    assert len([c for c in cal.walk("VEVENT")]) >= 5

    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def _plan(page, app_server: AppServer, text: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(app_server.url + "/plan")
    wait_for_app(page)
    page.get_by_label("Your trip").fill(text)
    page.get_by_role("button", name="Plan it").click()
    wait_for_app(page)


def test_named_destination_is_planned_not_substituted(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    _plan(page, app_server, "From Berlin to Rome, June 10 to June 14, 2 adults, budget 3000 EUR")
    expect(page.get_by_role("heading", name="Summary")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Italy").first).to_be_visible()
    expect(page.get_by_text("Rome").first).to_be_visible()
    expect(page.get_by_text("Interlaken")).to_have_count(0)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_ambiguous_destination_is_a_question_with_quick_replies(app_server: AppServer,
                                                                offline_page: OfflinePage) -> None:
    page = offline_page.page
    _plan(page, app_server, "From Paris to Springfield")
    expect(page.get_by_text("A few details are missing")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("matches several places")).to_be_visible()
    expect(page.get_by_role("heading", name="Summary")).to_have_count(0)
    pick = page.get_by_role("button", name="Springfield, Illinois, United States")
    pick.click()
    expect(pick).to_have_count(0, timeout=60_000)  # the question is answered: its quick replies are gone
    wait_for_app(page)
    expect(page.get_by_text("matches several places")).to_have_count(0)
    expect(page.get_by_text("When would you like to travel to Springfield")).to_be_visible()
    page.get_by_label("Your answer").fill("June 10 to June 14, 2 adults, budget 3000 USD")
    page.get_by_role("button", name="Continue planning").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Summary")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Illinois").first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external

"""Every page renders in real Chromium with no error box, offline."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app

pytestmark = pytest.mark.e2e

PAGES = [("/", "Roundtable chat"), ("/plan", "Plan a trip"), ("/route", "Route: best order of many stops"),
         ("/approvals?user=carol", None), ("/reimbursement", None), ("/router-lab", "Router lab")]


@pytest.mark.parametrize(("path", "heading"), PAGES)
def test_page_renders_without_errors(app_server: AppServer, offline_page: OfflinePage, path: str,
                                     heading: str | None) -> None:
    page = offline_page.page
    page.goto(app_server.url + path)
    wait_for_app(page)
    if heading:
        expect(page.get_by_role("heading", name=heading)).to_be_visible()
    expect(page.locator("h1").first).to_be_visible()
    expect(page.get_by_text("Page not found")).to_have_count(0)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external

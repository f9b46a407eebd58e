"""The Router lab in real Chromium: one message, an uploaded file, the traffic charts."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app

pytestmark = pytest.mark.e2e


def test_router_lab_single_message_upload_and_charts(app_server: AppServer, offline_page: OfflinePage,
                                                     tmp_path: Path) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/router-lab")
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Router lab")).to_be_visible()

    page.get_by_label("Message", exact=True).fill("帮我订一张明天去北京的机票")
    page.get_by_role("button", name="Route it").click()
    wait_for_app(page)
    expect(page.locator(".st-key-lab_layers_box [data-testid='stDataFrame']")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("flight_search").first).to_be_visible()

    upload = tmp_path / "messages.csv"
    upload.write_text("text,intent\nhi,greeting\n报销政策是什么,policy_query\nbook a hotel in Paris,hotel_search\n",
                      encoding="utf-8")
    page.locator(".st-key-lab_upload input[type='file']").set_input_files(str(upload))
    wait_for_app(page)
    expect(page.get_by_text("Batch results (3 messages)")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Accuracy against the labels")).to_be_visible()
    expect(page.locator(".st-key-lab_batch_box [data-testid='stDataFrame']")).to_be_visible()

    # aggregate charts from stored events (vega charts render as canvas/svg)
    expect(page.locator(".st-key-lab_chart_layers [data-testid='stVegaLiteChart']")).to_be_visible(timeout=30_000)
    expect(page.locator(".st-key-lab_chart_intents [data-testid='stVegaLiteChart']")).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external

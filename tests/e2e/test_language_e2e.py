"""The language the user chose holds across the chat's hand-offs and a browser refresh."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app
from tests.e2e.test_chat_e2e import send

pytestmark = pytest.mark.e2e


def choose_chinese(page: Page) -> None:
    page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first.click()  # the language; then the demo user
    page.get_by_role("option", name="中文").click()
    wait_for_app(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("语言")


def still_chinese(page: Page, title: str) -> None:
    expect(page.get_by_role("heading", name=title)).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("语言")
    page.reload()
    wait_for_app(page)
    expect(page.get_by_role("heading", name=title)).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("语言")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def test_chinese_survives_the_hand_off_to_plan_and_a_refresh(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    choose_chinese(page)
    send(page, "帮我规划一次旅行")
    start = page.get_by_role("button", name="开始规划")
    for answer in ["从上海去杭州", "5月1日到5日", "两个大人", "预算6000元"]:
        if start.count():
            break
        send(page, answer)
    expect(start).to_be_visible(timeout=30_000)
    start.click()
    wait_for_app(page)
    still_chinese(page, "规划行程")
    assert offline_page.external == [], offline_page.external


def test_chinese_survives_the_hand_off_to_route_and_a_refresh(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    choose_chinese(page)
    send(page, "规划一条从上海出发经过苏州到杭州的路线")
    button = page.get_by_role("button", name="在路线页打开")
    expect(button).to_be_visible(timeout=30_000)
    button.click()
    wait_for_app(page)
    still_chinese(page, "路线：多个途经点的最佳顺序")
    assert offline_page.external == [], offline_page.external

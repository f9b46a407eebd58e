"""The business-travel flow end to end, offline, in real Chromium: ask the hotel cap → plan a
trip → file an application → approve it as approver → query its status → claim expenses with
one excess flagged."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app
from tests.e2e.test_chat_e2e import send

pytestmark = pytest.mark.e2e

CLAIM = """date,city,category,amount,currency,note,receipt
2027-05-10,北京,hotel,900,CNY,night 1,yes
2027-05-10,北京,meal,80,CNY,lunch,yes
2027-05-11,北京,taxi,45,CNY,client visit,no
"""


def last_reply(page):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("stChatMessage").last


def test_policy_plan_apply_approve_query_claim(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page

    # 1. ask the hotel cap (the grade is asked once)
    page.goto(app_server.url + "/")
    wait_for_app(page)
    send(page, "上海住宿标准是多少")
    expect(last_reply(page)).to_contain_text("职级")
    send(page, "G2")
    expect(last_reply(page)).to_contain_text("600")
    expect(last_reply(page)).to_contain_text("HOTEL-1")

    # 2. plan a trip
    page.goto(app_server.url + "/plan")
    wait_for_app(page)
    page.get_by_label("Your trip").fill("From Shanghai to Beijing, May 10 to May 12, 1 adult, budget 8000 CNY")
    page.get_by_role("button", name="Plan it").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Summary")).to_be_visible(timeout=60_000)

    # 3. file an application in the chat and submit it
    page.goto(app_server.url + "/")
    wait_for_app(page)
    page.get_by_role("button", name="New conversation").click()
    wait_for_app(page)
    send(page, "申请5月10日到12日去北京出差，拜访客户")
    expect(last_reply(page)).to_contain_text("TA-")
    number = re.search(r"TA-\d{4}-\d{4}", last_reply(page).inner_text()).group(0)  # type: ignore[union-attr]
    expect(last_reply(page)).to_contain_text("待补充：出发地、预计费用")  # incomplete: never "符合差旅标准"
    send(page, "提交")  # refused until the missing fields are given
    expect(last_reply(page)).to_contain_text("信息不完整，未提交")
    send(page, "从上海出发，预算5000元")
    expect(last_reply(page)).to_contain_text("已补充")
    send(page, "提交")
    expect(last_reply(page)).to_contain_text("已提交")

    # 4. approve it as the approver (demo mode: carol approves alice's department; a new page load is a new session)
    page.goto(app_server.url + "/approvals?user=carol")
    wait_for_app(page)
    box = page.locator(f".st-key-approval_{number}")
    expect(box).to_be_visible(timeout=30_000)
    box.get_by_role("textbox").fill("Client visit approved")
    box.get_by_role("button", name=re.compile("Approve")).click()
    wait_for_app(page)
    expect(page.locator(f".st-key-approval_{number}")).to_have_count(0)

    # 5. query its status in the chat
    page.goto(app_server.url + "/")
    wait_for_app(page)
    page.get_by_role("button", name="New conversation").click()
    wait_for_app(page)
    send(page, "我的北京出差审批到哪了")
    expect(last_reply(page)).to_contain_text(number)
    expect(last_reply(page)).to_contain_text("已批准")

    # 6. claim expenses: one item over the hotel cap is flagged
    page.goto(app_server.url + "/reimbursement")
    wait_for_app(page)
    page.locator(".st-key-reimb_paste textarea").fill(CLAIM)
    page.locator(".st-key-reimb_paste textarea").blur()
    wait_for_app(page)
    page.locator(".st-key-reimb_paste_add button").click()
    wait_for_app(page)
    page.locator(".st-key-reimb_check button").click()
    wait_for_app(page)
    items = page.locator(".st-key-reimb_items_box")
    expect(items).to_be_visible(timeout=30_000)
    expect(items).to_contain_text("Hotel room rate")  # the rule that was broken
    expect(items).to_contain_text("+400 CNY")  # 900 against the 500 cap (tier-1, lowest grade)
    summary = page.locator(".st-key-reimb_summary_box")
    expect(summary).to_contain_text("over by 400.00 CNY")
    assert summary.inner_text().count("over by") == 1  # exactly one excess
    history = page.locator(".st-key-reimb_history_box")
    history.locator("summary").click()
    expect(history).to_contain_text("No claim saved yet.")
    page.locator(".st-key-reimb_save button").click()
    wait_for_app(page)
    expect(page.get_by_text("Claim saved (")).to_be_visible()
    history = page.locator(".st-key-reimb_history_box")
    if not history.locator("[data-testid='stDataFrame']").is_visible():
        history.locator("summary").click()
    expect(history.locator("[data-testid='stDataFrame']")).to_be_visible()  # the claim just saved, listed
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external

"""The Chat page in real Chromium: scenes, refresh persistence, a clean new conversation,
and the hand-off to the Plan page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import AppServer, OfflinePage, wait_for_app

pytestmark = pytest.mark.e2e


def send(page: Page, text: str) -> None:
    """Send one message and wait until its reply is on the page (user + assistant messages)."""
    messages = page.get_by_test_id("stChatMessage")
    before = messages.count()
    box = page.get_by_test_id("stChatInputTextArea")
    expect(box).to_be_enabled(timeout=30_000)
    box.fill(text)
    box.press("Enter")
    expect(messages).to_have_count(before + 2, timeout=30_000)
    # the input is disabled while the reply is processed and enabled again by the redraw that
    # follows: waiting for it means the next message cannot land in the middle of that redraw
    expect(box).to_be_enabled(timeout=30_000)
    wait_for_app(page)


def open_chat(app_server: AppServer, offline_page: OfflinePage) -> Page:
    """The Chat page, loaded (its script has finished running)."""
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    return page


def captions(page: Page):  # type: ignore[no-untyped-def]
    return page.locator("[data-testid='stChatMessage'] [data-testid='stCaptionContainer']")


@pytest.mark.parametrize(("message", "scene"), [
    ("hello", "greeting"),
    ("can you help me fix my python code", "off_topic"),
    ("what's the weather in Paris tomorrow", "weather"),
    ("plan a route from Shanghai to Hangzhou via Suzhou and Jiaxing", "route_planning"),
])
def test_messages_reach_their_scenes(app_server: AppServer, offline_page: OfflinePage, message: str,
                                     scene: str) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    send(page, message)
    expect(captions(page).last).to_contain_text(f"scene {scene}", timeout=30_000)
    if scene == "route_planning":
        page.get_by_role("button", name="Open in Route").click()
        wait_for_app(page)
        expect(page.get_by_label("Origin place")).to_have_value("Shanghai", timeout=30_000)
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_refresh_keeps_the_conversation_and_new_is_clean(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = open_chat(app_server, offline_page)
    send(page, "hello there")
    messages = page.get_by_test_id("stChatMessage")
    expect(messages).to_have_count(2, timeout=30_000)
    assert "thread=" in page.url

    page.reload()
    wait_for_app(page)
    expect(messages).to_have_count(2, timeout=30_000)
    expect(messages.first).to_contain_text("hello there")

    page.get_by_role("button", name="New conversation").click()
    wait_for_app(page)
    expect(messages).to_have_count(0)
    expect(page.get_by_role("button", name="hello there")).to_be_visible()  # the old thread, in the history


def test_trip_clarification_hands_off_to_the_plan_page(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    send(page, "帮我规划一次出差")
    start = page.get_by_role("button", name="Start planning")
    for answer in ["从上海去杭州", "5月1日到5日", "两个大人", "预算6000元"]:
        if start.count():
            break
        send(page, answer)
    expect(start).to_be_visible(timeout=30_000)
    start.click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Summary")).to_be_visible(timeout=60_000)
    expect(page.get_by_label("Your trip")).to_have_value(re.compile("杭州"))  # pre-filled from the summary
    expect(page.get_by_text("Day 5", exact=False).first).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_ambiguous_destination_quick_replies_in_the_chat(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = open_chat(app_server, offline_page)
    send(page, "I want to plan a trip to Springfield")
    messages = page.get_by_test_id("stChatMessage")
    expect(messages.last).to_contain_text("matches several places")
    pick = page.get_by_role("button", name="Springfield, Illinois, United States")
    expect(pick).to_be_visible()
    before = messages.count()
    pick.click()
    expect(messages).to_have_count(before + 2, timeout=30_000)  # the pick is sent as the user's answer
    wait_for_app(page)
    expect(messages.nth(before)).to_contain_text("Springfield, Illinois, United States")
    expect(messages.last).to_contain_text("When would you like to travel to Springfield")
    expect(messages.last).not_to_contain_text("matches several places")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


@pytest.mark.parametrize("message", ["I want to go to Kyoto in April", "我想五一去成都玩"])
def test_a_trip_request_without_a_planning_verb_starts_the_trip_dialogue(
        app_server: AppServer, offline_page: OfflinePage, message: str) -> None:
    page = open_chat(app_server, offline_page)
    send(page, message)
    expect(captions(page).last).to_contain_text("scene trip_planning", timeout=30_000)
    expect(captions(page).last).to_contain_text("Routed by a routing rule")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def test_a_route_request_inside_the_trip_dialogue_switches_and_says_so(
        app_server: AppServer, offline_page: OfflinePage) -> None:
    page = open_chat(app_server, offline_page)
    send(page, "I want to go to Kyoto in April")
    expect(captions(page).last).to_contain_text("scene trip_planning", timeout=30_000)
    send(page, "plan a route from Shanghai to Hangzhou via Suzhou")
    expect(captions(page).last).to_contain_text("scene route_planning", timeout=30_000)
    last = page.get_by_test_id("stChatMessage").last
    expect(last).to_contain_text("I left trip planning for route planning")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def test_a_policy_question_inside_a_chinese_trip_dialogue_switches_and_says_so(
        app_server: AppServer, offline_page: OfflinePage) -> None:
    page = open_chat(app_server, offline_page)
    send(page, "五一去成都玩三天")
    expect(captions(page).last).to_contain_text("scene trip_planning", timeout=30_000)
    send(page, "酒店住宿标准是多少")
    expect(captions(page).last).to_contain_text("scene policy_query", timeout=30_000)
    expect(page.get_by_test_id("stChatMessage").last).to_contain_text("已离开行程规划")
    expect(page.locator("[data-testid='stException']")).to_have_count(0)

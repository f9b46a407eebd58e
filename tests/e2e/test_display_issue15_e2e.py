"""Issue 15, display, in real Chromium at 1400 px: the Plan page's budget amounts are shown in full (also
beside the previous version after Refine), and the chat's clarification questions are one per line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import AppServer, OfflinePage, download, wait_for_app
from tests.e2e.test_chat_e2e import send

pytestmark = pytest.mark.e2e

REQUEST = "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking"

_MEASURE = """(box) => {
  const wrap = box.firstElementChild;
  const b = box.getBoundingClientRect();
  const heads = [...box.querySelectorAll('thead th')].map(th => th.innerText.trim());
  const cells = [...box.querySelectorAll('tbody tr')].map(tr => {
    const td = tr.children[heads.indexOf('Amount')];
    const r = td.getBoundingClientRect();
    const text = document.createRange();
    text.selectNodeContents(td.querySelector('p'));
    const lines = new Set([...text.getClientRects()].map(x => Math.round(x.top))).size;
    return {text: td.innerText.trim(), scroll: td.scrollWidth, client: td.clientWidth, left: r.left, right: r.right,
            lines};
  });
  return {heads, cells, left: b.left, right: b.right, viewport: window.innerWidth,
          overflow: Math.max(box.scrollWidth - box.clientWidth, wrap.scrollWidth - wrap.clientWidth)};
}"""


def plan(page: Page, app_server: AppServer, text: str) -> dict[str, Any]:
    """Run ``text`` on the Plan page; the plan's JSON export (the amounts the table must show)."""
    page.get_by_label("Your trip").fill(text)
    page.get_by_role("button", name="Plan it").click()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Summary").first).to_be_visible(timeout=60_000)
    return json.loads(download(page, "Download JSON"))


def assert_amounts_fully_visible(page: Page, key: str, lines: list[dict[str, Any]] | None = None) -> None:
    box = page.locator(f".st-key-{key}_budget_table [data-testid='stTable']")
    expect(box).to_be_visible(timeout=30_000)  # a table whose cells are text, not a canvas grid
    box.scroll_into_view_if_needed()
    m = box.evaluate(_MEASURE)
    assert "Amount" in m["heads"], m["heads"]
    assert m["overflow"] <= 0, m  # nothing scrolled out of the table's box
    assert m["right"] <= m["viewport"], m
    for cell in m["cells"]:
        assert cell["scroll"] <= cell["client"], cell  # the number is not cut off in its cell
        assert m["left"] <= cell["left"] and cell["right"] <= m["right"] + 0.5, (cell, m)  # and inside the table
        assert cell["lines"] == 1, cell  # "2,628 CNY" on one line, never broken
    if lines is not None:  # the text is the whole amount: "420" never shows as "42"
        shown = [(float(c["text"].split()[0].replace(",", "")), c["text"].split()[-1]) for c in m["cells"]]
        assert shown == [(round(ln["amount"], 2), ln["currency"]) for ln in lines], (shown, lines)


def test_budget_amounts_are_shown_in_full_at_1400px(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    assert page.viewport_size == {"width": 1400, "height": 1000}
    page.goto(app_server.url + "/plan")
    wait_for_app(page)
    state = plan(page, app_server, REQUEST)
    assert state["budget"]["lines"]
    assert_amounts_fully_visible(page, "plan_cur", state["budget"]["lines"])
    expect(page.locator(".st-key-plan_cur_budget_chart [data-testid='stVegaLiteChart']")).to_be_visible()
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_refine_shows_the_amounts_of_both_versions(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/plan")
    wait_for_app(page)
    plan(page, app_server, REQUEST)
    page.get_by_label("Your trip").fill(REQUEST.replace("budget 6000 CNY", "budget 9000 CNY"))
    page.get_by_role("button", name="Refine (keep the previous version)").click()
    wait_for_app(page)
    expect(page.get_by_text("beside the previous version", exact=False)).to_be_visible(timeout=60_000)
    current = json.loads(download(page, "Download JSON"))
    assert_amounts_fully_visible(page, "plan_prev")
    assert_amounts_fully_visible(page, "plan_cur", current["budget"]["lines"])
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    assert offline_page.external == [], offline_page.external


def test_clarification_questions_render_one_per_line(app_server: AppServer, offline_page: OfflinePage) -> None:
    page = offline_page.page
    page.goto(app_server.url + "/")
    wait_for_app(page)
    send(page, "plan a trip for me")
    reply = page.locator("[data-testid='stChatMessage']").last
    items = reply.locator("ol > li")
    expect(items).to_have_count(2, timeout=30_000)
    expect(items.nth(0)).to_contain_text("Where would you like to go")
    expect(items.nth(1)).to_contain_text("When would you like to travel")
    tops = [items.nth(i).bounding_box()["y"] for i in range(2)]  # type: ignore[index]
    assert tops[0] < tops[1]  # one below the other, not on one line
    expect(reply.get_by_text("A few quick questions first.")).to_be_visible()
    assert offline_page.external == [], offline_page.external

"""Issue 14 in real Chromium: user text written as a Markdown image makes the browser fetch nothing.

A local listener stands for the attacker's server; a justification, a chat message and a claim
city written as ``![b](http://127.0.0.1:PORT/x)`` are shown on the Approvals, Chat and
Reimbursement pages, and the listener must see no request.
"""

from __future__ import annotations

import threading
from datetime import date
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from playwright.sync_api import expect

from navigo_core.business.applications import ApplicationService
from navigo_core.store import Store
from tests.e2e.conftest import AppServer, OfflinePage, free_port, wait_for_app

pytestmark = pytest.mark.e2e


class _Hits(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        _Hits.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def attacker() -> Iterator[tuple[str, list[str]]]:
    port = free_port()
    server = HTTPServer(("127.0.0.1", port), _Hits)
    _Hits.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"![b](http://127.0.0.1:{port}/x)", _Hits.hits
    server.shutdown()


def test_no_page_fetches_an_image_written_by_a_user(app_server: AppServer, offline_page: OfflinePage,
                                                     attacker: tuple[str, list[str]]) -> None:
    evil, hits = attacker
    db = Store.from_url(_database_url(app_server))
    svc = ApplicationService(db)
    app = svc.create(owner="alice", owner_department="sales", purpose="meeting", origin="上海", cities=["杭州"], start_date=date(2026, 5, 1),
                     end_date=date(2026, 5, 3), estimated_cost=3000,
                     excesses=[{"rule_id": "HOTEL-1", "rule": "Hotel cap", "amount_over": 500, "justification": evil}])
    svc.submit(app.number, actor="alice")
    page = offline_page.page

    page.goto(app_server.url + "/approvals?user=carol")  # an approver of alice's department
    wait_for_app(page)
    expect(page.get_by_text("127.0.0.1", exact=False).first).to_be_visible(timeout=30_000)

    page.goto(app_server.url + "/")
    wait_for_app(page)
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(f"{evil} hello")
    box.press("Enter")
    expect(page.get_by_test_id("stChatMessage")).to_have_count(2, timeout=30_000)
    wait_for_app(page)

    page.goto(app_server.url + "/reimbursement")
    wait_for_app(page)
    page.locator(".st-key-reimb_paste textarea").fill(f"date,city,category,amount\n2026-05-01,{evil},hotel,9650\n")
    page.locator(".st-key-reimb_paste_add button").click()
    wait_for_app(page)
    page.wait_for_timeout(500)
    assert hits == []


def _database_url(server: AppServer) -> str:
    """The server's database (tests/e2e/conftest.start_app puts it beside its log)."""
    return f"sqlite:///{server.log.parent / 'e2e.db'}"

"""Users and roles in the real app (app.py, AUTH_MODE=oidc), signed in through a local OpenID Connect provider
(oidc-provider-mock): alice (a traveller of sales) and carol (an approver) in two browser contexts.

* each sees only their own conversations, and another's thread id in the URL answers exactly like a made-up one;
* a traveller opening Approvals sees only that the page needs the approver role;
* alice files and submits an application in the chat, carol approves it on Approvals, alice sees it approved;
* carol's own application is never offered to her, although her department is in her scope here.
* alice's saved plan, saved route and saved claim are listed for her only: carol's Saved plans and Saved routes
  are empty, and nothing of alice's claim is on carol's Reimbursement page (it lists no saved claims; the store
  shows the claim is alice's and carol has none).

The roles file is the shipped one, except that carol also approves her own department (finance): so her own
application is in her scope and only the rule "nobody approves their own application" keeps it from her.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from playwright.sync_api import Browser, Locator, Page, expect

from navigo_core.store import Store
from tests.e2e.conftest import ROOT, OfflinePage, wait_for_app
from tests.e2e.oidc import Server, sign_in, start_app_with_auth, start_oidc_provider, write_auth_secrets

pytestmark = pytest.mark.e2e

ALICE: dict[str, str | bool] = {"sub": "alice-sub-0001", "email": "alice@example.com", "name": "Alice from the IdP",
                                "email_verified": True}
CAROL: dict[str, str | bool] = {"sub": "carol-sub-0003", "email": "carol@example.com", "name": "Carol from the IdP",
                                "email_verified": True}
NOT_FOUND = "That conversation was not found. A new one is started."
T = 60_000  # a busy machine: generous waits on states, never durations


@pytest.fixture(scope="module")
def oidc_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_oidc_provider(tmp_path_factory.mktemp("oidc"), users=[ALICE, CAROL])
    yield server
    server.stop()


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, oidc_provider: Server) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("roles-app")
    roles = yaml.safe_load((ROOT / "navigo_core" / "auth" / "data" / "roles.yaml").read_text(encoding="utf-8"))
    carol = next(u for u in roles["users"] if u["id"] == "carol")
    assert carol["department"] == "finance" and "approver" in carol["roles"]
    carol["approves"]["departments"] = [*carol["approves"]["departments"], "finance"]  # her own department too
    roles_file = tmp / "roles.yaml"
    roles_file.write_text(yaml.safe_dump(roles, allow_unicode=True), encoding="utf-8")
    server = start_app_with_auth(tmp, write_auth_secrets(tmp / "secrets.toml", oidc_provider.url),
                                 extra_env={"ROLES_FILE": str(roles_file)})
    yield server
    server.stop()


def _signed_in(browser: Browser, app: Server, provider: Server, claims: dict[str, str | bool]) -> Iterator[OfflinePage]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    try:
        guarded = OfflinePage(context.new_page())
        sign_in(guarded.page, app.url, provider.url, str(claims["sub"]))
        yield guarded
    finally:
        context.close()


@pytest.fixture(scope="module")
def alice(browser: Browser, app: Server, oidc_provider: Server) -> Iterator[OfflinePage]:
    yield from _signed_in(browser, app, oidc_provider, ALICE)


@pytest.fixture(scope="module")
def carol(browser: Browser, app: Server, oidc_provider: Server) -> Iterator[OfflinePage]:
    yield from _signed_in(browser, app, oidc_provider, CAROL)


def send(page: Page, text: str) -> str:
    """Send one chat message, wait for its reply to be drawn from the store, and return the reply's text."""
    messages = page.get_by_test_id("stChatMessage")
    before = messages.count()
    box = page.get_by_test_id("stChatInputTextArea")
    expect(box).to_be_enabled(timeout=T)
    box.fill(text)
    box.press("Enter")
    expect(messages).to_have_count(before + 2, timeout=T)
    expect(box).to_be_enabled(timeout=T)
    wait_for_app(page)
    return messages.last.inner_text()


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)


def new_conversation(page: Page) -> None:
    page.get_by_role("button", name="New conversation").click()
    wait_for_app(page)
    expect(page.get_by_test_id("stChatMessage")).to_have_count(0, timeout=T)


def thread_of(page: Page) -> str:
    expect(page).to_have_url(re.compile(r"[?&]thread="), timeout=T)
    return parse_qs(urlparse(page.url).query)["thread"][0]


def sidebar(page: Page) -> Locator:
    return page.get_by_test_id("stSidebar")


def only_loopback(*pages: OfflinePage) -> None:
    """Nothing but loopback was asked for: the provider's form asks for one stylesheet, which was blocked."""
    for p in pages:
        assert all(url.split("?")[0].endswith(".css") for url in p.external), p.external


def no_exception(page: Page) -> None:
    expect(page.locator("[data-testid='stException']")).to_have_count(0)


def test_each_user_sees_only_their_own_conversations(app: Server, alice: OfflinePage, carol: OfflinePage) -> None:
    a, c = alice.page, carol.page
    expect(sidebar(a)).to_contain_text("Signed in as Alice Chen <alice@example.com>")
    expect(sidebar(c)).to_contain_text("Signed in as Carol Wang <carol@example.com>")

    open_page(a, app.url + "/")
    alice_text = "hello, this is alice speaking"
    send(a, alice_text)
    alice_thread = thread_of(a)
    open_page(c, app.url + "/")
    carol_text = "hello, this is carol speaking"
    send(c, carol_text)

    # (a) each one's list of conversations holds their own thread only
    new_conversation(a)
    new_conversation(c)
    expect(sidebar(a).get_by_role("button", name=alice_text)).to_be_visible(timeout=T)
    expect(sidebar(c).get_by_role("button", name=carol_text)).to_be_visible(timeout=T)
    expect(sidebar(c)).not_to_contain_text(alice_text)
    expect(sidebar(a)).not_to_contain_text(carol_text)

    # alice's own link opens her conversation (a new page load is a new session: the id comes from the URL)
    open_page(a, f"{app.url}/?thread={alice_thread}")
    expect(a.get_by_test_id("stChatMessage").first).to_contain_text(alice_text, timeout=T)
    expect(a.get_by_text(NOT_FOUND)).to_have_count(0)

    # (e) the same link in carol's browser answers "not found" and a new conversation, exactly as a made-up id
    open_page(c, f"{app.url}/?thread={alice_thread}")
    expect(c.get_by_text(NOT_FOUND)).to_be_visible(timeout=T)
    expect(c.get_by_test_id("stChatMessage")).to_have_count(0)
    expect(c.locator("body")).not_to_contain_text(alice_text)
    expect(c).not_to_have_url(re.compile(re.escape(alice_thread)), timeout=T)  # a new conversation's id
    foreign = c.get_by_test_id("stMainBlockContainer").inner_text()

    made_up = str(uuid.uuid4())
    open_page(c, f"{app.url}/?thread={made_up}")
    expect(c.get_by_text(NOT_FOUND)).to_be_visible(timeout=T)
    expect(c.get_by_test_id("stChatMessage")).to_have_count(0)
    expect(c).not_to_have_url(re.compile(re.escape(made_up)), timeout=T)
    assert thread_of(c) != alice_thread
    assert c.get_by_test_id("stMainBlockContainer").inner_text() == foreign  # word for word the same page

    # the foreign link changed nothing of alice's: her conversation is still hers, whole
    open_page(a, f"{app.url}/?thread={alice_thread}")
    expect(a.get_by_test_id("stChatMessage")).to_have_count(2, timeout=T)
    for p in (a, c):
        no_exception(p)
    only_loopback(alice, carol)


def test_roles_decide_who_approves_what(app: Server, alice: OfflinePage, carol: OfflinePage) -> None:
    a, c = alice.page, carol.page

    # (b) a traveller on Approvals sees only that the page needs the approver role
    open_page(a, app.url + "/approvals")
    expect(a.get_by_test_id("stMainBlockContainer")).to_contain_text(
        "This page is for the approver role. Alice Chen <alice@example.com> has the roles: traveller.", timeout=T)
    expect(a.get_by_role("heading", name="Travel approvals")).to_have_count(0)
    expect(a.get_by_text("Pending applications")).to_have_count(0)
    expect(a.get_by_role("button", name="Approve")).to_have_count(0)

    # (c) alice files an application in the chat and submits it
    open_page(a, app.url + "/")
    new_conversation(a)
    reply = send(a, "申请5月10日到12日从上海去北京出差，拜访客户，预算3000元")
    found = re.search(r"TA-\d{4}-\d{4}", reply)
    assert found, reply
    number = found.group(0)
    assert "回复“提交”即可送审" in reply, reply
    assert "已提交" in send(a, "提交")

    # carol approves it on Approvals
    open_page(c, app.url + "/approvals")
    expect(c.get_by_test_id("stMainBlockContainer")).to_contain_text(
        "You act as Carol Wang <carol@example.com> on this page.", timeout=T)
    box = c.locator(f".st-key-approval_{number}")
    expect(box).to_be_visible(timeout=T)
    expect(box).to_contain_text("拜访客户")
    box.get_by_role("textbox").fill("Client visit approved")
    box.get_by_role("button", name="Approve").click()
    wait_for_app(c)
    expect(c.get_by_text(f"Application {number} approved.")).to_be_visible(timeout=T)
    expect(c.locator(f".st-key-approval_{number}")).to_have_count(0)
    c.get_by_test_id("stExpander").filter(has_text="History").locator("summary").click()
    audit = c.locator(f".st-key-approvals_audit_{number}")
    expect(audit).to_be_visible(timeout=T)
    expect(c.get_by_test_id("stExpander").filter(has_text="History")).to_contain_text(re.compile(
        re.escape(number) + r" · .* · approved"))

    # alice asks in the chat: approved
    new_conversation(a)
    reply = send(a, "我的北京出差审批到哪了")
    assert number in reply and "已批准" in reply, reply

    # (d) carol files and submits one of her own: in her scope (finance), and still never offered to her
    open_page(c, app.url + "/")
    new_conversation(c)
    reply = send(c, "申请6月1日到3日从北京去上海出差，参加会议，预算2000元")
    found = re.search(r"TA-\d{4}-\d{4}", reply)
    assert found, reply
    own = found.group(0)
    assert own != number
    assert "已提交" in send(c, "提交")
    open_page(c, app.url + "/approvals")
    expect(c.get_by_role("heading", name="Pending applications")).to_be_visible(timeout=T)
    expect(c.get_by_text("No application awaits approval.")).to_be_visible(timeout=T)
    expect(c.locator(f".st-key-approval_{own}")).to_have_count(0)
    expect(c.get_by_role("button", name="Approve")).to_have_count(0)
    history = c.get_by_test_id("stExpander").filter(has_text="History")
    history.locator("summary").click()
    expect(history.locator(f".st-key-approvals_audit_{number}")).to_be_visible(timeout=T)
    expect(history).to_contain_text(number, timeout=T)  # the list of what she decides holds alice's ...
    expect(history).not_to_contain_text(own)  # ... and never her own
    for p in (a, c):
        no_exception(p)
    only_loopback(alice, carol)


PLAN_REQUEST = "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking"
ROUTE_TITLE = "Alice's own route 上海 → 杭州"
CLAIM_NOTE = "alice own hotel night"
CLAIM = f"date,city,category,amount,currency,note,receipt\n2027-05-10,杭州,hotel,450,CNY,{CLAIM_NOTE},yes\n"


def _database(app: Server) -> Store:
    """The app's own database (start_app_with_auth puts it beside its log), read to check who owns what."""
    return Store.from_url(f"sqlite:///{app.log.parent / 'e2e.db'}")


def _expand(page: Page, key: str) -> Locator:
    """The expander ``key`` (its ``st-key-`` class), opened."""
    box = page.locator(f".st-key-{key}")
    expect(box).to_be_visible(timeout=T)
    box.locator("summary").click()
    expect(box.locator("details")).to_have_attribute("open", "", timeout=T)
    return box


def test_plans_routes_and_claims_are_their_owners_only(app: Server, alice: OfflinePage, carol: OfflinePage) -> None:
    a, c = alice.page, carol.page
    plan_label = PLAN_REQUEST[:60]  # the saved-plans list shows a request's first 60 characters

    # alice plans a trip on Plan: it is saved, and her list of saved plans holds it
    open_page(a, app.url + "/plan")
    a.get_by_label("Your trip").fill(PLAN_REQUEST)
    a.get_by_role("button", name="Plan it").click()
    wait_for_app(a)
    expect(a.get_by_role("heading", name="Summary")).to_be_visible(timeout=T)
    open_page(a, app.url + "/plan")  # a new session: the list is read from the store, not from the page's state
    plans = _expand(a, "plan_history_box")
    expect(plans.get_by_role("combobox", name="Saved plan")).to_have_value(
        re.compile("^" + re.escape(plan_label)), timeout=T)  # the one selected: her newest
    expect(plans.get_by_text("No saved plans yet.")).to_have_count(0)
    no_exception(a)

    # alice optimises a route on Route and saves it under her title; her saved routes hold it
    open_page(a, app.url + "/route")
    a.get_by_label("Origin place").fill("上海")
    a.get_by_label("Destination").fill("杭州")
    a.get_by_label("Destination").press("Enter")
    wait_for_app(a)
    a.locator(".st-key-route_paste_box").get_by_text("Paste several stops").click()
    a.get_by_label("One stop per line").fill("嘉兴\n苏州")
    a.locator(".st-key-route_paste_box").get_by_label("One stop per line").blur()
    wait_for_app(a)
    a.get_by_role("button", name="Add to the table").click()
    wait_for_app(a)
    expect(a.get_by_label("One stop per line")).to_have_value("", timeout=T)
    a.get_by_role("button", name="Optimise route").click()
    wait_for_app(a)
    expect(a.locator(".st-key-route_legs_box [data-testid='stDataFrame']")).to_be_visible(timeout=T)
    title = a.locator(".st-key-route_save_title input")
    title.fill(ROUTE_TITLE)
    a.get_by_role("button", name="Save to history").click()
    wait_for_app(a)
    expect(a.get_by_text("Saved. Reopen it from “Saved routes” below.")).to_be_visible(timeout=T)
    open_page(a, app.url + "/route")
    routes = _expand(a, "route_history_box")
    expect(routes.get_by_role("combobox", name="Saved route")).to_have_value(
        re.compile("^" + re.escape(ROUTE_TITLE + " · ")), timeout=T)
    expect(routes.get_by_text("No saved routes yet.")).to_have_count(0)
    no_exception(a)

    # alice imports a one-line claim on Reimbursement and saves it
    open_page(a, app.url + "/reimbursement")
    paste = a.locator(".st-key-reimb_paste textarea")
    paste.fill(CLAIM)
    paste.blur()
    wait_for_app(a)
    a.locator(".st-key-reimb_paste_add button").click()
    wait_for_app(a)
    expect(a.get_by_text("1 item(s) imported.")).to_be_visible(timeout=T)
    save = a.locator(".st-key-reimb_save button")
    expect(save).to_be_enabled(timeout=T)
    save.click()
    wait_for_app(a)
    saved = a.get_by_text(re.compile(r"^Claim saved \(.+\)\.$"))
    expect(saved).to_be_visible(timeout=T)
    found = re.search(r"Claim saved \((.+)\)\.", saved.inner_text())
    assert found, saved.inner_text()
    claim_id = found.group(1)
    expect(a.locator(".st-key-reimb_summary_box")).to_contain_text("1 item(s), total 450.00 CNY", timeout=T)
    no_exception(a)

    # what the store holds: each item is alice's (the id is the provider's sub), none is carol's
    db = _database(app)
    alice_id, carol_id = str(ALICE["sub"]), str(CAROL["sub"])
    assert [r["request_text"] for r in db.plans.list(alice_id)] == [PLAN_REQUEST]
    assert [r["title"] for r in db.routes.list(alice_id)] == [ROUTE_TITLE]
    assert [r["id"] for r in db.claims.list(alice_id)] == [claim_id]
    assert db.plans.list(carol_id) == [] and db.routes.list(carol_id) == [] and db.claims.list(carol_id) == []
    claim = db.claims.get(claim_id, owner=alice_id)
    assert claim is not None and [i["item"]["note"] for i in claim["items"]] == [CLAIM_NOTE], claim
    assert db.claims.get(claim_id, owner=carol_id) is None

    # carol, on the same pages: her lists are empty, alice's items appear nowhere
    open_page(c, app.url + "/plan")
    plans = _expand(c, "plan_history_box")
    expect(plans.get_by_text("No saved plans yet.")).to_be_visible(timeout=T)
    expect(plans.get_by_role("combobox")).to_have_count(0)  # no list to pick from at all
    expect(plans).not_to_contain_text(plan_label)
    expect(c.locator("body")).not_to_contain_text(plan_label)
    expect(c.get_by_role("heading", name="Summary")).to_have_count(0)  # nothing of alice's opened for her
    expect(c.get_by_label("Your trip")).to_have_value("")

    open_page(c, app.url + "/route")
    routes = _expand(c, "route_history_box")
    expect(routes.get_by_text("No saved routes yet.")).to_be_visible(timeout=T)
    expect(routes.get_by_role("combobox")).to_have_count(0)
    expect(routes).not_to_contain_text(ROUTE_TITLE)
    expect(c.locator("body")).not_to_contain_text(ROUTE_TITLE)

    # the Reimbursement page lists no saved claims (it shows only the one just saved, in that session):
    # carol's page holds neither alice's claim nor its id
    open_page(c, app.url + "/reimbursement")
    expect(c.get_by_role("heading", name="Reimbursement")).to_be_visible(timeout=T)
    expect(c.get_by_text(re.compile(r"^Claim saved"))).to_have_count(0)
    expect(c.locator("body")).not_to_contain_text(claim_id)
    expect(c.locator("body")).not_to_contain_text(CLAIM_NOTE)
    expect(c.locator(".st-key-reimb_summary_box")).to_have_count(0)
    expect(c.locator(".st-key-reimb_save button")).to_be_disabled()  # no items: nothing of alice's to save

    # alice's lists still hold her items after carol's visits
    open_page(a, app.url + "/route")
    expect(_expand(a, "route_history_box").get_by_role("combobox", name="Saved route")).to_have_value(
        re.compile("^" + re.escape(ROUTE_TITLE + " · ")), timeout=T)
    for p in (a, c):
        no_exception(p)
    only_loopback(alice, carol)

"""Screenshots of every page in both languages (`make screenshots`): docs/screenshots/<page>-<lang>-<width>.png.

Starts the app on a free port on 127.0.0.1 with a throw-away SQLite database and every online provider
off (no keys; the browser may only reach 127.0.0.1), seeds two travel applications through the chat
service (one awaiting approval, one approved), then in Debian's Chromium (Playwright) fills each page the
way a user would (a short chat, a plan, a solved route, a routed message, checked expenses) and takes a
screenshot at 1280 and 1024 px: the whole page, cut at --max-height px so the committed PNGs stay small.
In the browser it waits on Streamlit's script-run state and on what each step shows, never on sleeps (only the
server's start-up is polled). Exit status 1 when a page showed an exception or
could not be filled in (its screenshot is still taken).

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots] [--pages plan,route] [--langs en] [--widths 1280]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402  (streamlit's dependency)
from playwright.sync_api import Error as PlaywrightError  # noqa: E402
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PAGES = ("chat", "plan", "route", "approvals", "reimbursement", "router-lab")
LANGS = ("en", "zh")
WIDTHS = (1280, 1024)
# Every online provider off, whatever .env or .streamlit/secrets.toml say (the environment wins over both).
OFFLINE = {
    "llm_api_key": "", "openai_api_key": "", "llm_embedding_model": "", "amap_key": "", "nominatim_url": "",
    "osrm_url": "", "duffel_access_token": "", "places_provider": "gazetteer", "matrix_provider": "offline",
    "flights_provider": "offline", "weather_provider": "offline", "weather_online": "false",
    "poi_provider": "offline", "poi_online": "false", "map_tiles": "none", "employee_grade": "",
}
TEXT = {
    "chat": {"en": ["hello", "plan a trip for me"], "zh": ["你好", "帮我规划一次旅行"]},
    "plan": {"en": "From Shanghai to Hangzhou, May 1 to May 5, 2 adults, budget 6000 CNY, we like tea and hiking",
             "zh": "上海出发去杭州，5月1日到5日，两个大人，预算6000元，喜欢喝茶和徒步"},
    "route": {"en": ("Shanghai", "Hangzhou", ["Suzhou", "Wuxi"]), "zh": ("上海", "杭州", ["苏州", "无锡"])},
    "router-lab": {"en": "plan a route from Shanghai to Hangzhou via Suzhou", "zh": "从上海出发经过苏州到杭州的路线怎么走"},
}
APPLICATIONS = [  # sent to the chat service before the app starts: (message, then "submit")
    "apply for a business trip from Shanghai to Beijing, May 10 to May 12, to visit a client, budget 5000 CNY",
    "apply for a business trip from Shanghai to Hangzhou, May 20 to May 21, for a workshop, budget 2000 CNY",
]
EXPENSES = ("date,city,category,amount,currency,note,receipt\n"
            "{d1},Hangzhou,hotel,560,CNY,one night,yes\n"
            "{d1},Hangzhou,taxi,85,CNY,station to hotel,yes\n"
            "{d2},Hangzhou,meal,260,CNY,dinner with the team,no\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed(database_url: str) -> str | None:
    """Two submitted travel applications, the second approved; its dates (for the expenses), or None."""
    from navigo_core.auth import default_roles, demo_user
    from navigo_core.business.applications import ApplicationService
    from navigo_core.chat import ChatService
    from navigo_core.config import Settings
    from navigo_core.scenes import make_gate_context
    from navigo_core.store import Store

    settings = Settings(database_url=database_url, **{k: v for k, v in OFFLINE.items() if k != "openai_api_key"})
    store = Store.from_url(database_url)
    chat = ChatService(store, settings, gate_context=make_gate_context(settings))
    alice, carol = demo_user(default_roles(), "alice"), demo_user(default_roles(), "carol")  # traveller, approver
    assert alice is not None and carol is not None
    thread = chat.new_thread(alice.id)
    for message in APPLICATIONS:
        chat.send(thread, message, department=alice.department)
        chat.send(thread, "submit", department=alice.department)
    service = ApplicationService(store)
    pending = sorted(service.pending(carol), key=lambda a: a.number)
    if len(pending) < 2:
        print(f"warning: seeding made {len(pending)} submitted application(s), not 2", file=sys.stderr)
        return None
    approved = service.approve(pending[-1].number, approver=carol, comment="OK")
    return f"{approved.start_date},{approved.end_date}" if getattr(approved, "start_date", None) else None


@contextmanager
def app_server(tmp: Path) -> Iterator[str]:
    """`streamlit run app.py` on a free port of 127.0.0.1, offline, with the database in ``tmp``."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LLM_", "OPENAI_", "OSRM_", "AMAP_", "NOMINATIM_", "MAP_TILES", "DUFFEL_"))}
    env.update({k.upper(): v for k, v in OFFLINE.items()})
    env.update({"DATABASE_URL": f"sqlite:///{tmp / 'app.db'}", "PYTHONPATH": str(ROOT)})
    log = tmp / "streamlit.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:  # poll the health endpoint (each try waits up to a second for its answer)
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early:\n{log.read_text()}")
            try:
                with urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except (URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy:\n{log.read_text()}") from None
                time.sleep(0.2)  # the server is still starting (as tests/e2e/conftest.py polls it)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_for_app(page: Page, timeout: int = 60_000) -> None:
    """The script run finished and its elements are drawn (a skeleton stands in for one still loading;
    "notRunning" also holds before the first run has started)."""
    expect(page.locator("[data-test-script-state='notRunning']")).to_be_attached(timeout=timeout)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=timeout)
    expect(page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").first).to_be_visible(timeout=timeout)
    expect(page.locator("[data-testid='stSkeleton']")).to_have_count(0, timeout=timeout)


def key(page: Page, name: str, inner: str = "") -> Any:
    """The element of the widget with ``key=name`` (Streamlit gives its container the class st-key-<name>)."""
    return page.locator(f".st-key-{name} {inner}".strip()).first


# ---------- filling each page in ----------
def fill_chat(page: Page, lang: str) -> None:
    messages = page.get_by_test_id("stChatMessage")
    box = page.get_by_test_id("stChatInputTextArea")
    for text in TEXT["chat"][lang]:
        before = messages.count()
        expect(box).to_be_enabled(timeout=30_000)
        box.fill(text)
        box.press("Enter")
        expect(messages).to_have_count(before + 2, timeout=60_000)
        expect(box).to_be_enabled(timeout=60_000)
        wait_for_app(page)


def fill_plan(page: Page, lang: str) -> None:
    key(page, "plan_text", "textarea").fill(TEXT["plan"][lang])
    key(page, "plan_run", "button").click()
    wait_for_app(page, 120_000)
    expect(key(page, "plan_cur_budget_table", "[data-testid='stTable']")).to_be_visible(timeout=120_000)
    expect(key(page, "plan_export_json")).to_be_visible()


def fill_route(page: Page, lang: str) -> None:
    origin, destination, stops = TEXT["route"][lang]
    key(page, "route_origin", "input").fill(origin)
    key(page, "route_destination", "input").fill(destination)
    key(page, "route_destination", "input").press("Enter")
    wait_for_app(page)
    key(page, "route_paste_box", "summary").click()
    paste = key(page, "route_paste", "textarea")
    paste.fill("\n".join(stops))
    paste.blur()
    wait_for_app(page)
    key(page, "route_paste_add", "button").click()
    wait_for_app(page)
    key(page, "route_optimise", "button").click()
    wait_for_app(page, 120_000)
    expect(key(page, "route_legs_box", "[data-testid='stDataFrame']")).to_be_visible(timeout=120_000)


def fill_approvals(page: Page, lang: str) -> None:
    expect(key(page, "approvals_all_box")).to_be_visible(timeout=30_000)


def fill_reimbursement(page: Page, lang: str, dates: str | None) -> None:
    """Paste three expenses, pick the approved application, check them (each step waits for what it shows)."""
    d1, _, d2 = (dates or "2026-05-20,2026-05-21").partition(",")
    csv_text = EXPENSES.format(d1=d1, d2=d2 or d1)
    paste = key(page, "reimb_paste", "textarea")
    paste.fill(csv_text)
    paste.blur()
    expect(paste).to_have_value(csv_text)
    wait_for_app(page)
    key(page, "reimb_paste_add", "button").click()
    expect(page.get_by_test_id("stAlertContentSuccess").first).to_be_visible(timeout=30_000)  # "imported"
    wait_for_app(page)
    select = key(page, "reimb_application")
    if dates and select.count():
        select.click()
        options = page.get_by_role("option")
        expect(options.first).to_be_visible()
        options.nth(options.count() - 1).click()  # the approved application
        expect(select.locator("input")).to_have_value(re.compile("^TA-"), timeout=30_000)
    key(page, "reimb_check", "button").click()
    expect(key(page, "reimb_summary_box")).to_be_visible(timeout=30_000)
    wait_for_app(page)


def fill_router_lab(page: Page, lang: str) -> None:
    key(page, "lab_message", "input").fill(TEXT["router-lab"][lang])
    key(page, "lab_route", "button").click()
    wait_for_app(page)
    expect(key(page, "lab_layers_box")).to_be_visible(timeout=30_000)


# ---------- the screenshot ----------
# The page's own scroll containers (stMain, or the chat's scroll-to-bottom container, the sidebar): the
# content height is theirs plus what stays fixed around them (the chat input); inner scrollers (tables) don't count.
_CONTENT_HEIGHT = """() => {
  let h = document.documentElement.scrollHeight;
  for (const e of document.querySelectorAll('[data-testid]')) {
    const o = getComputedStyle(e).overflowY;
    if ((o === 'auto' || o === 'scroll') && e.clientHeight >= window.innerHeight / 2)
      h = Math.max(h, e.scrollHeight + window.innerHeight - e.clientHeight);
  }
  return h;
}"""
_NO_SCROLLBARS = "* { scrollbar-width: none !important; }"  # the width never changes with the height
_REDRAW_MAPS = """() => { if (!window.L) return 0; let n = 0;
  for (const k of Object.keys(window)) { const m = window[k];
    if (m instanceof window.L.Map) { m.invalidateSize(false); m.fire('moveend'); n++; } }
  return n; }"""
_TO_TOP = """() => { for (const e of document.querySelectorAll('[data-testid]'))
  if (e.scrollTop && e.clientHeight >= window.innerHeight / 2) e.scrollTop = 0; }"""


def settle(page: Page) -> None:
    """The page drawn: the script run finished, charts and maps painted."""
    wait_for_app(page)
    for chart in page.locator("[data-testid='stVegaLiteChart']").all():
        expect(chart.locator("canvas, svg").first).to_be_attached(timeout=30_000)
    for i in range(page.locator("iframe").count()):
        frame = page.frame_locator("iframe").nth(i)
        try:
            expect(frame.locator(".leaflet-container").first).to_be_attached(timeout=15_000)
        except AssertionError:
            pass  # not a map
    for frame in page.frames:  # Leaflet redraws its layers 200 ms after a resize: redraw them now
        try:
            frame.evaluate(_REDRAW_MAPS)
        except PlaywrightError:
            pass  # a frame gone with a redraw


def shoot(page: Page, path: Path, max_height: int) -> tuple[int, int]:
    """The whole page (Streamlit scrolls inside the page, so the viewport grows to the content; the width
    stays, scrollbars being hidden), cut at ``max_height``; saved as an optimised (lossless) PNG.
    Returns (content height, file size)."""
    settle(page)
    height = int(page.evaluate(_CONTENT_HEIGHT))
    page.set_viewport_size({"width": page.viewport_size["width"], "height": max(600, min(height, max_height))})
    settle(page)
    page.evaluate(_TO_TOP)  # a page cut at max_height shows its top (the chat scrolls to its end)
    png = page.screenshot(full_page=True, animations="disabled", caret="hide")
    img = Image.open(io.BytesIO(png))
    if img.height > max_height:
        img = img.crop((0, 0, img.width, max_height))
    img.convert("RGB").save(path, format="PNG", optimize=True)
    return height, path.stat().st_size


def shot(browser: Any, url: str, name: str, lang: str, width: int, fill: Callable[[Page, str], None], out: Path,
         max_height: int, problems: list[str]) -> None:
    """Open page ``name`` in ``lang`` at ``width`` (only 127.0.0.1 reachable), fill it in, take its screenshot."""
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="zh-CN" if lang == "zh" else "en-US")
    blocked: list[str] = []

    def guard(route: Any, request: Any) -> None:
        host = request.url.split("/")[2].split(":")[0] if "://" in request.url else ""
        if request.url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    label, path = f"{name}-{lang}-{width}", out / f"{name}-{lang}-{width}.png"
    try:
        user = "carol" if name == "approvals" else "alice"  # demo users: the approver sees the approvals page
        page.goto(f"{url}/{'' if name == 'chat' else name}?lang={lang}&user={user}")
        wait_for_app(page)
        page.add_style_tag(content=_NO_SCROLLBARS)
        fill(page, lang)
    except (AssertionError, PlaywrightError) as exc:
        problems.append(f"{label}: could not be filled in: {str(exc).splitlines()[0]}")
    try:
        height, size = shoot(page, path, max_height)
        cut = f", cut from {height} px" if height > max_height else ""
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {size / 1024:.0f} KB{cut}")
    except (AssertionError, PlaywrightError) as exc:
        problems.append(f"{path.name}: {str(exc).splitlines()[0]}")
    if page.locator("[data-testid='stException']").count():
        problems.append(f"{label}: the page shows an exception")
    if blocked:
        problems.append(f"{label}: blocked requests off 127.0.0.1: {blocked[:3]}")
    context.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated, of: " + ", ".join(PAGES))
    ap.add_argument("--langs", default=",".join(LANGS))
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    ap.add_argument("--max-height", type=int, default=4000, help="cut taller pages at this many px")
    args = ap.parse_args(argv)
    pages = [p for p in args.pages.split(",") if p]
    unknown = sorted(set(pages) - set(PAGES))
    if unknown:
        ap.error(f"unknown page(s): {', '.join(unknown)}")
    langs, widths = [x for x in args.langs.split(",") if x], [int(w) for w in args.widths.split(",") if w]
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="navigo-screenshots-"))
    problems: list[str] = []
    try:
        dates = seed(f"sqlite:///{tmp / 'app.db'}")
        with app_server(tmp) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            fills: dict[str, Callable[[Page, str], None]] = {
                "chat": fill_chat, "plan": fill_plan, "route": fill_route, "approvals": fill_approvals,
                "reimbursement": lambda page, lang: fill_reimbursement(page, lang, dates), "router-lab": fill_router_lab}
            for name in pages:
                for lang in langs:
                    for width in widths:  # each width loaded afresh, as a user at that width sees it
                        shot(browser, url, name, lang, width, fills[name], args.out, args.max_height, problems)
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

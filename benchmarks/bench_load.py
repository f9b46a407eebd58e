"""Load benchmark (issue 14): N browser sessions against one ``streamlit run app.py`` server.

Run from the repo root: ``.venv/bin/python benchmarks/bench_load.py [N ...]`` (default: 5 10).

For each N, N sessions (separate browser contexts, so separate Streamlit sessions) open the Chat
page together, each sends one chat message and waits for the reply; the time from pressing Enter
to the reply on the page is one sample. Prints p50 / p95 / max and the errors (a reply that did not
come within the timeout, or an error shown on the page). The server runs offline on a free port,
on a fresh database; Chromium is Debian's (``/usr/bin/chromium``), as in the browser tests.
Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

from playwright.async_api import Browser, async_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
MESSAGES = ["hello", "what's the weather in Hangzhou tomorrow", "plan a route from Shanghai to Hangzhou via Suzhou",
            "上海住宿标准是多少", "帮我规划一个去杭州的三日游", "tell me a joke", "你好", "报销昨天的出租车费 85 元"]
REPLY_TIMEOUT_MS = 120_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LLM_", "OPENAI_", "OSRM_", "AMAP_", "NOMINATIM_", "MAP_TILES", "DUFFEL_"))}
    env.update({"DATABASE_URL": f"sqlite:///{tmp / 'load.db'}", "PYTHONPATH": str(ROOT)})
    log = (tmp / "streamlit.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit((tmp / "streamlit.log").read_text())
        try:
            with urlopen(url + "/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return proc, url
        except (URLError, OSError):
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("streamlit did not become healthy")


async def wait_idle(page) -> None:  # type: ignore[no-untyped-def]
    await page.locator("[data-test-script-state='notRunning']").wait_for(state="attached", timeout=REPLY_TIMEOUT_MS)


async def session(browser: Browser, url: str, text: str) -> tuple[float | None, str]:
    """One session: open Chat, send ``text``, wait for the reply. (seconds, error or "")."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = await context.new_page()
    try:
        await page.goto(url + "/", timeout=REPLY_TIMEOUT_MS)
        await wait_idle(page)
        box = page.get_by_test_id("stChatInputTextArea")
        await box.wait_for(state="visible", timeout=REPLY_TIMEOUT_MS)
        messages = page.get_by_test_id("stChatMessage")
        before = await messages.count()
        await box.fill(text)
        started = time.perf_counter()
        await box.press("Enter")
        deadline = time.monotonic() + REPLY_TIMEOUT_MS / 1000
        while await messages.count() < before + 2:
            if time.monotonic() > deadline:
                return None, "no reply in time"
            await asyncio.sleep(0.02)
        elapsed = time.perf_counter() - started
        errors = await page.get_by_test_id("stException").count() + await page.get_by_test_id("stAlertContentError").count()
        return elapsed, ("error shown on the page" if errors else "")
    except Exception as exc:  # noqa: BLE001 - a failed session is a counted error
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    finally:
        await context.close()


async def run(sizes: list[int]) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="navigo-load-"))
    proc, url = start_server(tmp)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            await session(browser, url, "hello")  # warm-up: the first run loads the models and the gazetteer
            print("## Chat under load: N browser sessions against one server\n")
            print("| sessions | replies | p50 | p95 | max | errors |")
            print("|---|---|---|---|---|---|")
            for n in sizes:
                results = await asyncio.gather(*(session(browser, url, MESSAGES[i % len(MESSAGES)]) for i in range(n)))
                times = sorted(t for t, err in results if t is not None and not err)
                errors = [err for _, err in results if err]
                if times:
                    p95 = times[min(len(times) - 1, max(0, round(0.95 * len(times)) - 1))]
                    print(f"| {n} | {len(times)} | {statistics.median(times):.2f} s | {p95:.2f} s | {times[-1]:.2f} s | "
                          f"{len(errors)}{' (' + '; '.join(sorted(set(errors))) + ')' if errors else ''} |")
                else:
                    print(f"| {n} | 0 | — | — | — | {len(errors)} ({'; '.join(sorted(set(errors)))}) |")
            await browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    asyncio.run(run([int(a) for a in sys.argv[1:]] or [5, 10]))

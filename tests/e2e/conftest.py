"""Start the app headless and drive it in Debian's Chromium with Playwright.

Shaped after streamlit's own e2e_playwright conftest: a free port, wait on
/_stcore/health, then wait for the script to finish running
(`data-test-script-state`) instead of sleeping.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from ui.context import WARM_UP_DONE

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AppServer:
    def __init__(self, port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.port, self.proc, self.log = port, proc, log
        self.url = f"http://127.0.0.1:{port}"


def start_app(tmp: Path, extra_env: dict[str, str] | None = None) -> AppServer:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "OPENAI_", "OSRM_", "AMAP_", "NOMINATIM_", "MAP_TILES"))}
    env.update({"DATABASE_URL": f"sqlite:///{tmp / 'e2e.db'}", "PYTHONPATH": str(ROOT)})
    env.update(extra_env or {})
    log = tmp / "streamlit.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.headless", "true", "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early:\n{log.read_text()}")
        try:
            with urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return AppServer(port, proc, log)
        except (URLError, OSError):
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"streamlit did not become healthy:\n{log.read_text()}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def warm_app(server: AppServer, browser: Browser, timeout_s: float = 300) -> None:
    """Open the app once and wait until its warm-up thread has built the chat service and the models (the
    server logs ``WARM_UP_DONE``): fitting the intent classifier takes tens of seconds on a busy machine,
    longer than a test waits for its first reply. Waits on the log's state, polled, not on a duration."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server.url + "/")
        wait_for_app(page)
        deadline = time.monotonic() + timeout_s
        while WARM_UP_DONE not in server.log.read_text(errors="replace"):
            if server.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not finish its warm-up:\n{server.log.read_text(errors='replace')}")
            time.sleep(0.2)
    finally:
        context.close()


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[AppServer]:
    server = start_app(tmp_path_factory.mktemp("app"))
    warm_app(server, browser)
    yield server
    server.proc.terminate()
    server.proc.wait(timeout=10)


class OfflinePage:
    """A page whose requests may only go to 127.0.0.1; any other host is blocked and recorded."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.external: list[str] = []

        def guard(route, request) -> None:  # type: ignore[no-untyped-def]
            host = request.url.split("/")[2] if "://" in request.url else ""
            if request.url.startswith(("data:", "blob:", "about:")) or host.split(":")[0] in ("127.0.0.1", "localhost"):
                route.continue_()
            else:
                self.external.append(request.url)
                route.abort()

        page.route("**/*", guard)


@pytest.fixture
def offline_page(browser: Browser) -> Iterator[OfflinePage]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    yield OfflinePage(page)
    context.close()


def wait_for_app(page: Page, initial_wait_ms: int = 210) -> None:
    """Wait until the script has finished its run, as Streamlit's own e2e helper ``wait_for_app_run``
    does: a short initial wait (a click's rerun may not have started yet), the connection, then the
    script-run state; the status widget gone. The waits are on states, not on durations."""
    page.wait_for_timeout(initial_wait_ms)
    expect(page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']")).to_be_attached(timeout=60_000)
    expect(page.locator("[data-testid='stApp'][data-test-script-state='notRunning']")).to_be_attached(timeout=60_000)
    expect(page.locator("[data-testid='stStatusWidget']")).to_have_count(0, timeout=60_000)


def download(page: Page, label: str) -> bytes:
    """Click the download button ``label`` once the run has finished, and return the file. While a rerun
    moves a button (the Plan page's layout changes after Refine), the old element stays in the page,
    stale, until the run ends; so wait for the run and for exactly one such button, not for a duration."""
    wait_for_app(page)
    button = page.get_by_role("button", name=label)
    expect(button).to_have_count(1, timeout=60_000)
    with page.expect_download() as info:
        button.click()
    return info.value.path().read_bytes()

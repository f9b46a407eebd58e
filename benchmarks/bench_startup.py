"""Startup benchmark (issue 12, "Fast first page"): how soon the first visitor can use the app.

Run from the repo root: ``.venv/bin/python benchmarks/bench_startup.py [--runs 3] [--screenshot PATH]``.

Each run starts a fresh ``streamlit run app.py`` (offline: no LLM keys; a throw-away SQLite database in a
temp folder; started as ``benchmarks/bench_load.py`` does) and takes t0 when ``/_stcore/health`` first
answers. Chromium (Debian's, launched before the server so its own start is not counted) then opens the
Chat page; measured from t0:

* **chat input usable**: ``stChatInputTextArea`` visible and enabled;
* **first reply**: "hello" sent as soon as the input is usable, until its reply is on the page
  (and, in brackets, from pressing Enter).

Then, warm, each other page (a fresh load of its URL) until its script has finished running
(``data-test-script-state='notRunning'``) and its title (h1) shows. Prints a Markdown table: every run,
the median, and the load average (``os.getloadavg()``) before and after. Not a test: the figures depend
on the machine; quote them with the load average. Targets (quiet machine): chat input ≤ 3 s, pages ≤ 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from bench_load import CHROMIUM, CHROMIUM_ARGS, start_server  # same server start as the load benchmark

PAGES = [("Plan", "plan"), ("Route", "route"), ("Approvals", "approvals?user=carol"), ("Reimbursement", "reimbursement"),
         ("Router lab", "router-lab")]  # (title, url_path) as in app.py; Approvals as the demo approver (roles.yaml)
TIMEOUT_MS = 180_000
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def cold_run(page: Page, screenshot: Path | None) -> dict[str, float]:
    """One fresh server: seconds from its health check to the chat input, the first reply and each page."""
    tmp = Path(tempfile.mkdtemp(prefix="navigo-startup-"))
    proc, url = start_server(tmp)
    t0 = time.perf_counter()
    try:
        page.goto(url + "/", timeout=TIMEOUT_MS)
        box = page.get_by_test_id("stChatInputTextArea")
        box.wait_for(state="visible", timeout=TIMEOUT_MS)
        expect(box).to_be_enabled(timeout=TIMEOUT_MS)
        out = {"input": time.perf_counter() - t0}
        if screenshot is not None:
            page.screenshot(path=str(screenshot))
        messages = page.get_by_test_id("stChatMessage")
        before = messages.count()
        box.fill("hello")
        sent = time.perf_counter()
        box.press("Enter")
        expect(messages).to_have_count(before + 2, timeout=TIMEOUT_MS)
        expect(messages.last).not_to_have_text("", timeout=TIMEOUT_MS)
        out["reply"] = time.perf_counter() - t0
        out["latency"] = time.perf_counter() - sent
        page.locator(IDLE).wait_for(state="attached", timeout=TIMEOUT_MS)
        for title, path in PAGES:
            started = time.perf_counter()
            page.goto(f"{url}/{path}", timeout=TIMEOUT_MS)
            page.locator("h1").first.wait_for(state="visible", timeout=TIMEOUT_MS)
            page.locator(IDLE).wait_for(state="attached", timeout=TIMEOUT_MS)
            out[title] = time.perf_counter() - started
            if page.get_by_test_id("stException").count():
                raise SystemExit(f"{title}: an exception is shown on the page")
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def sec(value: float) -> str:
    return f"{value:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold starts, a fresh server each (default 3)")
    parser.add_argument("--screenshot", type=Path, help="save the Chat page as soon as its input is usable (run 1)")
    args = parser.parse_args()
    cols = ["input", "reply", "latency"] + [title for title, _ in PAGES]
    rows: list[tuple[str, dict[str, float]]] = []
    load_before = load()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for i in range(args.runs):
            run_load = load()
            context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
            try:
                rows.append((f"{i + 1} (load {run_load})",
                             cold_run(context.new_page(), args.screenshot if i == 0 else None)))
            finally:
                context.close()
        browser.close()
    load_after = load()

    print(f"## Startup: {os.cpu_count()} cores; load average (1 / 5 / 15 min) before {load_before}, "
          f"after {load_after}\n")
    print("Seconds from the health check (t0) to the chat input usable and to the reply to \"hello\" "
          "(in brackets: from pressing Enter); then, warm, each page until its script finished and its h1 shows.\n")
    print("| run | chat input usable | first reply | " + " | ".join(title for title, _ in PAGES) + " |")
    print("|---|---|---|" + "---|" * len(PAGES))
    median = {c: statistics.median(r[c] for _, r in rows) for c in cols}
    for name, r in [*rows, ("**median**", median)]:
        print(f"| {name} | {sec(r['input'])} | {sec(r['reply'])} ({r['latency']:.2f} s) | "
              + " | ".join(sec(r[title]) for title, _ in PAGES) + " |")


if __name__ == "__main__":
    main()

"""Live per-agent progress for long core calls.

The planner reports events from its worker threads, and Streamlit elements may
only be written from the script thread. So the call runs in a helper thread, its
events go through a queue, and the script thread drains the queue into one
``st.status`` box with one line per agent until the call returns.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from ui.markdown import safe_markdown

T = TypeVar("T")
Event = tuple[str, str, str]  # agent, status, message
ICONS = {"started": "⏳", "done": "✅", "failed": "⚠️", "skipped": "⏭️"}


def run_with_progress(call: Callable[[Callable[[str, str, str], None]], T], *, label: str,
                      done_label: str, key: str) -> T:
    """Run ``call(on_event)`` and show its events live; re-raise what it raised."""
    events: queue.Queue[Event] = queue.Queue()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call(lambda agent, status, message: events.put((agent, status, message)))
        except BaseException as exc:  # handed to the script thread below
            box["error"] = exc

    worker = threading.Thread(target=target, name=f"navigo-{key}", daemon=True)
    lines: dict[str, str] = {}
    with st.status(label, expanded=True) as status:
        slot = st.empty()
        worker.start()
        while worker.is_alive() or not events.empty():
            try:
                agent, state, message = events.get(timeout=0.05)
            except queue.Empty:
                continue
            lines[agent] = f"{ICONS.get(state, '•')} {message}"
            slot.markdown("  \n".join(safe_markdown(line) for line in lines.values()))
        worker.join()
        status.update(label=done_label, state="error" if "error" in box else "complete", expanded=False)
    if "error" in box:
        raise box["error"]
    return box["result"]

"""Shared helpers for the library comparison scripts in ``benchmarks/libs/``.

The libraries under test are NOT project dependencies: install them outside the venv and put
them on ``PYTHONPATH`` (see docs/understanding-libraries.md). A library that is missing is
reported as "not installed" and skipped. Every script blocks the network first, so a library
that tries to download data at run time shows up as a failure instead of silently working.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[2]  # the repo root; else the cwd (run from the repo root)
if not (ROOT / "navigo_core").is_dir():
    ROOT = Path.cwd()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NET_ATTEMPTS: list[str] = []

# The rules before navigo_core.understand lived in navigo_core/planner/parsing.py, deleted since; the
# comparison loads them from git history (the last commit that had them) rather than keeping a copy.
OLD_REV = "8ecfb3b"


def old_rules() -> Any:
    """The old rule module (``parse_dates``, ``parse_budget``, ``place_phrases`` …) from git history."""
    import subprocess
    import types

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD_REV}:navigo_core/planner/parsing.py"],
                         capture_output=True, text=True)
    if src.returncode != 0:
        raise SystemExit(f"the old rules need this repository's git history (revision {OLD_REV}): {src.stderr.strip()}")
    module = types.ModuleType("old_parsing")
    module.__file__ = str(ROOT / "navigo_core" / "planner" / "parsing.py")
    sys.modules["old_parsing"] = module
    exec(compile(src.stdout, f"{OLD_REV}:navigo_core/planner/parsing.py", "exec"), module.__dict__)
    module._DATA = ROOT / "navigo_core" / "understand" / "data"  # where interests.yaml lives now
    return module


def block_network() -> None:
    """Refuse (and record) every DNS lookup and socket connect from here on."""

    def deny(*args: Any, **_: Any) -> Any:
        NET_ATTEMPTS.append(repr(args)[:120])
        raise OSError("network blocked by benchmarks/libs/_harness.py")

    socket.getaddrinfo = deny  # type: ignore[assignment]
    socket.create_connection = deny  # type: ignore[assignment]
    socket.socket.connect = lambda self, *a, **k: deny(*a)  # type: ignore[method-assign]


def optional(module: str) -> Any | None:
    """The imported module, or None when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def dist_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def timed_calls(fn: Callable[[Any], Any], inputs: Iterable[Any], *, repeat: int = 5) -> dict[str, float]:
    """p50 / p95 / mean µs per call of ``fn`` over ``inputs`` (one warm-up pass excluded)."""
    inputs = list(inputs)
    for x in inputs:  # warm-up: lazy loads and caches
        _safe(fn, x)
    samples: list[float] = []
    for _ in range(repeat):
        for x in inputs:
            t0 = time.perf_counter()
            _safe(fn, x)
            samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    return {"p50": statistics.median(samples), "p95": samples[int(0.95 * (len(samples) - 1))],
            "mean": statistics.fmean(samples)}


def _safe(fn: Callable[[Any], Any], x: Any) -> Any:
    try:
        return fn(x)
    except Exception as exc:  # noqa: BLE001 - a library error is a miss, not a crash
        return exc


def call(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn(*args)``; an exception is returned as "ERR <type>" (a miss)."""
    try:
        return fn(*args, **kw)
    except Exception as exc:  # noqa: BLE001
        return f"ERR {type(exc).__name__}"


def table(headers: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.1f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def pct(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / total:.0f} %)" if total else "–"


def failures_section(title: str, fails: list[str], limit: int = 40) -> str:
    if not fails:
        return f"{title}: none"
    shown = "\n".join(f"  - {f}" for f in fails[:limit])
    more = f"\n  … {len(fails) - limit} more" if len(fails) > limit else ""
    return f"{title} ({len(fails)}):\n{shown}{more}"

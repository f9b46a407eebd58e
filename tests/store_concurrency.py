"""Concurrent writers against one store: N processes × M creates each, all starting together.

Each worker process opens its own :class:`~navigo_core.store.Store` on the same URL (so schema creation
races too) and, per round, drafts one travel application (a number from the database), saves one more
version of a plan every worker shares (a version from the database), and sends the first message of a new
chat thread (thread and message in one transaction). :func:`run` returns what came back and what the
database holds; ``tests/unit/test_store_hardening.py`` asserts on it and
``benchmarks/bench_store_concurrency.py`` prints it.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from collections import Counter
from typing import Any

SHARED_PLAN = "00000000-0000-4000-8000-00000000c0de"


def _worker(url: str, worker: int, rounds: int, barrier: Any, out: Any) -> None:
    numbers: list[str] = []
    versions: list[int] = []
    threads: list[str] = []
    errors: list[str] = []
    try:
        from navigo_core.business.applications import ApplicationService
        from navigo_core.store import Store

        barrier.wait(timeout=120)
        store = Store.from_url(url)
        service = ApplicationService(store)
        for i in range(rounds):
            try:
                numbers.append(service.create(owner=f"worker-{worker}", cities=["Hangzhou"], purpose=f"round {i}").number)
            except Exception as exc:  # noqa: BLE001 - counted, reported
                errors.append(f"application: {type(exc).__name__}: {exc}"[:300])
            try:
                versions.append(store.plans.save(SHARED_PLAN, f"worker {worker} round {i}", {"round": i}, owner="worker")[1])
            except Exception as exc:  # noqa: BLE001
                errors.append(f"plan: {type(exc).__name__}: {exc}"[:300])
            try:
                tid = store.threads.new_id()
                store.threads.add_message(tid, "user", f"hello from {worker}/{i}", owner=f"worker-{worker}")
                threads.append(tid)
            except Exception as exc:  # noqa: BLE001
                errors.append(f"thread: {type(exc).__name__}: {exc}"[:300])
        store.engine.dispose()
    except Exception as exc:  # noqa: BLE001 - the worker itself failed
        errors.append(f"worker: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"[:2000])
    out.put({"worker": worker, "numbers": numbers, "versions": versions, "threads": threads, "errors": errors})


def run(url: str, processes: int = 8, rounds: int = 200, timeout_s: float = 600) -> dict[str, Any]:
    """Run the workers against ``url``; returns counts, duplicates, errors, what the database holds, seconds."""
    from sqlalchemy import func, select

    from navigo_core.store import Store, applications, messages, plans, threads

    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(processes)
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, w, rounds, barrier, out), daemon=True) for w in range(processes)]
    for p in procs:
        p.start()
    results: list[dict[str, Any]] = []
    started = time.monotonic()
    deadline = started + timeout_s
    while len(results) < processes and time.monotonic() < deadline:
        try:
            results.append(out.get(timeout=1))
        except Exception:  # noqa: BLE001 - queue.Empty: keep waiting while workers live
            if not any(p.is_alive() for p in procs) and out.empty():
                break
    seconds = time.monotonic() - started
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    numbers = [n for r in results for n in r["numbers"]]
    versions = [v for r in results for v in r["versions"]]
    thread_ids = [t for r in results for t in r["threads"]]
    errors = [e for r in results for e in r["errors"]]
    store = Store.from_url(url)
    with store.engine.connect() as conn:
        stored_numbers = [r[0] for r in conn.execute(select(applications.c.number))]
        stored_versions = [r[0] for r in conn.execute(select(plans.c.version).where(plans.c.id == SHARED_PLAN))]
        per_thread = dict(conn.execute(select(threads.c.id, func.count(messages.c.id))
                                       .select_from(threads.outerjoin(messages, messages.c.thread_id == threads.c.id))
                                       .group_by(threads.c.id)).all())
    store.engine.dispose()
    expected = processes * rounds
    return {
        "backend": url.split(":", 1)[0].split("+", 1)[0],
        "processes": processes, "rounds": rounds, "expected": expected, "workers_reported": len(results),
        "applications": len(numbers), "plan_versions": len(versions), "threads": len(thread_ids),
        "duplicate_numbers": sum(c - 1 for c in Counter(numbers).values() if c > 1),
        "duplicate_versions": sum(c - 1 for c in Counter(versions).values() if c > 1),
        "errors": errors,
        "stored_numbers": sorted(stored_numbers), "stored_versions": sorted(stored_versions),
        "empty_threads": sum(1 for n in per_thread.values() if n == 0),
        "threads_stored": len(per_thread), "threads_with_one_message": sum(1 for n in per_thread.values() if n == 1),
        "seconds": round(seconds, 2),
    }


def summary(r: dict[str, Any]) -> str:
    creates = r["applications"] + r["plan_versions"] + r["threads"]
    return (f"{r['backend']}: {r['processes']} processes × {r['rounds']} rounds → {creates}/{3 * r['expected']} creates "
            f"(applications {r['applications']}, plan versions {r['plan_versions']}, threads {r['threads']}), "
            f"{len(r['errors'])} failures, {r['duplicate_numbers'] + r['duplicate_versions']} duplicates, "
            f"{r['empty_threads']} empty threads, {r['seconds']:.1f} s")

"""Concurrent writers against the store, on SQLite and on a throw-away PostgreSQL server.

N processes × M rounds; each round drafts one travel application (its number from the database), saves one
more version of a plan all workers share (its version from the database) and sends the first message of a
new chat thread. Prints creates, failures, duplicates, empty threads and the wall time per backend.

    .venv/bin/python benchmarks/bench_store_concurrency.py [--processes 8] [--rounds 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.postgres import PostgresServer  # noqa: E402
from tests.store_concurrency import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        rows.append(run(f"sqlite:///{Path(folder) / 'bench.db'}", args.processes, args.rounds))
    with PostgresServer() as pg:
        rows.append(run(pg.create_database(), args.processes, args.rounds))
    print(f"\nStore under concurrency: {args.processes} processes × {args.rounds} rounds "
          "(application + plan version + thread per round)\n")
    print("| backend | creates | failures | duplicates | empty threads | numbers 1…N without gaps | seconds |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for r in rows:
        creates = r["applications"] + r["plan_versions"] + r["threads"]
        gapless = (len(r["stored_numbers"]) == r["expected"] and r["stored_versions"] == list(range(1, r["expected"] + 1)))
        print(f"| {r['backend']} | {creates}/{3 * r['expected']} | {len(r['errors'])} | "
              f"{r['duplicate_numbers'] + r['duplicate_versions']} | {r['empty_threads']} | "
              f"{'yes' if gapless else 'no'} | {r['seconds']:.1f} |")
        for e in r["errors"][:3]:
            print(f"  {r['backend']}: {e}")


if __name__ == "__main__":
    main()

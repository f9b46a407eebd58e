"""Upstream calls per route plan: ours against the seed design's per-leg calls.

Ours is measured: the route service runs against a local fake OSRM server, and
the server counts the HTTP requests it received (one /table for the matrix, one
/route for the chosen order's road line). The seed (geo-agent-route) had the LLM
compare candidate orders and call the map API once per leg of every candidate:
n! candidates × (n + 1) legs. Even with a perfect per-leg cache it needs every
directed pair it touches: n (origin→stop) + n(n−1) (stop→stop) + n (stop→dest).

Run: .venv/bin/python benchmarks/bench_upstream.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from navigo_core.config import get_settings  # noqa: E402
from navigo_core.route.models import RouteRequest  # noqa: E402
from navigo_core.route.service import make_route_deps, plan_route  # noqa: E402
from tests.fakes.osrm import FakeOsrm  # noqa: E402

# Stops as lat,lon literals around Shanghai, so nothing depends on the gazetteer.
STOPS = [f"{31.0 + 0.05 * (i % 5):.4f},{121.2 + 0.07 * (i // 5):.4f}" for i in range(12)]
ORIGIN, DESTINATION = "31.2304,121.4737", "30.2741,120.1551"


def ours(n: int) -> tuple[int, bool]:
    with FakeOsrm() as server:
        settings = get_settings(osrm_url=server.url, matrix_provider="osrm")
        deps = make_route_deps(settings)
        result = plan_route(RouteRequest(origin=ORIGIN, destination=DESTINATION, stops=STOPS[:n]), deps)
        return len(server.requests), result.optimal


def main() -> None:
    print("## Upstream map-API calls per route plan\n")
    print("| stops | ours (measured: /table + /route) | optimal | seed: per-leg, every permutation | seed: per-leg with a perfect cache | seed's limit (≤ 20 permutations) |")
    print("|---|---|---|---|---|---|")
    for n in (5, 8, 12):
        calls, optimal = ours(n)
        seed = math.factorial(n) * (n + 1)
        cached = n * (n + 1)
        refused = "refused" if math.factorial(n) > 20 else "ok"
        print(f"| {n} | {calls} | {optimal} | {seed:,} | {cached} | {refused} |")


if __name__ == "__main__":
    main()

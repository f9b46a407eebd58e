"""A fake Nominatim: ``GET /search?format=jsonv2&q=...`` answered from a dict tests fill in.

``results`` maps the ``q`` text to a list of jsonv2 result objects (see
:func:`result` for one in Nominatim's shape). Unknown queries get ``[]``.

Run it: ``python -m tests.fakes.nominatim --port 5003`` (then NOMINATIM_URL=http://127.0.0.1:5003).
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.server import FakeServer, Request, Response, serve_main


def result(name: str, lat: float, lon: float, *, state: str = "", country: str = "", cc: str = "",
           osm_id: int = 1, name_zh: str = "") -> dict[str, Any]:
    """One ``format=jsonv2&addressdetails=1&namedetails=1`` result, as Nominatim sends it."""
    names = {"name": name, "name:en": name}
    if name_zh:
        names["name:zh"] = name_zh
    return {
        "place_id": 100000 + osm_id, "licence": "Data © OpenStreetMap contributors, ODbL 1.0.",
        "osm_type": "relation", "osm_id": osm_id, "lat": f"{lat:.7f}", "lon": f"{lon:.7f}",
        "category": "boundary", "type": "administrative", "place_rank": 12, "importance": 0.8,
        "addresstype": "city", "name": name,
        "display_name": ", ".join(x for x in (name, state, country) if x),
        "address": {"city": name, "state": state, "country": country, "country_code": cc.lower()},
        "namedetails": names,
        "boundingbox": [f"{lat - 0.1:.7f}", f"{lat + 0.1:.7f}", f"{lon - 0.1:.7f}", f"{lon + 0.1:.7f}"],
    }


class FakeNominatim(FakeServer):
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.route("GET", r"/search/?", self._search)

    def _search(self, req: Request, m: re.Match[str]) -> Any:
        if req.params.get("format") not in ("json", "jsonv2"):
            return Response(400, {"error": {"code": 400, "message": "Parameter 'format' must be json or jsonv2 here"}})
        limit = int(req.params.get("limit", "10"))
        return self.results.get(req.params.get("q", ""), [])[:limit]


if __name__ == "__main__":
    serve_main(lambda host, port: FakeNominatim(host, port), "Fake Nominatim (/search)", 5003)

"""Whether a request is a business trip: the words of ``data/purpose.yaml``.

The same list is the routing rules' ``{{business}}`` word list (:mod:`navigo_core.intent.rules`
reads it from here), so "a trip with a client" is business for the router and the planner alike.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from navigo_core.safe_yaml import read_yaml


PURPOSE_FILE = Path(__file__).parent / "data" / "purpose.yaml"


@lru_cache(maxsize=1)
def word_lists() -> dict[str, list[str]]:
    """The named word lists of the purpose file (``business``)."""
    data = read_yaml(PURPOSE_FILE) or {}
    return {str(k): [str(p) for p in (v if isinstance(v, list) else [v])] for k, v in data.items()}


@lru_cache(maxsize=1)
def _business() -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in word_lists()["business"]), re.ASCII)


def is_business(text: str) -> bool:
    """The text says the trip is for work (出差, client, conference, …)."""
    return bool(text) and _business().search(unicodedata.normalize("NFKC", text).lower()) is not None


__all__ = ["PURPOSE_FILE", "is_business", "word_lists"]

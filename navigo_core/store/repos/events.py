"""Intent-routing events and the Router lab's aggregates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, func, select

from navigo_core.store.engine import _begin_write, _retried, _utcnow
from navigo_core.store.schema import LAYERS, intent_events


class EventRepo:
    """Intent-routing events: one row per message, and the hit-rate aggregates of the Router lab."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @_retried
    def record(self, layer: str, intent: str, score: float | None, latency_ms: Mapping[str, float],
               lang: str, text: str | None = None) -> int:
        """Store one event; ``latency_ms`` maps L1/L2/L3 to the ms of each layer that ran. Returns the id."""
        if layer not in LAYERS:
            raise ValueError(f"layer must be one of {LAYERS}, not {layer!r}")
        lat = {k: float(v) for k, v in latency_ms.items() if k in LAYERS}
        with _begin_write(self.engine) as conn:
            result = conn.execute(
                intent_events.insert().values(
                    created_at=_utcnow(),
                    layer=layer,
                    intent=intent[:40],
                    score=None if score is None else float(score),
                    l1_ms=lat.get("L1"),
                    l2_ms=lat.get("L2"),
                    l3_ms=lat.get("L3"),
                    total_ms=sum(lat.values()),
                    lang=(lang or "")[:5],
                    text=text,
                )
            )
        return int(result.inserted_primary_key[0])

    def count(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(intent_events)).scalar_one())

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first, every column."""
        stmt = select(intent_events).order_by(intent_events.c.id.desc()).limit(limit)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(stmt)]

    def layer_stats(self) -> list[dict[str, Any]]:
        """Per layer: messages answered, share of all messages, hit rate among the messages that
        reached the layer, and the mean latency of that layer (over the messages it ran on)."""
        lat_cols = {"L1": intent_events.c.l1_ms, "L2": intent_events.c.l2_ms, "L3": intent_events.c.l3_ms}
        with self.engine.connect() as conn:
            # rows are read by index: mypy types an unpacked Row as object, an indexed one as Any
            answered: dict[str, int] = {row[0]: row[1] for row in conn.execute(
                select(intent_events.c.layer, func.count()).group_by(intent_events.c.layer))}
            means = {k: conn.execute(select(func.avg(c), func.count(c))).one() for k, c in lat_cols.items()}
        total = sum(answered.values())
        out: list[dict[str, Any]] = []
        reached = total
        for layer in LAYERS:
            n = int(answered.get(layer, 0))
            mean, ran = means[layer][0], means[layer][1]
            out.append({
                "layer": layer,
                "answered": n,
                "share": n / total if total else 0.0,
                "reached": reached,
                "hit_rate": n / reached if reached else 0.0,
                "mean_ms": float(mean) if mean is not None else None,
                "ran": int(ran),
            })
            reached -= n
        return out

    def intent_stats(self) -> list[dict[str, Any]]:
        """Per primary intent: total messages and how many each layer answered (most frequent first)."""
        stmt = select(intent_events.c.intent, intent_events.c.layer, func.count()).group_by(
            intent_events.c.intent, intent_events.c.layer)
        rows: dict[str, dict[str, Any]] = {}
        with self.engine.connect() as conn:
            for found in conn.execute(stmt):
                intent, layer, n = found[0], found[1], found[2]  # by index: see layer_stats
                row = rows.setdefault(intent, {"intent": intent, "total": 0, **{k: 0 for k in LAYERS}})
                row[layer] = int(n)
                row["total"] += int(n)
        for row in rows.values():
            for k in LAYERS:
                row[f"{k}_share"] = row[k] / row["total"] if row["total"] else 0.0
        return sorted(rows.values(), key=lambda r: (-r["total"], r["intent"]))

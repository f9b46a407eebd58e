"""Router lab: explain how each message is routed, one message or a whole file.

It sits above both the intent router and the scene gate (it uses both), so it
lives at the top of the core rather than inside either package.

For every message the lab shows each layer's own decision (all three layers run,
even when an earlier one would have stopped the pipeline), what the router
actually answered, and the scene ``gate_classify`` chose. Pages render the rows;
nothing here imports streamlit.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from typing import Any

from navigo_core.errors import InputError
from navigo_core.intent.models import IntentResult
from navigo_core.scenes import gate_classify

MAX_LAB_ROWS = 2000  # a bigger file is cut, and the page says so


def parse_messages(filename: str, data: bytes) -> list[dict[str, str]]:
    """Messages from an uploaded CSV (a ``text`` column, or the first column) or JSONL file.

    Each row is ``{"text": ..., "intent": <label or "">}``. Raises InputError naming the
    problem (bad encoding, no text column, a bad JSON line).
    """
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError("lab.bad_encoding", name=filename) from exc
    rows: list[dict[str, str]] = []
    if filename.lower().endswith((".jsonl", ".json", ".ndjson")):
        for n, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError("lab.bad_json_line", name=filename, line=n, detail=exc.msg) from exc
            if not isinstance(item, dict) or not str(item.get("text", "")).strip():
                raise InputError("lab.no_text", name=filename, line=n)
            rows.append({"text": str(item["text"]), "intent": str(item.get("intent") or "")})
    else:
        reader = csv.DictReader(io.StringIO(content))
        fields = [f.strip().lower() for f in (reader.fieldnames or [])]
        if not fields:
            raise InputError("lab.no_text", name=filename, line=1)
        text_col = (reader.fieldnames or [])[fields.index("text")] if "text" in fields else (reader.fieldnames or [])[0]
        label_col = (reader.fieldnames or [])[fields.index("intent")] if "intent" in fields else None
        for rec in reader:
            text = (rec.get(text_col) or "").strip()
            if text:
                rows.append({"text": text, "intent": (rec.get(label_col) or "").strip() if label_col else ""})
    if not rows:
        raise InputError("lab.empty_file", name=filename)
    return rows[:MAX_LAB_ROWS]


class _Answered:
    """A router stand-in that returns an answer already computed (so the gate routes
    without a second LLM call or a second stored event)."""

    def __init__(self, result: IntentResult) -> None:
        self.result = result

    def route(self, text: str) -> IntentResult:
        return self.result


def explain_message(router: Any, gate_context: Any, text: str, *, run_llm: bool = True) -> dict[str, Any]:
    """One message: every layer's decision, the router's answer and the chosen scene.

    The router answers once (one stored event; the LLM only when L1 and L2 miss).
    Layers the pipeline did not reach are run for the lab's sake, the LLM only
    when ``run_llm`` (the batch view passes False to avoid one call per row).
    """
    result: IntentResult = router.route(text)
    ran = {trace.layer: trace for trace in result.trace}
    missing_llm = run_llm and "L3" not in ran
    layers = [ran.get(t.layer, t) for t in router.explain(text, run_llm=missing_llm)]
    decision = gate_classify(text, replace(gate_context, router=_Answered(result)))
    return {
        "text": text,
        "layers": layers,
        "intent": result.primary_intent,
        "source": result.source,
        "scene": decision.scene_id,
        "step": decision.step,
        "reason": decision.reason,
        "gate_ms": decision.latency_ms,
        "result": result.public_dict(),
    }


def batch_rows(router: Any, gate_context: Any, messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """A flat table row per message, for the lab's batch view."""
    out = []
    for msg in messages:
        info = explain_message(router, gate_context, msg["text"], run_llm=False)
        row: dict[str, Any] = {"text": msg["text"]}
        for trace in info["layers"]:
            row[f"{trace.layer} intent"] = trace.intent if trace.hit else "—"
            row[f"{trace.layer} score"] = None if trace.score is None else round(trace.score, 3)
            row[f"{trace.layer} ms"] = round(trace.latency_ms, 3)
        row.update({"intent": info["intent"], "layer": info["source"], "scene": info["scene"]})
        if msg.get("intent"):
            row["label"] = msg["intent"]
            row["correct"] = msg["intent"] == info["intent"]
        out.append(row)
    return out

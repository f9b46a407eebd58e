"""Router lab: explain how each message is routed, one message or a whole file.

It sits above both the intent router and the scene gate (it uses both), so it
lives at the top of the core rather than inside either package.

For every message the lab shows each layer's own decision (all three layers run,
even when an earlier one would have stopped the pipeline), what the router
actually answered, and the scene ``gate_classify`` chose. Pages render the rows;
nothing here imports streamlit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from navigo_core.errors import InputError
from navigo_core.intent.models import IntentResult
from navigo_core.intent.router import LAYER_OF_SOURCE
from navigo_core.limits import check_message, check_upload
from navigo_core.limits import current as current_limits
from navigo_core.scenes import gate_classify



def parse_messages(filename: str, data: bytes | str) -> list[dict[str, str]]:
    """Messages from an uploaded CSV (a ``text`` column, or the first column) or JSONL file.

    Each row is ``{"text": ..., "intent": <label or "">}``. The encoding (UTF-8 with or without BOM,
    UTF-16 with a BOM, GB18030/GBK), the CSV delimiter and any line ending are detected
    (:mod:`navigo_core.tabular`). Raises InputError naming the problem and its row or line (bad
    encoding, no text column, a bad JSON line, a CSV record that cannot be read); never a ``csv.Error``.
    A file over the upload limits (size, rows: :mod:`navigo_core.limits`) is refused before it is read.
    """
    from navigo_core.tabular import decode, read_rows, sniff_delimiter

    check_upload(data, filename)

    try:
        content = decode(data, filename)
    except InputError as exc:
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
            except (RecursionError, ValueError) as exc:  # nested too deep, a number too big
                raise InputError("lab.bad_json_line", name=filename, line=n, detail=type(exc).__name__) from exc
            if not isinstance(item, dict) or not isinstance(item.get("text"), (str, int, float)) \
                    or not str(item.get("text", "")).strip():
                raise InputError("lab.no_text", name=filename, line=n)
            rows.append({"text": str(item["text"]), "intent": str(item.get("intent") or "")})
    else:
        records = read_rows(content, sniff_delimiter(content, ("text", "intent")))
        header: list[str] | None = None
        text_col, label_col = 0, None
        for n, cells, problem in records:
            if problem is not None:
                raise InputError("lab.bad_csv_row", name=filename, line=n)
            assert cells is not None
            if header is None:
                header = [c.strip().lower() for c in cells]
                if not any(header):
                    raise InputError("lab.no_text", name=filename, line=1)
                text_col = header.index("text") if "text" in header else 0
                label_col = header.index("intent") if "intent" in header else None
                continue
            text = cells[text_col].strip() if text_col < len(cells) else ""
            if text:
                label = cells[label_col].strip() if label_col is not None and label_col < len(cells) else ""
                rows.append({"text": text, "intent": label})
        if header is None:
            raise InputError("lab.no_text", name=filename, line=1)
    if not rows:
        raise InputError("lab.empty_file", name=filename)
    return rows


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
    when ``run_llm`` (the batch view passes False to avoid one call per row). A message over the
    length limit raises ``InputError("limits.message_too_long")`` before any layer runs.
    """
    check_message(text)
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
        "layer": LAYER_OF_SOURCE.get(result.source),
        "scene": decision.scene_id,
        "step": decision.step,
        "reason": decision.reason,
        "gate_ms": decision.latency_ms,
        "result": result.public_dict(),
    }


def batch_rows(router: Any, gate_context: Any, messages: list[dict[str, str]]) -> list[dict[str, Any]]:
    """A flat table row per message, for the lab's batch view."""
    out = []
    limit = current_limits().message_chars
    for msg in messages:  # a row longer than a chat message may be is routed as far as the chat reads
        info = explain_message(router, gate_context, msg["text"][:limit], run_llm=False)
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

"""Structured output: how to ask a model for JSON matching a pydantic model, and how to read it.

Pure functions, no HTTP: :class:`~navigo_core.llm.client.LLMClient` sends what
these build. Three strategies:

``json_schema``
    Native structured output: ``response_format={"type": "json_schema", ...}``
    with the strict schema the ``openai`` SDK's own ``chat.completions.parse``
    sends (OpenAI, vLLM, Ollama, most compatible servers).
``json_object``
    JSON mode: ``response_format={"type": "json_object"}``, with the JSON schema
    in the system prompt (DeepSeek rejects ``json_schema``; DashScope supports
    ``json_object``). The prompt says "JSON", which JSON mode requires.
``prompt``
    No ``response_format``; the system prompt asks for one JSON object only.
    The reply may still come wrapped in prose or code fences: the first JSON
    object in the text is taken.

Every strategy validates the reply with pydantic. A reply that does not parse or
validate gets exactly one repair turn (:func:`repair_messages` quotes the bad
output and the error); the client raises ``LLMInvalidOutput`` if that fails too.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeVar, get_args

from openai.lib import type_to_response_format_param
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
Strategy = Literal["json_schema", "json_object", "prompt"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

# auto: providers known to reject (or not to support) native json_schema use JSON mode instead.
JSON_OBJECT_PROVIDERS = frozenset({"deepseek", "dashscope"})

MAX_QUOTED_CHARS = 2000  # how much of a bad reply the repair turn quotes
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def choose_strategy(provider: str, setting: str = "auto") -> Strategy:
    """The strategy for ``provider`` under the ``llm_structured_output`` setting.

    ``auto``: ``json_object`` for DeepSeek and DashScope, ``json_schema`` for the rest.
    """
    for strategy in STRATEGIES:
        if setting == strategy:
            return strategy
    if setting != "auto":
        raise ValueError(f"unknown structured-output strategy {setting!r}; use auto or one of {STRATEGIES}")
    return "json_object" if provider in JSON_OBJECT_PROVIDERS else "json_schema"


def response_format(schema: type[BaseModel], strategy: Strategy) -> dict[str, Any] | None:
    """The ``response_format`` request field of ``strategy`` (None: leave it out)."""
    if strategy == "json_schema":
        return dict(type_to_response_format_param(schema))  # type: ignore[arg-type]
    if strategy == "json_object":
        return {"type": "json_object"}
    return None


def schema_instruction(schema: type[BaseModel], strategy: Strategy) -> str:
    """The system-prompt text that asks for ``schema`` (empty for ``json_schema``: the API enforces it)."""
    if strategy == "json_schema":
        return ""
    schema_json = json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))
    return (
        "Answer with a single JSON object that validates against this JSON schema, "
        "and nothing else: no prose, no code fences.\n"
        f"JSON schema: {schema_json}"
    )


def build_messages(messages: list[dict[str, str]], schema: type[BaseModel], strategy: Strategy) -> list[dict[str, str]]:
    """``messages`` with the strategy's instruction added to the system prompt (a new one if none)."""
    instruction = schema_instruction(schema, strategy)
    out = [dict(m) for m in messages]
    if not instruction:
        return out
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content', '')}\n\n{instruction}".strip()
    else:
        out.insert(0, {"role": "system", "content": instruction})
    return out


def extract_json(text: str) -> str:
    """The first JSON object in ``text`` (code fences stripped); the text itself when there is none.

    Returning the text unchanged lets the JSON parser report the real error.
    """
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", candidate):
        try:
            _, end = decoder.raw_decode(candidate, match.start())
        except json.JSONDecodeError:
            continue
        return candidate[match.start():end]
    return candidate.strip()


def parse_reply(text: str, schema: type[T]) -> T:
    """Validate the model's reply into ``schema``; raises ``ValidationError`` (bad JSON included)."""
    return schema.model_validate_json(extract_json(text))


def describe_error(exc: ValidationError | ValueError) -> str:
    """A short, one-line description of why a reply was rejected (no pydantic URLs, no input dumps)."""
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors(include_url=False, include_input=False):
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            parts.append(f"{loc}: {err['msg']}")
        return "; ".join(parts)
    return str(exc)


def repair_messages(messages: list[dict[str, str]], bad_output: str, error: str) -> list[dict[str, str]]:
    """``messages`` plus the bad reply and one user turn quoting the error, asking for corrected JSON."""
    quoted = bad_output if len(bad_output) <= MAX_QUOTED_CHARS else bad_output[:MAX_QUOTED_CHARS] + "…"
    return [
        *messages,
        {"role": "assistant", "content": quoted},
        {"role": "user", "content": (
            "Your previous answer could not be used.\n"
            f"Error: {error}\n"
            "Reply again with only the corrected JSON object, matching the schema exactly."
        )},
    ]

"""Which OpenAI-compatible server a base URL points at (a guess, for display and strategy choice).

The guess only picks defaults (the structured-output strategy, the max-tokens
field); every server is spoken to through the same ``openai`` SDK client.
"""

from __future__ import annotations

from urllib.parse import urlsplit

OPENAI_BASE_URL = "https://api.openai.com/v1"

# (provider, substrings of the lower-cased host or path that identify it), first match wins.
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("openai", ("api.openai.com",)),
    ("deepseek", ("deepseek",)),
    ("dashscope", ("dashscope", "/compatible-mode/")),
    ("ark", ("volces.com", "volcengine", "ark.cn-")),
    ("ollama", ("ollama", ":11434")),
    ("vllm", ("vllm",)),
)


def detect_provider(base_url: str) -> str:
    """A short provider name for ``base_url``: openai, deepseek, dashscope, ark, ollama, vllm or other.

    An empty URL means the SDK's default, OpenAI.
    """
    if not base_url.strip():
        return "openai"
    parts = urlsplit(base_url.strip().lower())
    where = f"{parts.netloc}{parts.path.rstrip('/')}/"
    for provider, markers in _MARKERS:
        if any(marker in where for marker in markers):
            return provider
    return "other"

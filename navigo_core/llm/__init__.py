"""The LLM layer: one client for any OpenAI-compatible server (see :mod:`navigo_core.llm.client`).

Callers use :func:`make_llm_client` (None without an API key: use the offline
engine) and the :class:`LLMClient` methods ``complete``, ``structured``,
``stream`` and ``embed``. Failures are :class:`~navigo_core.errors.LLMError`
subclasses, never raw SDK exceptions.
"""

from navigo_core.llm.client import LLMClient, make_llm_client
from navigo_core.llm.providers import detect_provider
from navigo_core.llm.structured import STRATEGIES, Strategy, choose_strategy

__all__ = ["STRATEGIES", "LLMClient", "Strategy", "choose_strategy", "detect_provider", "make_llm_client"]

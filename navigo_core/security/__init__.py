"""The risk guard: prompt-injection and unsafe-output detection.

* :func:`normalize` — NFKC, invisible characters removed, homoglyphs folded, case-folded.
* :func:`detect_prompt_injection` — rule flags ``BLOCKED_PROMPT_INJECTION:<rule_id>`` for input.
* :func:`detect_unsafe_output` — rule flags ``UNSAFE_OUTPUT:<rule_id>`` for generated plans.
* :func:`llm_scan` — optional LLM verdict (``BLOCKED_PROMPT_INJECTION:llm``; ``[]`` on LLM errors).
* :func:`scan_input` — rules first, then the LLM only when the rules found nothing.

Rules: ``navigo_core/security/data/*.yaml``. No streamlit, no network (except ``llm_scan``).
"""

from navigo_core.security.llm_scan import LLM_FLAG, InjectionVerdict, llm_scan, llm_scan_checked, scan_input
from navigo_core.security.normalize import normalize
from navigo_core.security.rules import (
    INJECTION_PREFIX,
    UNSAFE_PREFIX,
    detect_prompt_injection,
    detect_unsafe_output,
)

__all__ = [
    "INJECTION_PREFIX", "LLM_FLAG", "UNSAFE_PREFIX", "InjectionVerdict", "detect_prompt_injection",
    "detect_unsafe_output", "llm_scan", "llm_scan_checked", "normalize", "scan_input",
]

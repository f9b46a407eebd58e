"""The applications' errors: :class:`ApplicationError` (an ``InputError``) with i18n codes ``application.error.*``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from navigo_core.business.applications.render import fields_text
from navigo_core.errors import InputError, NavigoError
from navigo_core.i18n import t

if TYPE_CHECKING:  # pragma: no cover
    from navigo_core.business.applications.models import Application


class ApplicationError(InputError):
    default_code = "application.error.generic"


class PolicyUnavailable(ApplicationError):
    """No readable travel policy (the file is missing, broken or unreadable, even one deleted while the app
    runs): drafting, submitting and checking claims are refused (fail closed), never "complies"."""

    default_code = "application.error.no_policy"
    about_input = False  # the administrator's file, not the request: the turn failed (Retry once it is fixed)

    def __init__(self, reason: Any = None) -> None:
        self.reason = reason  # the PolicyError (rendered in the caller's language) or a text
        super().__init__(self.default_code)

    def message(self, lang: str = "en") -> str:
        from navigo_core.errors import clip
        from navigo_core.redact import redact

        if self.reason is None:
            return t("application.error.no_policy_bare", lang)
        why = self.reason.message(lang) if isinstance(self.reason, NavigoError) else str(self.reason)
        return redact(t(self.code, lang, reason=clip(why, 400)))


class IncompleteApplication(ApplicationError):
    """A draft that misses required fields (``missing``: field names) cannot be submitted; the message lists
    them in the reader's language."""

    default_code = "application.error.incomplete"

    def __init__(self, number: str, missing: Iterable[str]) -> None:
        self.missing = list(missing)
        super().__init__(self.default_code, number=number)

    def message(self, lang: str = "en") -> str:
        return t(self.code, lang, number=self.params.get("number", ""), missing=fields_text(self.missing, lang))


class AmbiguousApplication(ApplicationError):
    """Several applications match a description; ``candidates`` lists them (ask, never guess)."""

    def __init__(self, code: str, /, *, candidates: list[Application], query: str = "", **params: Any) -> None:
        self.candidates = list(candidates)
        listing = "; ".join(f"{a.number} ({a.short()})" for a in self.candidates)
        super().__init__(code, query=query, candidates=listing, **params)

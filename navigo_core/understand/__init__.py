"""Understanding what people write: the one place that turns text into request fields.

Public API::

    parse_request(text, *, today, lang=None, places=None, llm=None) -> ParsedRequest
    update_request(previous, text, *, today, places=None, expect=None, llm=None) -> ParsedRequest

Parts (each usable alone): :mod:`.dates` (absolute, relative, ranges, holidays, months and
seasons, durations), :mod:`.travellers`, :mod:`.money` (budgets and currencies),
:mod:`.numbers` (Chinese and mixed numerals), :mod:`.places` (finding place words and
resolving them by context), :mod:`.interests`, :mod:`.llm` (reconciling with a model).
Data files live in ``data/``.
"""

from navigo_core.understand.dates import DateResult, parse_dates
from navigo_core.understand.interests import canonical_interest, interest_label, interest_lexicon, parse_interests
from navigo_core.understand.models import Ambiguity, Money, ParsedRequest
from navigo_core.understand.money import BudgetResult, currency_code, parse_budget
from navigo_core.understand.numbers import normalize_text, parse_amount, parse_number, zh_number
from navigo_core.understand.parse import DEFAULT_CURRENCY, parse_request, update_request
from navigo_core.understand.route import RouteReading, parse_route, place_list, update_route
from navigo_core.understand.travellers import TravellerResult, parse_travellers

__all__ = [
    "DEFAULT_CURRENCY", "Ambiguity", "BudgetResult", "DateResult", "Money", "ParsedRequest", "RouteReading",
    "TravellerResult", "canonical_interest", "currency_code", "interest_label", "interest_lexicon",
    "normalize_text", "parse_amount", "parse_budget", "parse_dates", "parse_interests", "parse_number",
    "parse_request", "parse_route", "parse_travellers", "place_list", "update_request", "update_route", "zh_number",
]

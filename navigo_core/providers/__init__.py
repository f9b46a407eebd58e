"""External data behind small protocols: one folder per kind, each with an offline default.

Which provider of each kind is used is decided in one place, :mod:`navigo_core.providers.selection`
(re-exported here): :func:`choices` and :func:`make_providers`.
"""

from navigo_core.providers.selection import (
    KINDS,
    Kind,
    ProviderChoice,
    Providers,
    choice,
    choices,
    make_providers,
    names_known,
)

__all__ = ["KINDS", "Kind", "ProviderChoice", "Providers", "choice", "choices", "make_providers", "names_known"]

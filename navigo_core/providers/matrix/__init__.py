"""Distance/duration matrices and route lines.

:func:`make_matrix_provider` picks ``offline`` (estimate, default), ``osrm`` (OSRM_URL,
one request per matrix) or ``amap`` (AMAP_KEY, one request per destination).
"""

from __future__ import annotations

import httpx

from navigo_core.config import Settings
from navigo_core.errors import ProviderNotConfigured
from navigo_core.providers.matrix.amap import AmapMatrixProvider
from navigo_core.providers.matrix.base import Matrix, MatrixProvider
from navigo_core.providers.matrix.offline import OfflineMatrixProvider, estimate_duration_s
from navigo_core.providers.matrix.osrm import OsrmMatrixProvider

__all__ = [
    "AmapMatrixProvider", "Matrix", "MatrixProvider", "OfflineMatrixProvider", "OsrmMatrixProvider",
    "estimate_duration_s", "make_matrix_provider",
]

MATRIX_PROVIDERS = ("offline", "osrm", "amap")


def make_matrix_provider(settings: Settings, *, name: str | None = None,
                         client: httpx.Client | None = None) -> MatrixProvider:
    """The matrix provider ``name`` ("offline" | "osrm" | "amap"; default ``settings.effective_matrix_provider``).

    Raises ``ProviderNotConfigured`` naming the setting to set (OSRM_URL, AMAP_KEY)
    when the chosen provider lacks it, or when ``name`` is unknown.
    """
    choice = settings.effective_matrix_provider if name in (None, "", "auto") else name
    timeout = settings.provider_timeout_s
    if choice == "offline":
        return OfflineMatrixProvider(settings.circuity_factor)
    if choice == "osrm":
        if not settings.osrm_url:
            raise ProviderNotConfigured("matrix.osrm_not_configured", provider="OSRM")
        return OsrmMatrixProvider(settings.osrm_url, profile=settings.osrm_profile, timeout_s=timeout, client=client)
    if choice == "amap":
        if not settings.amap_key:
            raise ProviderNotConfigured("provider.amap_not_configured", provider="AMap")
        return AmapMatrixProvider(settings.amap_key, base_url=settings.amap_base_url, timeout_s=timeout, client=client)
    raise ProviderNotConfigured("matrix.unknown_provider", provider="matrix", name=choice)

"""The matrix type and the protocol every distance/duration provider implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from navigo_core.providers.places.base import Place


class Matrix(BaseModel):
    """All-pairs road distances (m) and durations (s); entry [i][j] is from i to j."""

    distance_m: list[list[float]]
    duration_s: list[list[float]]
    provider: str
    estimated: bool  # True when the figures are estimates, not a routing engine's
    requests: int = 1  # upstream HTTP requests this matrix cost


@runtime_checkable
class MatrixProvider(Protocol):
    name: str
    estimated: bool

    def matrix(self, points: list[Place]) -> Matrix:
        """One matrix for all pairs of ``points`` (never one call per leg)."""
        ...

    def geometry(self, points: list[Place]) -> list[tuple[float, float]] | None:
        """The road line through ``points`` in order, as WGS-84 ``(lat, lon)``; None when the provider has none."""
        ...

"""Route planning: visit-order optimisation."""

from navigo_core.route.solver import SolveResult, optimize

__all__ = ["SolveResult", "optimize"]

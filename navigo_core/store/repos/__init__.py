"""The store's repositories, one module each; they take and return plain dicts, never ORM objects."""

from __future__ import annotations

from navigo_core.store.repos.applications import ApplicationRepo
from navigo_core.store.repos.claims import ClaimRepo
from navigo_core.store.repos.events import EventRepo
from navigo_core.store.repos.plans import PlanRepo
from navigo_core.store.repos.profiles import ProfileRepo
from navigo_core.store.repos.routes import RouteRepo
from navigo_core.store.repos.threads import ThreadRepo

__all__ = ["ApplicationRepo", "ClaimRepo", "EventRepo", "PlanRepo", "ProfileRepo", "RouteRepo", "ThreadRepo"]

"""Reading the travel-policy YAML: the shipped default, an administrator's file, the limits every file is held to.

The policy is administrator-editable YAML (``data/travel_policy.yaml`` is the shipped default;
``Settings.travel_policy_file`` points at another file). It is validated on load; every problem
raises :class:`PolicyError` naming the file, the YAML path and how to fix it.
:func:`policy_status` never raises, so the app still starts with a broken file.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from navigo_core.business.policy.models import PolicyError, TravelPolicy, parse_policy
from navigo_core.i18n import t
from navigo_core.safe_yaml import YamlLimits, read_bounded_yaml

DEFAULT_POLICY_FILE = Path(__file__).resolve().parent / "data" / "travel_policy.yaml"


# Limits of a policy file: an administrator's policy is a few kilobytes, a crafted one must not hang the
# app (``policy_status`` runs on every page): size, anchors/aliases, nesting depth, nodes once expanded.
MAX_POLICY_BYTES = 256_000
LIMITS = YamlLimits(max_bytes=MAX_POLICY_BYTES, max_aliases=100, max_depth=20, max_nodes=100_000)


def _read(path: Path) -> TravelPolicy:
    file = str(path)

    def fail(kind: str, **params: str) -> PolicyError:
        return PolicyError(f"policy.error.{kind}", file=file, where="-", **params)

    return parse_policy(read_bounded_yaml(path, LIMITS, fail), file)


@lru_cache(maxsize=1)
def default_policy() -> TravelPolicy:
    """The shipped policy (cached)."""
    return _read(DEFAULT_POLICY_FILE)


def load_policy(path: str | Path | None = None) -> TravelPolicy:
    """The policy in ``path`` (None or "": the shipped default, cached), validated."""
    if path is None or str(path).strip() == "":
        return default_policy()
    p = Path(path).expanduser()
    if p.resolve() == DEFAULT_POLICY_FILE:
        return default_policy()
    try:
        mtime = p.stat().st_mtime_ns
    except OSError:
        return _read(p)  # raises the specific "not found" error
    try:
        size = p.stat().st_size
    except OSError:
        size = -1
    found = _read_cached(str(p.resolve()), mtime, size)
    if isinstance(found, PolicyError):
        raise PolicyError(found.code, **found.params)
    return found


@lru_cache(maxsize=8)
def _read_cached(path: str, mtime_ns: int, size: int) -> TravelPolicy | PolicyError:
    """A custom policy file, read and validated once per version (keyed by its modification time and size),
    so pages and scenes that ask on every run do not re-read it, and an administrator's edit still
    takes effect. A broken version is remembered too (its error), so a crafted file costs one read."""
    try:
        return _read(Path(path))
    except PolicyError as exc:
        return exc


def policy_status(path: str | Path | None = None, lang: str = "en") -> tuple[TravelPolicy | None, str | None]:
    """``(policy, None)`` or ``(None, error message in lang)``; never raises."""
    try:
        return load_policy(path), None
    except PolicyError as exc:
        return None, exc.message(lang)
    except Exception as exc:  # noqa: BLE001 - the app must start whatever the file holds
        return None, t("policy.error.unexpected", lang, file=str(path or DEFAULT_POLICY_FILE), detail=str(exc)[:300])


def policy_for_settings(settings: Any = None) -> TravelPolicy:
    """The policy named by ``settings.travel_policy_file`` (default: the shipped one)."""
    return load_policy(getattr(settings, "travel_policy_file", "") or None)

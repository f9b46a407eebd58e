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

import yaml

from navigo_core.business.policy.models import PolicyError, TravelPolicy, parse_policy
from navigo_core.i18n import t

DEFAULT_POLICY_FILE = Path(__file__).resolve().parent / "data" / "travel_policy.yaml"


# Limits of a policy file: an administrator's policy is a few kilobytes, a crafted one must not hang the
# app (``policy_status`` runs on every page): size, anchors/aliases, nesting depth, nodes once expanded.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: the same rules, faster
MAX_POLICY_BYTES = 256_000
MAX_POLICY_ALIASES = 100
MAX_POLICY_DEPTH = 20
MAX_POLICY_NODES = 100_000


def _check_structure(text: str, file: str) -> None:
    """Walk the YAML events once (linear in the text) and refuse, before anything is built, a document
    with too many aliases, too deep a nesting or too many nodes once aliases are expanded (an alias bomb)."""
    sizes: dict[str, int] = {}  # anchor → nodes it stands for
    stack: list[list[Any]] = [[None, 0]]  # per open collection: [anchor, nodes inside]
    aliases = 0
    total = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_POLICY_ALIASES:
                raise PolicyError("policy.error.too_complex", file=file, where="-",
                                  detail=f"more than {MAX_POLICY_ALIASES} aliases")
            n = sizes.get(str(event.anchor), 1)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 0])
            if len(stack) - 1 > MAX_POLICY_DEPTH:
                raise PolicyError("policy.error.too_complex", file=file, where="-",
                                  detail=f"nested deeper than {MAX_POLICY_DEPTH} levels")
            continue
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, inside = stack.pop()
            n = inside + 1
            if anchor is not None:
                sizes[str(anchor)] = n
        elif isinstance(event, yaml.ScalarEvent):
            n = 1
            if event.anchor is not None:
                sizes[str(event.anchor)] = 1
        else:
            continue
        stack[-1][1] += n
        total += n if isinstance(event, yaml.AliasEvent) else 1
        if stack[-1][1] > MAX_POLICY_NODES or total > MAX_POLICY_NODES:
            raise PolicyError("policy.error.too_complex", file=file, where="-",
                              detail=f"more than {MAX_POLICY_NODES:,} values once aliases are expanded")


def _read(path: Path) -> TravelPolicy:
    file = str(path)
    if not path.is_file():
        raise PolicyError("policy.error.not_found", file=file, where="-")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyError("policy.error.unreadable", file=file, where="-", detail=exc.strerror or type(exc).__name__) from exc
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyError("policy.error.too_large", file=file, where="-", max=f"{MAX_POLICY_BYTES:,}")
    try:
        text = data.decode("utf-8-sig")
        _check_structure(text, file)
        raw = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise PolicyError("policy.error.yaml", file=file, where="-", detail=str(exc).replace("\n", " ")[:300]) from exc
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise PolicyError("policy.error.too_complex", file=file, where="-", detail="nested too deep") from exc
    return parse_policy(raw, file)


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

"""Reading roles.yaml: the shipped default, an administrator's file, the limits every file is held to.

The roles file is administrator-editable YAML (``data/roles.yaml`` is the shipped default with sample users;
``Settings.roles_file`` points at another file). It is validated on load; every problem raises
:class:`AuthConfigError` naming the file, the YAML path and how to fix it. The file is read as the travel
policy is (``business/policy/loading.py``): a size cap before parsing, then one linear walk over the YAML
events that refuses too many aliases, too deep a nesting or too many nodes once aliases are expanded,
then the safe loader. :func:`roles_status` never raises, so the app still starts with a broken file.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from navigo_core.auth.models import AuthConfigError, RolesConfig, parse_roles

DEFAULT_ROLES_FILE = Path(__file__).resolve().parent / "data" / "roles.yaml"

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: the same rules, faster
MAX_ROLES_BYTES = 1_000_000
MAX_ROLES_ALIASES = 100
MAX_ROLES_DEPTH = 10
MAX_ROLES_NODES = 200_000


def _too_complex(file: str, detail: str) -> AuthConfigError:
    return AuthConfigError("auth.error.too_complex", file=file, where="-", detail=detail)


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
            if aliases > MAX_ROLES_ALIASES:
                raise _too_complex(file, f"more than {MAX_ROLES_ALIASES} aliases")
            n = sizes.get(str(event.anchor), 1)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 0])
            if len(stack) - 1 > MAX_ROLES_DEPTH:
                raise _too_complex(file, f"nested deeper than {MAX_ROLES_DEPTH} levels")
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
        if stack[-1][1] > MAX_ROLES_NODES or total > MAX_ROLES_NODES:
            raise _too_complex(file, f"more than {MAX_ROLES_NODES:,} values once aliases are expanded")


def _read(path: Path) -> RolesConfig:
    file = str(path)
    if not path.is_file():
        raise AuthConfigError("auth.error.not_found", file=file, where="-")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_ROLES_BYTES + 1)
    except OSError as exc:
        raise AuthConfigError("auth.error.unreadable", file=file, where="-",
                              detail=exc.strerror or type(exc).__name__) from exc
    if len(data) > MAX_ROLES_BYTES:
        raise AuthConfigError("auth.error.too_large", file=file, where="-", max=f"{MAX_ROLES_BYTES:,}")
    try:
        text = data.decode("utf-8-sig")
        _check_structure(text, file)
        raw = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise AuthConfigError("auth.error.yaml", file=file, where="-",
                              detail=str(exc).replace("\n", " ")[:300]) from exc
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise _too_complex(file, "nested too deep") from exc
    return parse_roles(raw, file)


@lru_cache(maxsize=1)
def default_roles() -> RolesConfig:
    """The shipped roles file (cached)."""
    return _read(DEFAULT_ROLES_FILE)


def load_roles(path: str | Path | None = None) -> RolesConfig:
    """The roles in ``path`` (None or "": the shipped default, cached), validated. A custom file is read once
    per version (its modification time and size), so an administrator's edit takes effect on the next run."""
    if path is None or str(path).strip() == "":
        return default_roles()
    p = Path(path).expanduser()
    if p.resolve() == DEFAULT_ROLES_FILE:
        return default_roles()
    try:
        stat = p.stat()
    except OSError:
        return _read(p)  # raises the specific "not found" error
    found = _read_cached(str(p.resolve()), stat.st_mtime_ns, stat.st_size)
    if isinstance(found, AuthConfigError):
        raise AuthConfigError(found.code, **found.params)
    return found


@lru_cache(maxsize=8)
def _read_cached(path: str, mtime_ns: int, size: int) -> RolesConfig | AuthConfigError:
    """One version of a custom file, read and validated once; a broken version is remembered too (its error)."""
    try:
        return _read(Path(path))
    except AuthConfigError as exc:
        return exc


def roles_for_settings(settings: Any) -> RolesConfig:
    """The roles named by ``settings.roles_file`` (empty: the shipped default)."""
    return load_roles(getattr(settings, "roles_file", "") or None)


def roles_status(path: str | Path | None = None, lang: str = "en") -> tuple[RolesConfig | None, str | None]:
    """``(roles, None)`` or ``(None, error message in lang)``; never raises."""
    try:
        return load_roles(path), None
    except AuthConfigError as exc:
        return None, exc.message(lang)
    except Exception as exc:  # noqa: BLE001 - the app must start whatever the file holds
        return None, AuthConfigError("auth.error.unexpected", file=str(path or DEFAULT_ROLES_FILE), where="-",
                                     detail=str(exc)[:300]).message(lang)

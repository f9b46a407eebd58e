"""Reading roles.yaml: the shipped default, an administrator's file, the limits every file is held to.

The roles file is administrator-editable YAML (``data/roles.yaml`` is the shipped default with sample users;
``Settings.roles_file`` points at another file). It is validated on load; every problem raises
:class:`AuthConfigError` naming the file, the YAML path and how to fix it. The file is read as the travel
policy is, by :func:`navigo_core.safe_yaml.read_bounded_yaml` (size, aliases, depth, expanded nodes). :func:`roles_status` never raises, so the app still starts with a broken file.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from navigo_core.auth.models import AuthConfigError, RolesConfig, parse_roles
from navigo_core.safe_yaml import YamlLimits, read_bounded_yaml

DEFAULT_ROLES_FILE = Path(__file__).resolve().parent / "data" / "roles.yaml"

MAX_ROLES_BYTES = 1_000_000
LIMITS = YamlLimits(max_bytes=MAX_ROLES_BYTES, max_aliases=100, max_depth=10, max_nodes=200_000)


def _read(path: Path) -> RolesConfig:
    file = str(path)

    def fail(kind: str, **params: str) -> AuthConfigError:
        return AuthConfigError(f"auth.error.{kind}", file=file, where="-", **params)

    return parse_roles(read_bounded_yaml(path, LIMITS, fail), file)


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

"""Leaflet served by our own Streamlit server, so maps work with no internet.

The files come from the PyPI package ``django-js-lib-leaflet`` (module
``js_lib_leaflet``) and are copied into ``<app dir>/static/vendor/leaflet/``.
With ``server.enableStaticServing = true`` Streamlit serves ``<app dir>/static/``
at ``/app/static/``; ``static/vendor/`` is git-ignored.
"""

from __future__ import annotations

import os
import tempfile
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from navigo_core.config import PROJECT_ROOT

LEAFLET_PACKAGE = "js_lib_leaflet"
LEAFLET_URL_PREFIX = "/app/static/vendor/leaflet"
LEAFLET_SUBDIR = Path("vendor") / "leaflet"
DEFAULT_STATIC_ROOT = PROJECT_ROOT / "static"
_FILES = ("leaflet.js", "leaflet.css")
_DIRS = ("images",)


def leaflet_source() -> Traversable:
    """The folder of the packaged Leaflet build (leaflet.js, leaflet.css, images/)."""
    return files(LEAFLET_PACKAGE) / "static" / LEAFLET_PACKAGE


def _leaflet_files() -> list[tuple[Traversable, Path]]:
    """``(source, path relative to the target folder)`` of every file to serve."""
    src = leaflet_source()
    pairs = [(src / name, Path(name)) for name in _FILES]
    for folder in _DIRS:
        pairs += [(entry, Path(folder) / entry.name) for entry in (src / folder).iterdir() if entry.is_file()]
    return pairs


def _write_if_changed(data: bytes, target: Path) -> bool:
    """Write ``data`` to ``target`` atomically unless it already holds exactly that; True if written."""
    try:
        if target.stat().st_size == len(data) and target.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)  # atomic: concurrent sessions never see a half-written file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def ensure_leaflet_assets(static_root: Path = DEFAULT_STATIC_ROOT) -> str:
    """Copy Leaflet into ``<static_root>/vendor/leaflet/`` when missing or changed.

    Cheap when up to date (compares bytes, writes nothing), so call it at every
    app start. Returns the URL prefix the files are served at.
    """
    target = Path(static_root) / LEAFLET_SUBDIR
    for source, relative in _leaflet_files():
        _write_if_changed(source.read_bytes(), target / relative)
    return LEAFLET_URL_PREFIX


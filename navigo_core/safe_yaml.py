"""Reading YAML: the project's own data files (:func:`read_yaml`), and an administrator's file within limits (the
travel policy, the roles file).

A size cap before parsing, then one linear walk over the YAML events that refuses too many aliases, too deep a
nesting or too many nodes once aliases are expanded (an alias bomb), then the safe loader. Each caller names its
limits and builds its own error: ``fail(kind, **params)`` with ``kind`` one of ``not_found``, ``unreadable``
(``detail``), ``too_large`` (``max``), ``too_complex`` (``detail``) and ``yaml`` (``detail``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["YamlLimits", "read_bounded_yaml", "read_yaml"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: the same rules, faster


def read_yaml(path: Path | str) -> Any:
    """A data file the project ships (rules, seeds, tables): the safe loader on its UTF-8 text (libyaml when
    available: the L2 examples file loads in 0.1 s instead of 1.5 s). Administrators' files go through
    :func:`read_bounded_yaml`."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_LOADER)  # noqa: S506 - a safe loader


@dataclass(frozen=True)
class YamlLimits:
    max_bytes: int
    max_aliases: int
    max_depth: int
    max_nodes: int


def _check_structure(text: str, limits: YamlLimits, fail: Callable[..., Exception]) -> None:
    """Walk the YAML events once (linear in the text) and refuse, before anything is built, a document
    with too many aliases, too deep a nesting or too many nodes once aliases are expanded (an alias bomb)."""
    sizes: dict[str, int] = {}  # anchor → nodes it stands for
    stack: list[list[Any]] = [[None, 0]]  # per open collection: [anchor, nodes inside]
    aliases = 0
    total = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > limits.max_aliases:
                raise fail("too_complex", detail=f"more than {limits.max_aliases} aliases")
            n = sizes.get(str(event.anchor), 1)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append([event.anchor, 0])
            if len(stack) - 1 > limits.max_depth:
                raise fail("too_complex", detail=f"nested deeper than {limits.max_depth} levels")
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
        if stack[-1][1] > limits.max_nodes or total > limits.max_nodes:
            raise fail("too_complex", detail=f"more than {limits.max_nodes:,} values once aliases are expanded")


def read_bounded_yaml(path: Path, limits: YamlLimits, fail: Callable[..., Exception]) -> Any:
    """The YAML document in ``path``, read within ``limits``; every problem raises ``fail(kind, **params)``."""
    if not path.is_file():
        raise fail("not_found")
    try:
        with path.open("rb") as fh:
            data = fh.read(limits.max_bytes + 1)
    except OSError as exc:
        raise fail("unreadable", detail=exc.strerror or type(exc).__name__) from exc
    if len(data) > limits.max_bytes:
        raise fail("too_large", max=f"{limits.max_bytes:,}")
    try:
        text = data.decode("utf-8-sig")
        _check_structure(text, limits, fail)
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise fail("yaml", detail=str(exc).replace("\n", " ")[:300]) from exc
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise fail("too_complex", detail="nested too deep") from exc

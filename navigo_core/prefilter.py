"""A literal prefilter: which of many regexes *can* match a text, in one pass.

Most routing rules fail on most messages, and Python's regex engine tries every branch
of an alternation at every position, so running thirty rules' keyword regexes costs far
more than deciding which few could match. For each regex this module derives a set of
literal strings of which **every** match contains at least one ("需要" for ``需要.{0,4}报销``;
{"cancel", "withdraw", …} for ``\\b(?:cancel|withdraw)\\b``), from the parsed pattern, not
from hand-written lists. One Aho-Corasick pass over the text (pyahocorasick) finds the
literals present; a regex whose literals are all absent cannot match and is skipped.

The derivation is conservative: a pattern it cannot bound (``.*``, a negated or large
character class, case-insensitive flags, an empty alternative) gets no literal set and
always runs. So skipping never changes a result; ``tests/unit/test_prefilter.py`` checks
that on every labelled sentence of the repository.

:func:`top_level_alternatives` splits a pattern into its top-level branches: the rule set
prefilters each branch of a rule's keyword on its own, so a rule with a hundred branches runs the
few whose literals occur, not its whole alternation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

import ahocorasick

MAX_CLASS = 12  # a character class with more members than this bounds nothing

_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}


def _class_chars(items: Sequence[tuple[Any, Any]]) -> set[str] | None:
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.RANGE and av[1] - av[0] < MAX_CLASS:
            chars.update(chr(c) for c in range(av[0], av[1] + 1))
        else:  # NEGATE, CATEGORY (\d, \w …), a wide range
            return None
        if len(chars) > MAX_CLASS:
            return None
    return chars or None


def _rank(options: set[str]) -> tuple[int, int]:
    return min(len(s) for s in options), -len(options)


def _required(seq: Any) -> set[str] | None:
    """Strings one of which every match of the parsed sequence ``seq`` contains (None: unbounded)."""
    found: list[set[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            found.append({"".join(run)})
            run.clear()

    for op, av in seq:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        flush()
        sub: set[str] | None = None
        if op is sre.IN:
            sub = _class_chars(av)
        elif op is sre.BRANCH:
            sub = set()
            for branch in av[1]:
                got = _required(branch)
                if got is None:
                    sub = None
                    break
                sub |= got
        elif op is sre.SUBPATTERN:
            _group, add_flags, _del_flags, body = av
            sub = None if add_flags & re.IGNORECASE else _required(body)
        elif op is sre.ATOMIC_GROUP:
            sub = _required(av)
        elif op in _REPEATS and av[0] >= 1:
            sub = _required(av[2])
        # AT (\b, ^, $), ANY, NOT_LITERAL, lookarounds, CATEGORY, optional repeats: no requirement
        if sub:
            found.append(sub)
    flush()
    return max(found, key=_rank) if found else None


def required_literals(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """The literals of which every match of ``pattern`` contains one (None: the pattern always runs)."""
    if pattern.flags & re.IGNORECASE:
        return None
    got = _required(sre_parse.parse(pattern.pattern, pattern.flags))
    return frozenset(got) if got and all(got) else None


def _structure(pattern: str) -> list[tuple[int, str, int]]:
    """``(index, char, depth)`` of the group parentheses and ``|`` of ``pattern`` (escapes and character
    classes skipped; ``depth`` is the nesting before the character)."""
    out: list[tuple[int, str, int]] = []
    depth, i, n = 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":  # a class: "]" right after "[" or "[^" is a member
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c in "()|":
            out.append((i, c, depth))
            depth += {"(": 1, ")": -1, "|": 0}[c]
        i += 1
    return out


def top_level_alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (outside groups, character classes and escapes), a pattern that is
    one non-capturing group ``(?:X)`` split inside: a text matches ``pattern`` exactly when it matches one of the
    parts, so each part can be prefiltered on its own (a rule whose one branch has no literal then no longer runs
    all its branches on every message)."""
    marks = _structure(pattern)
    cuts = [i for i, c, depth in marks if c == "|" and depth == 0]
    if cuts:
        bounds = [-1, *cuts, len(pattern)]
        return [q for a, b in zip(bounds, bounds[1:]) for q in top_level_alternatives(pattern[a + 1:b])]
    closes = [i for i, c, depth in marks if c == ")" and depth == 1]
    if pattern.startswith("(?:") and closes and closes[0] == len(pattern) - 1:  # one group, nothing else
        return top_level_alternatives(pattern[3:-1])
    return [pattern]


class Prefilter:
    """Built once from patterns (None entries always run); :meth:`candidates` gives the indexes
    of the patterns that can match a text."""

    def __init__(self, patterns: Sequence[re.Pattern[str] | None]) -> None:
        owners: dict[str, set[int]] = {}
        always: set[int] = set()
        for i, pattern in enumerate(patterns):
            lits = None if pattern is None else required_literals(pattern)
            if lits is None:
                always.add(i)
                continue
            for lit in lits:
                owners.setdefault(lit, set()).add(i)
        self.always = frozenset(always)
        self.size = len(patterns)
        self._automaton: Any = None
        if owners:
            automaton = ahocorasick.Automaton()
            for lit, idx in owners.items():
                automaton.add_word(lit, frozenset(idx))
            automaton.make_automaton()
            self._automaton = automaton

    def candidates(self, text: str) -> set[int]:
        found = set(self.always)
        if self._automaton is not None and text:
            for _end, idx in self._automaton.iter(text):
                found |= idx
        return found


__all__ = ["Prefilter", "required_literals", "top_level_alternatives"]

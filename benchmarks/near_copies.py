"""Drop the near copies from a new labelled set before it joins ``tests/data``.

A row is a near copy when its character 5-grams (lower case, spaces collapsed) overlap those of a reference
sentence with a Jaccard index of 0.5 or more. The references: every row of ``tests/data/*.jsonl``, the rule
examples, the L2 seeds and examples, the writers' brief (``tests/data/briefs/business_writers.md``) and, when
present, ``../shared/data`` (public evaluation rows: a set that repeats them would flatter the score).

Usage, from the repo root: ``.venv/bin/python benchmarks/near_copies.py NEW.jsonl [...]``; writes
``NEW.kept.jsonl`` beside each file and prints the rows it dropped with the sentence each one copies.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
BRIEF = ROOT / "tests" / "data" / "briefs" / "business_writers.md"
YAML_SOURCES = (ROOT / "tests" / "data" / "rule_examples.yaml", ROOT / "navigo_core" / "intent" / "data" / "seeds.yaml",
                ROOT / "navigo_core" / "intent" / "data" / "examples.yaml")
BAR = 0.5


def grams(text: str) -> frozenset[str]:
    t = re.sub(r"\s+", " ", text.lower().strip())
    return frozenset(t[i:i + 5] for i in range(max(1, len(t) - 4)))


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def references(exclude: set[Path]) -> list[str]:
    out: list[str] = []
    files = sorted((ROOT / "tests" / "data").glob("*.jsonl"))
    if SHARED.is_dir():
        files += sorted(SHARED.rglob("*.jsonl"))
    else:
        print(f"note: {SHARED} is absent; public rows are not checked", file=sys.stderr)
    for path in files:
        if path.resolve() in exclude:
            continue
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                out.append(json.loads(line)["text"])
    for path in YAML_SOURCES:
        out += _strings(yaml.safe_load(path.read_text(encoding="utf-8")))
    if BRIEF.is_file():  # the brief's own example phrases, split at quotes and brackets
        out += [p for line in BRIEF.read_text(encoding="utf-8").splitlines()
                for p in re.split(r'[()"]', line) if len(p) > 12]
    return out


def main(paths: list[str]) -> None:
    targets = [Path(p).resolve() for p in paths]
    refs = [(text, grams(text)) for text in references(set(targets))]
    index: dict[str, list[int]] = defaultdict(list)
    for i, (_, g) in enumerate(refs):
        for x in g:
            index[x].append(i)
    for path in targets:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        kept, dropped = [], []
        for row in rows:
            g = grams(row["text"])
            shared: dict[int, int] = defaultdict(int)
            for x in g:
                for i in index.get(x, ()):
                    shared[i] += 1
            best = max(((n / len(g | refs[i][1]), i) for i, n in shared.items()), default=(0.0, -1))
            (dropped if best[0] >= BAR else kept).append((row, best))
        out = path.with_suffix(".kept.jsonl")
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r, _ in kept), encoding="utf-8")
        print(f"{path.name}: kept {len(kept)}, dropped {len(dropped)} -> {out.name}")
        for row, (score, i) in dropped:
            print(f"  {score:.2f}  {row['text']}  ||  {refs[i][0]}")


if __name__ == "__main__":
    main(sys.argv[1:])

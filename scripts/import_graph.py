"""Print which packages of navigo_core import which (direct imports, any depth inside a package).

    PYTHONPATH=. .venv/bin/python scripts/import_graph.py

The list in docs/ARCHITECTURE.md ("Import contracts") is this output; `.venv/bin/lint-imports` checks the
contracts in `.importlinter` against the same graph (grimp, import-linter's graph builder). `--cycles` also
lists every cycle between modules (strongly connected components), the contracts' ignored ones included.
"""

from __future__ import annotations

import sys
from collections import defaultdict

import grimp


def package_edges(graph: grimp.ImportGraph, root: str = "navigo_core") -> dict[str, set[str]]:
    def top(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else None

    edges: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = top(module), top(imported)
            if a and b and a != b and imported.startswith(root + "."):
                edges[a].add(b)
    return edges


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def main(argv: list[str]) -> int:
    graph = grimp.build_graph("navigo_core", cache_dir=None)
    for package, imported in sorted(package_edges(graph).items()):
        print(f"{package} → {', '.join(sorted(imported))}")
    if "--cycles" in argv:
        cycles = module_cycles(graph)
        print(f"\n{len(cycles)} module cycle(s)")
        for component in cycles:
            print("  " + " ⇄ ".join(component))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

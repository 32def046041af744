"""The import graph is the one docs/architecture.md documents: every module's imports
(read with ast, those inside functions included, `if TYPE_CHECKING:` blocks left out: they
never run) go to its own layer or below, and no group of modules imports itself round."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
def documented_layers() -> dict[str, int]:
    """{top-level module or package: layer} from the table in docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("<!-- layers -->")[1]
    layers = {}
    for line in block.splitlines():
        m = re.match(r"\s+(\d+)\s+(.+)", line)
        if m:
            for name in m.group(2).split():
                layers[name] = int(m.group(1))
    return layers


def modules() -> dict[str, Path]:
    """{dotted name below rnn2dfa ("" for the package itself): file}."""
    out = {}
    for p in sorted((ROOT / "rnn2dfa").rglob("*.py")):
        parts = list(p.relative_to(ROOT / "rnn2dfa").with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The modules of the package `path` imports at run time (by the longest known prefix)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for b in node.body for n in ast.walk(b)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(dotted: str) -> str:
        parts = dotted.split(".")
        while parts:
            if ".".join(parts) in known:
                return ".".join(parts)
            parts.pop()
        return ""  # a name of the package root itself (`from rnn2dfa import __version__`)

    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([p for p in up if p] + ([base] if base else []))
                base = "rnn2dfa" + ("." + base if base else "")
            targets = [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            if t == "rnn2dfa" or t.startswith("rnn2dfa."):
                inner = t.removeprefix("rnn2dfa").lstrip(".")
                m = resolve(inner)
                if m != name:
                    found.add(m)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(p, name, known) for name, p in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.add(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(group)
    return out


def layer_of(name: str, layers: dict[str, int]) -> int:
    top = name.split(".")[0] if name else "rnn2dfa"
    assert top in layers, f"rnn2dfa.{name} is in no documented layer (docs/architecture.md)"
    return layers[top]


def test_no_import_runs_upwards():
    layers = documented_layers()
    upward = sorted(f"rnn2dfa.{a} -> rnn2dfa.{b}" for a, targets in graph().items() for b in targets
                    if layer_of(b, layers) > layer_of(a, layers))
    assert upward == []


def test_no_import_cycles():
    assert cycles(graph()) == []

"""The shape of the code: data flows one way (parsers -> compress -> viz -> app),
the views and the app reach engines through the registry and the shared model
only, nothing is imported by a string, and no two modules import each other
(directly or round a longer circle; imports inside functions count too)."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("parsers", "compress", "viz", "app")
#: engine packages: internal to the parser layer (and to their own what-if module)
ENGINE_PACKAGES = ("innodb", "clickhouse", "tokudb")


def modules() -> dict[str, Path]:
    out = {}
    for top in LAYERS + ("resources",):
        for p in (REPO / top).rglob("*.py"):
            rel = p.relative_to(REPO).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out["dbxray." + ".".join(parts)] = p
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Project modules ``name`` imports (absolute and relative, anywhere in the file)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                found.add(t)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {n: imports_of(n, p, known) for n, p in mods.items()}


def layer(mod: str) -> str:
    return mod.split(".")[1]


def test_data_flows_one_way():
    rank = {name: i for i, name in enumerate(LAYERS)}
    bad = [f"{a} imports {b}" for a, deps in graph().items() for b in deps
           if layer(a) in rank and layer(b) in rank and rank[layer(b)] > rank[layer(a)]]
    assert bad == []


def test_views_and_app_reach_engines_through_the_registry_only():
    bad = [f"{a} imports {b}" for a, deps in graph().items() if layer(a) in ("viz", "app")
           for b in deps if b.split(".")[2:3] and b.split(".")[2] in ENGINE_PACKAGES and layer(b) == "parsers"]
    assert bad == []


def test_nothing_is_imported_by_a_string():
    bad = []
    for name, path in modules().items():
        text = path.read_text()
        for needle in ("importlib", "__import__("):
            if needle in text:
                bad.append(f"{path.relative_to(REPO)}: {needle}")
    assert bad == []


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of two or more modules (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return comps


def test_no_import_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles(graph()) == []


def test_the_graph_sees_the_imports_it_checks():
    """(The checks above would pass on an empty graph: a few known edges must be there.)"""
    g = graph()
    assert len(g) > 100
    assert "dbxray.compress.engines" in g["dbxray.compress.whatif"]                      # relative, package
    assert "dbxray.parsers.engines" in g["dbxray.parsers.detect"]                        # from . import x
    assert "dbxray.parsers.innodb.scan" in g["dbxray.parsers.innodb.inspect"]            # from .x import y
    assert "dbxray.parsers.model" in g["dbxray.parsers.innodb.engine"]                   # from ..x import y
    assert "dbxray.parsers.humanize" in g["dbxray.viz.sizebars"]                         # absolute
    assert "dbxray.compress.whatif" in g["dbxray.app.report"]                            # inside a function


def test_views_and_app_read_no_parser_internals():
    """``FileEntry.detail`` / ``Dataset.detail`` hold the parsers' own objects; views and
    the app read the typed facts (unit_facts, facts) and the JSON sections instead."""
    bad = []
    for name, path in modules().items():
        if layer(name) not in ("viz", "app"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "detail":
                bad.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert bad == []

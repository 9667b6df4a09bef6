"""Issue 36 ("Rooms"): imports between retrieval_lit's modules go only downwards (no circle), read from the source by
ast; and issue 33: ranx's spellings (`ranx:ndcg_burges@10`, ...) against the installed ranx."""
import ast
import pathlib

import retrieval_lit

PACKAGE = pathlib.Path(retrieval_lit.__file__).parent

# A circle left to the chapters that own it (chapter 50's evaluate hands a device run to chapter 62, which builds on
# chapter 50's accumulator): named here so that any other circle fails. Not issue 36's metrics/names circle.
KNOWN_CIRCLES = {frozenset({"retrieval_lit.evaluation", "retrieval_lit.torch_engine"})}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict:
    "Each module of the package -> the package's modules it imports anywhere in its source (top level or inside)."
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module
                found |= {module} | {f"{module}.{a.name}" for a in node.names}   # `from pkg import module`
        # the package itself (its __init__) is where every import starts, not a room: left out of the graph
        graph[name] = {m for m in found if m in paths and m not in (name, "retrieval_lit")}
    return graph


def circles(graph: dict) -> list:
    "Every strongly connected set of two or more modules (Tarjan), as frozensets."
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_graph_reader_sees_imports():
    g = import_graph()
    assert "retrieval_lit.metrics" in g["retrieval_lit.names"]          # names builds on metrics
    assert "retrieval_lit.ranking" in g["retrieval_lit.metrics"]
    assert "retrieval_lit.evaluation" in g["retrieval_lit.torch_engine"]


def test_circles_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_metrics_does_not_import_names():
    g = import_graph()
    assert "retrieval_lit.names" not in g["retrieval_lit.metrics"]


def test_no_circle_among_modules():
    found = set(circles(import_graph()))
    assert found <= KNOWN_CIRCLES, sorted(map(sorted, found - KNOWN_CIRCLES))
    assert not any("retrieval_lit.metrics" in c or "retrieval_lit.names" in c for c in found)


def test_parse_metric_reads_foreign_names_in_a_fresh_process():
    import subprocess
    import sys
    code = "from retrieval_lit.metrics import parse_metric; print(parse_metric('AP@100').name)"   # names not imported by hand
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "AP@100"

"""The tests that exercise a change: the tests/test_*.py files that tests/quick.sh runs for the modules given, the
house's own tests first.

usage: python tools/consumers.py retrieval_lit/precision.py [retrieval_lit/ranking.py ...]
       python tools/consumers.py --house      # the house's own tests alone

A test file exercises a module when it imports it, or imports a module the change reaches; the imports are read
statically (with `ast`), and these readings keep a change to one chapter from selecting the whole suite:
- a module reaches its importers through the imports it runs when imported; an import inside a function (the
  package loads matplotlib, numba kernels, the demo and the course lazily) counts one step, for the module that
  makes it, when it names a changed module itself (a change to course.py reaches cli, which imports course inside a
  function; a change to precision.py does not reach cli through the demo);
- `from retrieval_lit import evaluate` imports the module that defines `evaluate` (the package's `__init__` names
  it), not everything `__init__` imports;
- the lazily loaded torch path (`torch_engine`, imported by name when `device=` or a tensor asks for it) is reached
  only by the files that import it themselves;
- `metrics.METRIC_MODULES` (the metric chapters that `parse_metric` imports by name) is not an import edge: a test
  file exercises a metric chapter by name only through a helper module of tests/ that it imports and that names
  the chapter's metrics (tests/metric_names.py lists every family, for the suites that loop over all of them), or
  because it reads the whole registry (`known_metrics`, `_REGISTRY`). A test that names "p@10" in passing uses
  `evaluate` as a vehicle; the whole suite (tests/check.sh) still runs it.
"""
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "retrieval_lit"
TESTS = ROOT / "tests"
LAZY = {"retrieval_lit.torch_engine"}     # reached only by the files that import it themselves
HOUSE = ("tests/test_house.py", "tests/test_developing.py", "tests/test_docments.py")   # the house's rules: seconds


def module_name(path: Path) -> str:
    "retrieval_lit/labs/hashing.py -> 'retrieval_lit.labs.hashing'; __init__.py names its package."
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_names() -> dict:
    "{name: defining module} for the names the package's __init__ imports (`from retrieval_lit import evaluate`)."
    return {alias.asname or alias.name: module for module, alias in _imports(PKG / "__init__.py", "retrieval_lit")
            if alias is not None}


def _top_level(tree: ast.Module):
    "The statements a module runs when imported: its body, and the bodies of its top-level if/try blocks."
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            todo += node.body + node.orelse + getattr(node, "finalbody", []) + \
                [s for h in getattr(node, "handlers", []) for s in h.body]


def _imports(path: Path, package: str, eager: bool = False) -> list:
    """(module, alias) for every `from M import name` in the file (alias None for `import M`), relative modules
    resolved against `package`: anywhere in the file, or (`eager`) only where the import runs with the module's."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in (_top_level(tree) if eager else ast.walk(tree)):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            out += [(base, a) for a in node.names]
    return out


def imported(path: Path, package: str, eager: bool = False) -> set:
    """The package's modules that the file at `path` imports (its own package `package` resolves relative imports):
    anywhere, or (`eager`) when the file itself is imported."""
    out, defined_in = set(), package_names()
    for base, alias in _imports(path, package, eager):
        if not base.startswith("retrieval_lit"):
            continue
        if alias is None:
            out.add(base)
        elif base == "retrieval_lit" and alias.name in defined_in:
            out.add(defined_in[alias.name])                 # a name of __init__: the module that defines it
        else:
            out |= {base, f"{base}.{alias.name}"}           # `from retrieval_lit import ranking` imports a module
    return out - {"retrieval_lit"}


def graph(eager: bool = True) -> dict:
    """module -> the package's modules it imports: when it is imported (`eager`), or anywhere in it (a function's
    own import loads a path lazily). LAZY is never followed."""
    files = {module_name(p): p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}
    deps = {}
    for name, p in files.items():
        package = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps[name] = {m for m in imported(p, package, eager) if m in files and m != name and m not in LAZY}
    return deps


def metric_modules(path: Path) -> set:
    """The metric chapters whose metrics the file names in a string literal: each literal that `parse_metric` reads
    is traced to the module of its computation (a spelling of chapter 08 to the metric it stands for)."""
    from retrieval_lit.metrics import parse_metric
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or not 0 < len(node.value) < 60:
            continue
        for text in {node.value, node.value.replace("{k}", "10")}:     # tests/metric_names.py's templates
            try:
                metric = parse_metric(text)
            except Exception:
                continue
            out.add(metric.compute.__module__)
            if metric.compute.__module__ == "retrieval_lit.names":      # another tool's spelling: its metric too
                try:
                    out.add(parse_metric(metric.name).compute.__module__)
                except Exception:
                    pass
    return out


def registry_readers(path: Path) -> set:
    """Every metric chapter, for a file that reads the whole registry (`known_metrics`, `_REGISTRY`: it loops over
    every metric); else nothing."""
    read = {alias.name for module, alias in _imports(path, "tests") if module == "retrieval_lit.metrics" and alias}
    if not read & {"known_metrics", "_REGISTRY"}:
        return set()
    text = (PKG / "metrics.py").read_text(encoding="utf-8")
    listed = re.search(r"METRIC_MODULES\s*=\s*\(([^)]*)\)", text)
    return {f"retrieval_lit.{m}" for m in re.findall(r"[\"'](\w+)[\"']", listed.group(1) if listed else "")}


def test_modules(path: Path, names: set) -> set:
    """The package's modules a test file exercises: its imports, the metric chapters its helper lists name, and every
    metric chapter when it reads the whole registry."""
    helpers = [path] + [TESTS / f"{m}.py" for m in re.findall(r"^\s*(?:from|import)\s+(\w+)", path.read_text(), re.M)
                        if (TESTS / f"{m}.py").exists() and not m.startswith("test_")]
    found = {m for m in imported(path, "tests") if m in names} | registry_readers(path)
    for p in helpers[1:]:
        found |= {m for m in imported(p, "tests") if m in names} | metric_modules(p)
    return found


def reached(changed: set) -> set:
    """The modules a change reaches: the changed ones, the modules whose functions import one of them (a lazy import
    counts for the module that makes it, one step), and every module that imports a reached one when it is imported."""
    eager, anywhere = graph(True), graph(False)
    reach = set(changed) | {m for m, d in anywhere.items() if d & changed}
    grew = True
    while grew:
        new = {m for m, d in eager.items() if d & reach} - reach
        reach |= new
        grew = bool(new)
    return reach


def consumers(changed: list) -> list:
    "The house's own tests, then the test files that exercise a changed module or a module the change reaches."
    reach = reached({module_name(ROOT / c) for c in changed})
    names = set(graph())
    found = [str(t.relative_to(ROOT)) for t in sorted(TESTS.glob("test_*.py")) if test_modules(t, names) & reach]
    return list(HOUSE) + [t for t in found if t not in HOUSE]


if __name__ == "__main__":
    print("\n".join(HOUSE if sys.argv[1:] == ["--house"] else consumers(sys.argv[1:])))

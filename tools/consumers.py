"""The tests that consume a change: every tests/test_*.py that imports, directly or through other modules of the
package, one of the modules given (tests/quick.sh's map from a changed module to the tests to run).

usage: python tools/consumers.py retrieval_lit/relevance.py [retrieval_lit/ranking.py ...]

A module's consumers are found statically: every `from retrieval_lit.x import`, `from .x import`, `import
retrieval_lit.x` and `from retrieval_lit import x` anywhere in a file (imports inside functions count: the package
loads matplotlib, numba, torch and its metric chapters lazily), and `metrics.METRIC_MODULES`, the metric chapters
that `parse_metric` imports by name. `from retrieval_lit import evaluate` reaches the package's __init__, which
imports `evaluate`'s module and so nearly every floor: a change low in the house runs nearly every test, as it
should."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "retrieval_lit"
_FROM = re.compile(r"^\s*from\s+(retrieval_lit(?:\.[\w.]+)?|\.+[\w.]*)\s+import\s+([\w\s,()*]+)", re.M)
_IMPORT = re.compile(r"^\s*import\s+(retrieval_lit(?:\.[\w.]+)?)", re.M)


def module_name(path: Path) -> str:
    "retrieval_lit/labs/hashing.py -> 'retrieval_lit.labs.hashing'; __init__.py names its package."
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, package: str) -> set:
    "The package's modules that the file at `path` imports (its own package `package` resolves relative imports)."
    text, out = path.read_text(encoding="utf-8"), set()
    for base, names in _FROM.findall(text):
        if base.startswith("."):
            up = len(base) - len(base.lstrip("."))
            parent = package.split(".")[: len(package.split(".")) - up + 1]
            base = ".".join(parent + ([base.lstrip(".")] if base.lstrip(".") else []))
        out.add(base)
        for name in re.findall(r"\w+", names):       # `from retrieval_lit import ranking` imports a module too
            out.add(f"{base}.{name}")
    out |= set(_IMPORT.findall(text))
    if path.name == "metrics.py":                    # parse_metric imports the metric chapters by name
        tup = re.search(r"METRIC_MODULES\s*=\s*\(([^)]*)\)", text)
        out |= {f"retrieval_lit.{m}" for m in re.findall(r"[\"'](\w+)[\"']", tup.group(1) if tup else "")}
    return out


def graph() -> dict:
    "module -> the package's modules it imports (only names that are modules of the package)."
    files = {module_name(p): p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}
    deps = {}
    for name, p in files.items():
        package = name if p.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps[name] = {m for m in imported(p, package) if m in files and m != name}
    return deps


def consumers(changed: list) -> list:
    "The test files that import a changed module or any module that (transitively) imports one."
    deps = graph()
    reach = {module_name(ROOT / c) for c in changed}
    grew = True
    while grew:                                      # every module that imports something already reached
        new = {m for m, d in deps.items() if d & reach} - reach
        reach |= new
        grew = bool(new)
    names = set(deps)
    tests = []
    for t in sorted((ROOT / "tests").glob("test_*.py")):
        if {m for m in imported(t, "tests") if m in names} & reach:
            tests.append(str(t.relative_to(ROOT)))
    return tests


if __name__ == "__main__":
    print("\n".join(consumers(sys.argv[1:])))

"""DEVELOPING.md's "exactly" block of the metric registry names every field of Conventions, Metric, DeviceFinish and
PeerName, in order; its checklists and lists name what exists (issue 42): every relevance source, every metric family
in the README's table, every `module.name` and file it cites, no stale step."""
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from retrieval_lit.metrics import Conventions, DeviceFinish, Metric, PeerName, known_metrics

TEXT = (Path(__file__).resolve().parents[1] / "DEVELOPING.md").read_text()


def fields_in_block(cls_name: str) -> list:
    block = TEXT[TEXT.index("### The metric registry"):]
    body = block[block.index(f"class {cls_name}:"):].split("\n\n")[0]
    return re.findall(r"^    (\w+): ", body, re.M)


def test_conventions_fields_listed():
    assert fields_in_block("Conventions") == [f.name for f in dataclasses.fields(Conventions)]


def test_metric_fields_listed():
    assert fields_in_block("Metric") == [f.name for f in dataclasses.fields(Metric)]


@pytest.mark.parametrize("cls", [DeviceFinish, PeerName])
def test_device_finish_and_peer_name_fields_listed(cls):
    assert fields_in_block(cls.__name__) == [f.name for f in dataclasses.fields(cls)]


ROOT = Path(__file__).resolve().parents[1]


def test_every_relevance_source_is_listed():
    "DEVELOPING's list of sources names every Relevance class of chapter 02 (issue 42: the list went stale)."
    import retrieval_lit.relevance as relevance
    listed = TEXT[TEXT.index("The sources"):TEXT.index("**The ranking summary.**")]
    classes = [n for n, c in vars(relevance).items() if isinstance(c, type) and issubclass(c, relevance.Relevance)
               and c is not relevance.Relevance]
    assert classes and [n for n in classes if f"`{n}`" not in listed] == []


def test_every_metric_family_is_in_the_readme_table():
    "The README's metric-name table (the checklist's step 3) has a row naming each registered family."
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| `map`, `map@k` |"):]
    table = table[:table.index("\n\n")]
    stems = {re.split(r"@", example)[0] for example, _ in known_metrics()}
    missing = [s for s in sorted(stems) if not re.search(rf"`{re.escape(s)}(@[a-zA-Z]+)?`", table)]
    assert missing == [], missing


def cited(text: str) -> tuple:
    "(the `module.name` pairs of the package, the repository files) DEVELOPING.md cites."
    modules = {m.stem for m in (ROOT / "retrieval_lit").glob("*.py")} | {"labs", "widgets"}
    names = {(a, b) for a, b in re.findall(r"`(\w+)\.(\w+)[`(]", text) if a in modules}
    files = set(re.findall(r"\b((?:tests|tools|benchmarks|nbs|retrieval_lit)/[\w./-]+\.(?:py|ipynb|md|sh))\b", text))
    return names, files


def test_everything_developing_cites_exists():
    "Every `module.name` DEVELOPING.md cites is in that module, and every file it names exists (renamings included)."
    names, files = cited(TEXT)
    assert len(names) > 20 and len(files) > 10
    missing = []
    for module, name in sorted(names):
        mod = importlib.import_module(f"retrieval_lit.{module}")
        if not hasattr(mod, name):
            try:
                importlib.import_module(f"retrieval_lit.{module}.{name}")
            except ImportError:
                missing.append(f"{module}.{name}")
    missing += [f for f in sorted(files) if not (ROOT / f).exists() and "NN" not in f and "<" not in f]
    assert missing == [], missing


def test_the_checker_finds_a_stale_name():
    names, files = cited("`ranking.summarize_scores` and `metrics.parse_metric(name)`, in tests/test_nothing.py")
    assert names == {("ranking", "summarize_scores"), ("metrics", "parse_metric")} and files == {"tests/test_nothing.py"}


def test_no_stale_step():
    "register_metric returns None, so no cell needs a trailing `;` (a step issue 42 found stale)."
    assert "ends with `;`" not in TEXT
    from retrieval_lit.metrics import _REGISTRY, register_metric
    saved = list(_REGISTRY)
    try:
        assert register_metric(r"toy42", lambda m: None, "toy42", "a toy") is None
    finally:
        _REGISTRY[:] = saved


def test_the_new_metric_checklist_names_every_home():
    "The steps name the entry's parts and every file a new metric touches (tests/test_metric_entry.py scripts one)."
    steps = TEXT[TEXT.index("**A new metric**"):TEXT.index("**A new protocol**")]
    for home in ("register_metric", "peers", "on_list", "device", "DeviceFinish", "DeviceRanking", "PeerName",
                 "METRIC_MODULES", "nbs/90_references.ipynb", "nbs/index.ipynb", "IR_FAMILIES", "tests/metric_names.py",
                 "tests/test_metric_entry.py", "50 lines"):
        assert home in steps, home


def test_the_quick_check_runs_every_consumer_of_a_module():
    "Issue 36: changing relevance.py ran neither test_sparse_relevance nor test_engine; tools/consumers.py finds them."
    import importlib.util
    spec = importlib.util.spec_from_file_location("consumers", Path(__file__).resolve().parents[1] / "tools" / "consumers.py")
    consumers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(consumers)
    found = consumers.consumers(["retrieval_lit/relevance.py"])
    assert {"tests/test_sparse_relevance.py", "tests/test_engine.py"} <= set(found)
    assert consumers.consumers(["retrieval_lit/loaders.py"]) == [*consumers.HOUSE, "tests/test_hostile_pickles.py",
                                                                 "tests/test_loaders.py"]
    assert "tests/test_hostile_client.py" in consumers.consumers(["retrieval_lit/course.py"])   # through cli's lazy import

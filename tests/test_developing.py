"""DEVELOPING.md's "exactly" block of the metric registry names every field of Conventions and Metric, in order."""
import dataclasses
import re
from pathlib import Path

from retrieval_lit.metrics import Conventions, Metric

TEXT = (Path(__file__).resolve().parents[1] / "DEVELOPING.md").read_text()


def fields_in_block(cls_name: str) -> list:
    block = TEXT[TEXT.index("### The metric registry"):]
    body = block[block.index(f"class {cls_name}:"):].split("\n\n")[0]
    return re.findall(r"^    (\w+): ", body, re.M)


def test_conventions_fields_listed():
    assert fields_in_block("Conventions") == [f.name for f in dataclasses.fields(Conventions)]


def test_metric_fields_listed():
    assert fields_in_block("Metric") == [f.name for f in dataclasses.fields(Metric)]


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

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

"""tools/consumers.py, the quick check's choice of tests (issue 41): a change to one metric chapter runs the tests
that exercise it, not the whole suite; the house's own tests come first."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("consumers", ROOT / "tools" / "consumers.py")
consumers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(consumers)


def test_a_metric_chapter_selects_its_own_tests_and_few_others():
    found = consumers.consumers(["retrieval_lit/precision.py"])
    assert found[:3] == list(consumers.HOUSE)                      # the house's rules first
    assert len(found) <= 15, found                                 # issue 41's goal: at most 15 test files
    assert {"tests/test_precision.py", "tests/test_batch_independence.py", "tests/test_bounds.py",
            "tests/test_engine.py", "tests/test_metric_entry.py"} <= set(found)   # the last reads every entry
    assert len(found) == len(set(found))


def test_every_import_of_a_multi_line_statement_is_read(tmp_path):
    "The regex reader took the next line's `from retrieval_lit` as imported names and skipped that import."
    f = tmp_path / "test_x.py"
    f.write_text("from retrieval_lit.ranking import (a,\n    b)\nfrom retrieval_lit.precision import c\n"
                 "def f():\n    from retrieval_lit import evaluate\n")
    assert {"retrieval_lit.ranking", "retrieval_lit.precision", "retrieval_lit.evaluation"} <= consumers.imported(f, "tests")
    assert "retrieval_lit.evaluator" not in consumers.imported(f, "tests")   # __init__'s other names are not imported


def test_a_lazy_import_counts_for_the_module_that_makes_it():
    assert "tests/test_hostile_client.py" in consumers.consumers(["retrieval_lit/course.py"])   # cli imports course lazily
    assert "tests/test_hostile_client.py" not in consumers.consumers(["retrieval_lit/precision.py"])  # ... not via demo


def test_the_torch_path_is_reached_only_by_its_own_importers():
    reach = consumers.reached({"retrieval_lit.validate"})
    assert "retrieval_lit.torch_engine" in reach and "retrieval_lit.evaluator" in reach
    assert "retrieval_lit.evaluator" not in consumers.reached({"retrieval_lit.torch_engine"})   # its lazy importer


def test_a_low_floor_still_selects_nearly_everything():
    "A change to validate (floor 0) reaches every module that checks its input: the quick check runs nearly all."
    assert len(consumers.consumers(["retrieval_lit/validate.py"])) >= 40

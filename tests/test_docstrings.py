"""The examples in public docstrings (`>>>` lines) are run: a docstring that shows a number must show the right one."""
import doctest
import importlib
import pkgutil

import pytest

import retrieval_lit

MODULES = [m.name for m in pkgutil.iter_modules(retrieval_lit.__path__) if not m.name.startswith("_")]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"retrieval_lit.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) of retrieval_lit.{name} fail"


def test_some_examples_exist():
    "The tie-case examples of evaluate and evaluate_run are among them (a guard against the runner finding none)."
    for name in ("evaluation", "trec"):
        assert doctest.testmod(importlib.import_module(f"retrieval_lit.{name}")).attempted >= 2

"""Every public function and class documents each parameter in its signature (nbdev's docments), so that the API
cards of the built docs explain every convention. A new public function without them fails here."""
import importlib
import inspect
import pkgutil

import pytest

fastcore_docments = pytest.importorskip("fastcore.docments")

import retrieval_lit
import retrieval_lit.widgets

MODULES = ([m.name for m in pkgutil.iter_modules(retrieval_lit.__path__) if not m.name.startswith("_")
            and not m.ispkg]
           + [f"widgets.{m.name}" for m in pkgutil.iter_modules(retrieval_lit.widgets.__path__)])
# parameters a comment cannot document: fastcore reads no docment for **kwargs-style parameters
EXEMPT = {("engine", "summarize", "options"), ("evaluator", "Evaluator", "conventions")}


def undocumented(module_name: str) -> list:
    "The `name(parameter)` of every public callable of the module whose parameter has no docment."
    module = importlib.import_module(f"retrieval_lit.{module_name}")
    missing = []
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        try:
            params = fastcore_docments.docments(obj, full=True)
        except (TypeError, ValueError, OSError):  # builtins, exceptions without a Python signature
            continue
        if inspect.isclass(obj):                  # a field inherited from a dataclass base is documented there
            for base in obj.__mro__[1:]:
                if base.__module__.startswith("retrieval_lit"):
                    for p, info in fastcore_docments.docments(base, full=True).items():
                        if p in params and not params[p].get("docment") and info.get("docment"):
                            params[p] = info
        for p, info in params.items():
            if p in ("return", "self", "args", "kwargs") or (module_name, name, p) in EXEMPT:
                continue
            if not info.get("docment"):
                missing.append(f"{name}({p})")
    return missing


def test_the_module_list_is_complete():
    assert {"validate", "evaluation", "lgap", "display", "widgets.ap_playground"} <= set(MODULES)


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_parameter_has_a_docment(module_name):
    assert undocumented(module_name) == [], f"retrieval_lit.{module_name}: add a comment after each parameter"

"""Conventions are declared once (metrics.Conventions): evaluate's keywords, the command line's options and the
README's table are held to that declaration, so adding a convention cannot leave one of them behind."""
import inspect
import re
from pathlib import Path

import pytest

from retrieval_lit import evaluate
from retrieval_lit.cli import build_parser
from retrieval_lit.metrics import Conventions, convention_fields

ROOT = Path(__file__).resolve().parents[1]


def test_evaluate_takes_every_convention_with_its_default():
    params = inspect.signature(evaluate).parameters
    for name, _, default, _, _ in convention_fields():
        assert name in params, f"evaluate lacks the convention keyword {name!r}"
        assert params[name].default == default, f"evaluate's default for {name!r} differs from Conventions"


@pytest.mark.parametrize("command", ["evaluate", "demo"])
def test_command_line_has_every_convention_option(command):
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    options = {o: a for a in sub._actions for o in a.option_strings}
    for name, option, default, choices, _ in convention_fields():
        assert option in options, f"`retrieval-lit {command}` lacks {option}"
        a = options[option]
        assert (a.dest, a.default) == (name, default)
        assert tuple(a.choices) == choices if choices else a.type is float


def test_readme_table_lists_every_convention_default_first():
    text = (ROOT / "README.md").read_text()
    for name, option, default, choices, _ in convention_fields():
        row = re.search(rf"^\| `{name}` / `{option}` \| ([^|]+) \|", text, re.M)
        assert row, f"the README's conventions table has no row `{name}` / `{option}`"
        values = re.findall(r"`([^`]+)`", row.group(1))
        assert values == ([str(c) for c in choices] if choices else [str(default)]), name


def test_make_refuses_each_bad_value_by_name():
    for name, _, _, choices, _ in convention_fields():
        with pytest.raises(ValueError, match=f"`{name}`"):
            Conventions.make(**{name: "no such value" if choices else 1.5})

"""Exercise stubs hold the question, not the answer (issues 44 and 45; DEVELOPING.md, "Exercises and solutions").

Every exercise of every chapter (the numbered list of its `## Exercises` cell) has one `#| student: stub` code cell in
the Exercises part, and each stub keeps the rule `stub_faults` states: the question's data and the names to fill,
nothing that computes, enumerates or asserts the asked value. Student copies replace the stubs, but the book shows
them, so the rule is checked on the source notebooks."""
import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit.course import student_notebook

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"

# What a stub may call: constructors of the question's data, nothing that computes a metric or a count.
CONSTRUCTORS = {
    "np.array", "np.asarray", "np.zeros", "np.ones", "np.full", "np.arange", "np.eye", "np.linspace",
    "np.int64", "np.int32", "np.uint8", "np.uint16", "np.uint64", "np.float32", "np.float64",
    "np.random.default_rng",
    "list", "tuple", "range", "dict", "set", "int", "float",
}
# The book's data sets an exercise names (chapter 05): loading them is the question's data, not a step of the answer.
LOADERS = {"load_digits_codes", "load_digits_split"}
# The draws of a generator made in the stub by np.random.default_rng(seed): random data to try the question on.
DRAWS = {"integers", "choice", "random", "normal", "standard_normal", "uniform"}
# Names that enumerate the orders a metric's range or mean is taken over: the brute force is the student's step.
BANNED = {"tie_orders", "permutations"}
STATEMENTS = {ast.Assert: "an assert", ast.For: "a for loop", ast.While: "a while loop", ast.If: "an if",
              ast.With: "a with block", ast.Try: "a try block", ast.FunctionDef: "a function definition",
              ast.ClassDef: "a class definition", ast.AugAssign: "an augmented assignment",
              ast.Expr: "an expression statement (a call or a value computed and shown)"}
EXERCISE = re.compile(r"^# Exercise (\d\d)\.(\d+)\b")


def _dotted(node) -> str:
    "`np.random.default_rng` for that attribute chain; '' for anything else."
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1]) if isinstance(node, ast.Name) else ""


def _is_rng(node, rngs) -> bool:
    "A generator: a name the stub bound to np.random.default_rng(...), or that call itself."
    return (isinstance(node, ast.Name) and node.id in rngs
            or isinstance(node, ast.Call) and _dotted(node.func) == "np.random.default_rng")


def _data(node, local, rngs) -> str:
    """'' when `node` is the question's data, else what it is instead. Data: a literal; a list, tuple, set or dict of
    data; arithmetic on data (`[0] * 10 + [1]`, `2**53`); a name bound earlier in the stub; an attribute of numpy
    (`np.uint16`); a subscript of data by data (`np.r_[...]`, `x[None, :]`); and a call to a constructor of
    CONSTRUCTORS, a loader of LOADERS or a draw of a seeded generator, with data as its arguments. A name the chapter
    bound before is not data here: the rule cannot tell the question's data from a computed answer."""
    if isinstance(node, ast.Constant):
        return ""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return next((w for e in node.elts if (w := _data(e, local, rngs))), "")
    if isinstance(node, ast.Dict):
        return next((w for e in node.keys + node.values if e is not None and (w := _data(e, local, rngs))), "")
    if isinstance(node, ast.UnaryOp):
        return _data(node.operand, local, rngs)
    if isinstance(node, ast.BinOp):
        return _data(node.left, local, rngs) or _data(node.right, local, rngs)
    if isinstance(node, ast.Slice):
        parts = [e for e in (node.lower, node.upper, node.step) if e is not None]
        return next((w for e in parts if (w := _data(e, local, rngs))), "")
    if isinstance(node, ast.Name):
        return "" if node.id in local else f"`{node.id}`, a name from outside the stub (state the data, or None)"
    if isinstance(node, ast.Attribute):
        name = _dotted(node)
        if name.startswith("np.") or name.split(".")[0] in local:
            return ""
        return f"`{ast.unparse(node)}`, data from outside the stub (state the data, or leave it None)"
    if isinstance(node, ast.Subscript):
        base = "" if _dotted(node.value) == "np.r_" else _data(node.value, local, rngs)
        return base or _data(node.slice, local, rngs)
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        draw = isinstance(node.func, ast.Attribute) and node.func.attr in DRAWS and _is_rng(node.func.value, rngs)
        if not (name in CONSTRUCTORS or name in LOADERS or draw):
            return f"a call to `{ast.unparse(node.func)}`, which computes rather than states the question's data"
        return next((w for a in node.args + [k.value for k in node.keywords] if (w := _data(a, local, rngs))), "")
    return f"`{ast.unparse(node)}`, which computes rather than states the question's data"


def _numbers(value):
    "The numbers of a key's value (a number or a list of numbers), as floats."
    return [float(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def _printed(v: float) -> set:
    "The ways a solution or a stub would print v: rounded to 3 to 8 significant digits (v with at least 3)."
    if v == int(v) or len(repr(abs(v)).replace("0.", "").lstrip("0").replace(".", "")) < 3:
        return set()            # a whole or a short number (1, 0.5) cannot be told apart from the question's data
    return {f"{v:.{d}g}" for d in range(3, 9)}


def stub_faults(source: str,        # the stub cell's source, directives included
                exercise: str,      # its exercise, "CC.N"
                key=None,           # the exercise's plain key entry ({"value": ...}), None if it has none
                ) -> list:
    """What breaks the rule in a stub, one line each ([] when it keeps it). The rule: the first code line names the
    exercise (`# Exercise CC.N`); every statement is an import or an assignment to names of the question's data (see
    `_data`) or of `None` (a name to fill; at least one); no assert, loop, condition, definition or bare call; no
    name of BANNED, even in an import; for a keyed exercise the check is there, commented, on a name to fill
    (`# check("CC.N", name)`), and neither a name is bound to the key's value nor is the value printed anywhere in
    the cell, comments included (for numbers of 3 significant digits or more)."""
    lines = source.splitlines()
    while lines and (not lines[0].strip() or lines[0].startswith("#|")):
        lines.pop(0)
    code, faults = "\n".join(lines), []
    m = EXERCISE.match(code)
    if not m or f"{m.group(1)}.{m.group(2)}" != exercise:
        faults.append(f"the first line must name the exercise: `# Exercise {exercise}...`")
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        return faults + [f"not Python: {e.msg} (line {e.lineno})"]
    for node in ast.walk(tree):
        names = ([node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute)
                 else [a.name.split(".")[-1] for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom))
                 else [])
        faults += [f"`{n}`: a stub does not enumerate the orders (the brute force is the student's)"
                   for n in names if n in BANNED]
    local, rngs, fill, bound = set(), set(), set(), []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            local.update((a.asname or a.name).split(".")[0] for a in stmt.names)
            continue
        if not isinstance(stmt, ast.Assign):
            what = next((w for t, w in STATEMENTS.items() if isinstance(stmt, t)), type(stmt).__name__)
            faults.append(f"line {stmt.lineno}: {what}; a stub holds only data and names to fill")
            continue
        pairs = []
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                pairs.append((target, stmt.value))
            elif (isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts)):
                same = isinstance(stmt.value, (ast.Tuple, ast.List)) and len(stmt.value.elts) == len(target.elts)
                pairs += list(zip(target.elts, stmt.value.elts)) if same else [(t, stmt.value) for t in target.elts]
            else:
                faults.append(f"line {stmt.lineno}: assigns to `{ast.unparse(target)}`; a stub binds names only")
        for target, value in pairs:
            if isinstance(value, ast.Constant) and value.value is None:
                fill.add(target.id)
            elif why := _data(value, local, rngs):
                faults.append(f"line {stmt.lineno}: `{target.id}` is {why}")
            else:
                bound.append((target.id, value))
            if isinstance(value, ast.Call) and _dotted(value.func) == "np.random.default_rng":
                rngs.add(target.id)
        if len(pairs) > 1 and not _data(stmt.value, local, rngs):
            bound.append((", ".join(t.id for t, _ in pairs), stmt.value))    # the names together, too
        local.update(t.id for t, _ in pairs)
    if not fill:
        faults.append("no name to fill: a stub binds the asked values to None (`answer = None`)")
    if key is not None:
        checks = re.findall(rf'^#\s*check\("{re.escape(exercise)}",\s*(\w+)\)', code, re.M)
        if not any(c in fill for c in checks):
            faults.append(f'the keyed exercise\'s check is missing: `# check("{exercise}", name)`, name bound to None')
        want = _numbers(key["value"])
        for name, value in bound:
            try:
                got = _numbers(ast.literal_eval(value))
            except (ValueError, TypeError, SyntaxError):
                continue
            if len(got) == len(want) and np.allclose(got, want, rtol=1e-6, atol=0):
                faults.append(f"`{name}` holds the key's answer")
        tokens = set(re.findall(r"\d+(?:\.\d+)?(?:e-?\d+)?", code))
        faults += [f"the answer's number {p} is printed in the stub" for v in want for p in _printed(v) if p in tokens]
    return faults


def _source(cell) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _chapters():
    "(notebook path, its cells, index of the cell holding `## Exercises`, index of `## Solutions`) per chapter."
    for path in sorted(NBS.glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        ex = [i for i, c in enumerate(cells)
              if c["cell_type"] == "markdown" and re.search(r"^## Exercises\s*$", _source(c), re.M)]
        if ex:
            sol = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                        and _source(c).lstrip().split("\n", 1)[0].strip() == "## Solutions"), len(cells))
            yield path, cells, ex[0], sol


def _is_stub(cell) -> bool:
    return cell["cell_type"] == "code" and re.search(r"^#\|\s*student:\s*stub\s*$", _source(cell), re.M) is not None


CHAPTERS = list(_chapters())


def _keys(cc: str) -> dict:
    path = NBS / "answers" / f"{cc}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def test_the_book_has_chapters_with_exercises():
    assert len(CHAPTERS) >= 40 and sum(len([c for c in cells if _is_stub(c)]) for _, cells, _, _ in CHAPTERS) >= 140


@pytest.mark.parametrize("path,cells,ex,sol", CHAPTERS, ids=[c[0].stem for c in CHAPTERS])
def test_every_exercise_has_a_stub(path, cells, ex, sol):
    """The numbered list of `## Exercises` and the stubs of the Exercises part match one to one, in order; every code
    cell of the part is a stub, and no stub lies outside the part."""
    cc = path.name[:2]
    listed = [int(n) for n in re.findall(r"^(\d+)\. ", _source(cells[ex]).split("## Exercises", 1)[1], re.M)]
    assert listed == list(range(1, len(listed) + 1)) and listed, f"{path.name}: the exercises are numbered {listed}"
    part = cells[ex + 1:sol]
    assert all(_is_stub(c) for c in part if c["cell_type"] == "code"), \
        f"{path.name}: a code cell of the Exercises part is not a `#| student: stub` cell (solutions: ## Solutions)"
    named = [EXERCISE.match(re.sub(r"^(#\|[^\n]*\n|\s*\n)*", "", _source(c))) for c in part if _is_stub(c)]
    assert [f"{m.group(1)}.{m.group(2)}" if m else "?" for m in named] == [f"{cc}.{n}" for n in listed], \
        f"{path.name}: one stub per exercise, in order, each opening with `# Exercise {cc}.N`"
    outside = [i for i, c in enumerate(cells) if _is_stub(c) and not ex < i < sol]
    assert not outside, f"{path.name}: stub cells outside the Exercises part: {outside}"


@pytest.mark.parametrize("path,cells,ex,sol", CHAPTERS, ids=[c[0].stem for c in CHAPTERS])
def test_stubs_hold_the_question_not_the_answer(path, cells, ex, sol):
    cc, keys = path.name[:2], _keys(path.name[:2])
    faults = []
    for i in range(ex + 1, sol):
        if _is_stub(cells[i]):
            m = EXERCISE.match(re.sub(r"^(#\|[^\n]*\n|\s*\n)*", "", _source(cells[i])))
            exercise = f"{m.group(1)}.{m.group(2)}" if m else f"{cc}.?"
            found = stub_faults(_source(cells[i]), exercise, keys.get(exercise))
            faults += [f"cell {i} ({exercise}): {f}" for f in found]
    assert not faults, f"{path.name}:\n" + "\n".join(faults)


@pytest.mark.parametrize("path,cells,ex,sol", CHAPTERS, ids=[c[0].stem for c in CHAPTERS])
def test_the_student_copy_is_accepted(path, cells, ex, sol):
    "No cell before `## Solutions` uses a name a stub defines (the course tool would refuse the copy, naming them)."
    copy = student_notebook(json.loads(path.read_text()), path.name)
    assert sum(_source(c).startswith("# Exercise: fill in the names") for c in copy["cells"]) == \
        sum(_is_stub(c) for c in cells)


GOOD = '''#| student: stub
# Exercise 10.3: [smallest, largest, mean] P@3 over the orders of one tie group of ten items, five relevant
grades_10_3 = [1] * 5 + [0] * 5                 # one tie group
sizes_10_3, k_10_3 = [10], 3
rng_10_3 = np.random.default_rng(3)
codes_10_3 = rng_10_3.integers(0, 2, (4, 12))
d_10_3 = load_digits_codes(12)
labels_10_3 = d_10_3.query_labels[:5]
answer_10_3 = None   # your answer
# check("10.3", answer_10_3)   # then says right, close or wrong
'''
KEY = {"value": [0.0, 1.0, 0.5], "rtol": 1e-9}


def test_the_rule_accepts_a_stub_of_data_and_names_to_fill():
    assert stub_faults(GOOD, "10.3", KEY) == []
    assert stub_faults(GOOD.replace('# check("10.3", answer_10_3)   # then says right, close or wrong\n', ""),
                       "10.3", None) == []


@pytest.mark.parametrize("line,fault", [
    ("assert answer_10_3 is None", "an assert"),
    ("for o in orders_10_3:\n    pass", "a for loop"),
    ("orders_10_3 = list(tie_orders(grades_10_3, sizes_10_3))", "`tie_orders`"),
    ("from itertools import permutations", "`permutations`"),
    ("import itertools\nevery_10_3 = itertools.permutations(grades_10_3)", "`permutations`"),
    ("p3_10_3 = precision_at_k(grades_10_3, 3, sizes_10_3)", "a call to `precision_at_k`"),
    ("report_10_3 = evaluate(codes_10_3, codes_10_3, [0] * 4, [0] * 4, ['map'], bounds=True)", "a call to `evaluate`"),
    ("mean_10_3 = np.mean(grades_10_3)", "a call to `np.mean`"),
    ("hits_10_3 = sum(grades_10_3[:3])", "a call to `sum`"),
    ("value_10_3 = lab.readout()", "a call to `lab.readout`"),
    ("share_10_3 = k_10_3 / len(grades_10_3)", "a call to `len`"),
    ("gap_10_3 = p_first - p_last", "`p_first`, a name from outside the stub"),
    ("answer_10_3 = width", "`width`, a name from outside the stub"),
    ("bounds_10_3 = report.bounds['map']", "`report.bounds`, data from outside the stub"),
    ("same_10_3 = grades_10_3 == sizes_10_3", "computes rather than states"),
    ("found_10_3 = [g for g in grades_10_3 if g]", "computes rather than states"),
    ("def brute_10_3(grades):\n    return grades", "a function definition"),
    ("print(grades_10_3)", "an expression statement"),
    ("codes_10_3[0, 1] = 1", "assigns to `codes_10_3[0, 1]`"),
    ("known_10_3 = [0.0, 1.0, 0.5]", "holds the key's answer"),
    ("lo_10_3, hi_10_3, mean_10_3 = [0.0, 1.0, 0.5]", "holds the key's answer"),
])
def test_the_rule_catches_a_bad_stub(line, fault):
    "A test of the test: each hand-made bad stub is refused, and the fault named."
    faults = stub_faults(GOOD + line + "\n", "10.3", KEY)
    assert any(fault in f for f in faults), faults


def test_the_rule_catches_a_missing_check_a_wrong_title_no_name_to_fill_and_a_printed_answer():
    no_check = GOOD.replace('# check("10.3", answer_10_3)', "# grade it")
    assert any("check is missing" in f for f in stub_faults(no_check, "10.3", KEY))
    assert any("name the exercise" in f for f in stub_faults(GOOD, "10.4", None))
    no_fill = GOOD.replace("answer_10_3 = None   # your answer\n", "").replace('# check("10.3", answer_10_3)', "")
    assert any("no name to fill" in f for f in stub_faults(no_fill, "10.3", None))
    printed = GOOD.replace("# your answer", "# your answer (about 0.6456)")
    assert any("0.6456" in f for f in stub_faults(printed, "11.1", {"value": 0.6456349206349207}))
    assert not any("printed" in f for f in stub_faults(GOOD, "10.3", {"value": 0.5}))   # short numbers: data
    whole = GOOD + "threshold_10_3 = 0.7548776662466927\n"
    assert any("holds the key's answer" in f for f in stub_faults(whole, "10.3", {"value": 0.7548776662466927}))

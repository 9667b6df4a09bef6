"""Issue 42 on the scores path: no function of `score_kernel`, `score_ranking` or `blocks` takes more than eight
positional parameters (nested functions and lambdas included); what travels together is a named structure instead
(NamedTuples, numba-typed in the kernels), or keyword-only arguments. Read from the modules' source with `ast`."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("score_kernel", "score_ranking", "blocks")
MAX_POSITIONAL = 8


def positional_counts(src: str) -> list:
    "(name, line, positional parameters) of every function and lambda in `src`, nested ones included."
    out = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out.append((getattr(node, "name", "<lambda>"), node.lineno,
                        len(node.args.posonlyargs) + len(node.args.args)))
    return out


def test_the_count_reads_positional_parameters_only():
    src = ("def a(p1, p2, p3, p4, p5, p6, p7, p8, p9): pass\n"
           "def b(p1, p2, p3, p4, p5, p6, p7, p8, *, k1=0, k2=0): pass\n"
           "def c(p1, /, p2, *args, **kw):\n    f = lambda x, y, z: x\n")
    assert positional_counts(src) == [("a", 1, 9), ("b", 2, 8), ("c", 3, 2), ("<lambda>", 4, 3)]


@pytest.mark.parametrize("module", MODULES)
def test_no_function_takes_more_than_eight_positional_parameters(module):
    src = (ROOT / "retrieval_lit" / f"{module}.py").read_text()
    over = [(name, line, n) for name, line, n in positional_counts(src) if n > MAX_POSITIONAL]
    assert over == [], f"{module}: {over}"


def test_the_kernels_take_named_structures():
    "The block kernels read and write named tuples (numba types their fields): a block's rows, what is wanted, out."
    import numpy as np
    from retrieval_lit import score_kernel as sk
    rows = sk.kernel_rows(np.array([[0.5, 0.2, 0.5]]), np.array([[1, 0, 0]]), None)
    assert isinstance(rows, sk.Rows) and rows.grades.dtype == np.uint8 and not rows.has_kept
    out = sk._outputs(1, 4, 2, 3)
    sk._block_counts(rows, sk.Wants(3, False, sk._NO_DISCOUNT), out, sk.new_work(1, 3, 2, rows.key.dtype))
    assert out.hist[0, :out.n_groups[0]].tolist() == [[1, 1], [1, 0]] and out.top[0].tolist() == [1, 0, 0]

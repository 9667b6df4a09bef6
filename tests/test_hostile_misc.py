"""Hostile inputs of issue 34 (items 6, 7, 8) and issue 33's exercise 06.3: every refusal is one RetrievalInputError
naming the argument (on the command line: one line on standard error, exit code 2), never a raw traceback, never a
silent empty answer.

- a metric name holding a number of thousands of digits (Python's int() refuses strings past 4300 digits);
- `retrieval-lit course --nbs DIR` over a broken notebook (invalid JSON, empty, not UTF-8, a cell whose source is a
  number, a notebook that is a JSON list);
- `retrieval-lit trec-eval ... --compare -m gm_map` (a geometric mean has no value per topic to compare);
- labels of the wrong length for embeddings (named against the embeddings, not the codes);
- exercise 06.3's solution, which must hold whatever order numpy's unstable sort leaves the ties in."""
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit import RetrievalInputError, evaluate
from retrieval_lit.cli import main
from retrieval_lit.metrics import MAX_CUTOFF, parse_cutoff, parse_metric, quote_name

ROOT = Path(__file__).resolve().parent.parent
TREC = ROOT / "tests" / "data" / "trec_eval"


def _cli(argv, capsys):
    "(exit code, stdout, stderr lines) of the command line run on argv."
    out = io.StringIO()
    code = main([str(a) for a in argv], out=out)
    err = capsys.readouterr().err
    return code, out.getvalue(), err.strip().splitlines()


def _one_error_line(code, out, err):
    assert code == 2, (code, out, err)
    assert out == "" and len(err) == 1 and err[0].startswith("retrieval-lit: error: `"), err
    return err[0]


# ----------------------------------------------------------------------------- item 6: a cutoff of 5,000 digits
HUGE = "1" * 5000                                    # past Python's 4300-digit limit of int(str)


@pytest.mark.parametrize("name", [f"map@{HUGE}", f"p@{HUGE}", f"ndcg@{HUGE}", f"recall@{HUGE}", f"p@r{HUGE}",
                                  f"egr@{HUGE}", f"mlgap@{HUGE}", f"rbp@{HUGE}", f"AP@{HUGE}", f"P(rel=2)@{HUGE}",
                                  f"ml_recall@{HUGE}", f"P(rel={HUGE})@5", "nDCG(gains={0:0,1:" + HUGE + "})@10",
                                  " MAP@" + "0" * 4400 + "5"], ids=lambda n: n[:12].strip())
def test_a_name_with_thousands_of_digits_is_refused_in_one_short_message(name):
    with pytest.raises(RetrievalInputError) as e:
        parse_metric(name)
    msg = str(e.value)
    assert msg.startswith("`metrics` ") and f"({len(name.strip())} characters)" in msg, msg
    assert re.search(r"holds a number of 4[0-9]{3} digits|holds a number of 5000 digits", msg), msg
    assert len(msg) < 300 and "\n" not in msg                                      # the name is shortened


def test_the_digit_limits_are_exact():
    assert parse_metric("map@" + "0" * 98 + "10").name == "map@10"                  # 100 digits: read (leading zeros)
    with pytest.raises(RetrievalInputError, match="holds a number of 101 digits; no metric name needs more than 100"):
        parse_metric("map@" + "0" * 99 + "10")
    assert parse_cutoff(str(2**53), "p@x") == 2**53 == MAX_CUTOFF                    # 16 digits, the largest allowed
    assert parse_cutoff("0" * 40 + str(2**53), "p@x") == 2**53
    with pytest.raises(RetrievalInputError, match=r"at most 2\*\*53 = 9007199254740992, got 9007199254740993"):
        parse_cutoff(str(2**53 + 1), "p@x")
    with pytest.raises(RetrievalInputError, match="at most 2\\*\\*53 = 9007199254740992, got a number of 17 digits"):
        parse_cutoff("1" * 17, "p@x")
    with pytest.raises(RetrievalInputError, match="got a number of 5000 digits"):   # a direct call, no int() error
        parse_cutoff(HUGE, "p@x")


def test_check_name_digits_is_the_one_guard():
    from retrieval_lit.metrics import check_name_digits
    assert check_name_digits("x" + "9" * 100) == "x" + "9" * 100
    with pytest.raises(RetrievalInputError, match=r"^`measures` 'AP@1{15}\.\.\.1{19}' \(5003 characters\): holds a number "
                                                  r"of 5000 digits; no metric name needs more than 100"):
        check_name_digits(f"AP@{HUGE}", "measures")


def test_quote_name():
    assert quote_name("map@10") == "'map@10'"
    q = quote_name("a" * 20 + "b" * 60)
    assert q == "'" + "a" * 18 + "..." + "b" * 19 + "' (80 characters)"
    assert quote_name("x" * 40) == repr("x" * 40)


def test_unknown_long_names_are_shortened():
    with pytest.raises(RetrievalInputError) as e:
        parse_metric("zz" * 50_000)
    assert "'zzzzzzzzzzzzzzzzzz...zzzzzzzzzzzzzzzzzzz' (100000 characters)" in str(e.value)
    assert len(str(e.value)) < 1000


@pytest.fixture
def codes_files(tmp_path):
    for f, a in [("q", [[0, 0]]), ("g", [[0, 0], [0, 1], [1, 0], [1, 1]]), ("ql", [0]), ("gl", [0, 1, 0, 0])]:
        np.save(tmp_path / f"{f}.npy", np.array(a))
    return ["evaluate", "--query-codes", tmp_path / "q.npy", "--gallery-codes", tmp_path / "g.npy",
            "--query-labels", tmp_path / "ql.npy", "--gallery-labels", tmp_path / "gl.npy"]


def test_cli_evaluate_prints_one_line_for_a_huge_cutoff(codes_files, capsys):
    line = _one_error_line(*_cli(codes_files + ["--metrics", f"map@{HUGE}"], capsys))
    assert "`metrics` 'map@11111111111111...1111111111111111111' (5004 characters): holds a number of 5000" in line
    code, out, err = _cli(codes_files + ["--metrics", "p@2", "--json", "-"], capsys)   # the files themselves are fine
    assert code == 0 and json.loads(out)["metrics"] == {"p@2": 0.75}                  # items 1, 2 tie, one relevant


@pytest.mark.parametrize("measure", [
    pytest.param(f"map_cut_{HUGE}", id="map_cut"), pytest.param(f"P.{HUGE}", id="P."),
    pytest.param(f"AP@{HUGE}", id="AP@")])
def test_cli_trec_eval_prints_one_line_for_a_huge_cutoff(measure, capsys):
    "The TREC side (chapter 52) refuses it in one line, naming the option typed, -m (issue 46)."
    line = _one_error_line(*_cli(["trec-eval", TREC / "qrels.test", TREC / "results.test", "-m", measure], capsys))
    assert line.startswith("retrieval-lit: error: `-m` "), line


# ----------------------------------------------------------------------------- item 7: course over broken notebooks
GOOD = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# A"}]}
BROKEN = {
    "invalid JSON": (b'{"cells": [', "not valid JSON"),
    "empty": (b"", "the file is empty"),
    "blank": (b"  \n", "the file is empty"),
    "not UTF-8": ('{"cells": [], "metadata": {"author": "Ren\u00e9"}}'.encode("latin-1"), "not UTF-8 text (byte 0xe9"),
    "source a number": (json.dumps({**GOOD, "cells": [{"cell_type": "code", "source": 5}]}).encode(),
                        "cell 0 has a source that is neither text nor a list of lines: 5 (int)"),
    "source lines not text": (json.dumps({**GOOD, "cells": [{"cell_type": "code", "source": ["a\n", 3]}]}).encode(),
                              "cell 0 has a source that is neither text nor a list of lines"),
    "a JSON list": (b"[1, 2]", "must be a notebook as json.load reads it (a JSON object with a list of 'cells'), got "
                               "a JSON list"),
    "cells not a list": (json.dumps({**GOOD, "cells": {"a": 1}}).encode(), "an object without a list of 'cells'"),
    "a cell not an object": (json.dumps({**GOOD, "cells": [GOOD["cells"][0], "text"]}).encode(),
                             "cell 1 must be a JSON object, got 'text' (str)"),
    "nested too deeply": (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_course_over_a_broken_notebook_prints_one_line_naming_it(case, tmp_path, capsys):
    data, why = BROKEN[case]
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    (nbs / "01_fine.ipynb").write_text(json.dumps(GOOD))
    (nbs / "02_broken.ipynb").write_bytes(data)
    (nbs / "styles.css").write_text("/* copied with the notebooks */")
    line = _one_error_line(*_cli(["course", "--student", tmp_path / "out", "--nbs", nbs], capsys))
    assert "02_broken.ipynb" in line and why in line, line
    assert not (tmp_path / "out").exists()                                         # nothing written
    (nbs / "02_broken.ipynb").write_text(json.dumps(GOOD))                         # mended: the copies are written
    code, out, err = _cli(["course", "--student", tmp_path / "out", "--nbs", nbs], capsys)
    assert code == 0 and err == [] and "wrote 2 student notebooks" in out
    assert json.loads((tmp_path / "out" / "02_broken.ipynb").read_text())["cells"] == GOOD["cells"]


def test_course_reads_a_notebook_with_a_byte_order_mark(tmp_path, capsys):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    (nbs / "01_bom.ipynb").write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    code, out, err = _cli(["course", "--student", tmp_path / "out", "--nbs", nbs], capsys)
    assert code == 0 and err == []


# ----------------------------------------------------------------------------- item 8: trec-eval --compare -m gm_map
def _trec_eval_all(name):
    "trec_eval's own value of `name` over all topics for results.test (its output file, out.test.aq)."
    for line in (TREC / "out.test.aq").read_text().splitlines():
        parts = line.split()
        if parts[:2] == [name, "all"]:
            return float(parts[2])
    raise KeyError(name)


TWO_RUNS = ["trec-eval", TREC / "qrels.test", TREC / "results.test", TREC / "results.test", "--compare"]


@pytest.mark.parametrize("measures, why", [(["gm_map"], "geometric mean"), (["gm_map", "map"], "geometric mean"),
                                           (["official", "gm_map"], "geometric mean"), (["runid"], "the run's name"),
                                           (["num_q"], "the number of topics")])
def test_trec_compare_refuses_a_measure_with_no_value_per_topic(measures, why, capsys):
    argv = TWO_RUNS + [a for m in measures for a in ("-m", m)]
    line = _one_error_line(*_cli(argv, capsys))
    name = next(m for m in measures if m != "official" and m != "map")
    assert line.startswith(f"retrieval-lit: error: `-m` {name}: --compare has no value per topic") and why in line


def test_trec_compare_refuses_bpref_under_expected_ties_as_one_run_does(capsys):
    one = _one_error_line(*_cli(["trec-eval", TREC / "qrels.test", TREC / "results.test", "-m", "bpref",
                                 "--ties", "expected"], capsys))
    both = _one_error_line(*_cli(TWO_RUNS + ["-m", "bpref", "--ties", "expected"], capsys))
    assert one == both and "bpref has no closed form" in both


def test_trec_compare_of_a_nickname_notes_what_it_leaves_out(capsys):
    code, out, err = _cli(TWO_RUNS + ["-m", "official"], capsys)
    assert code == 0
    assert err == ["retrieval-lit: note: gm_map, num_q, runid are not compared (they have no value per topic)"]
    rows = {l.split()[0]: l.split() for l in out.splitlines() if l.strip()}
    assert "gm_map" not in rows and "runid" not in rows
    assert float(rows["map"][3]) == _trec_eval_all("map") and float(rows["P_10"][3]) == _trec_eval_all("P_10")
    code, out, err = _cli(TWO_RUNS + ["-m", "official", "--ties", "expected"], capsys)
    assert code == 0 and len(err) == 2 and "under --ties expected, bpref, iprec_at_recall are left out" in err[1]
    code, out, err = _cli(["trec-eval", TREC / "qrels.test", TREC / "results.test", "-m", "gm_map"], capsys)
    assert code == 0 and err == [] and out.split() == ["gm_map", "all", f"{_trec_eval_all('gm_map'):.4f}"]  # one run


# ----------------------------------------------------------------------------- issue 34 item 5: labels for embeddings
@pytest.fixture
def embeddings():
    rng = np.random.default_rng(5)
    return rng.normal(size=(4, 8)), rng.normal(size=(10, 8))


@pytest.mark.parametrize("n_query, n_gallery, bad, source, n", [(4, 9, "gallery_labels", "gallery_embeddings", 10),
                                                                 (4, 11, "gallery_labels", "gallery_embeddings", 10),
                                                                 (3, 10, "query_labels", "query_embeddings", 4)])
def test_labels_of_the_wrong_length_are_named_against_the_embeddings(embeddings, n_query, n_gallery, bad, source, n):
    Q, G = embeddings
    ql, gl = np.arange(n_query) % 2, np.arange(n_gallery) % 2
    with pytest.raises(RetrievalInputError) as e:
        evaluate(query_embeddings=Q, gallery_embeddings=G, query_labels=ql, gallery_labels=gl, metrics="map")
    got = len(gl) if bad == "gallery_labels" else len(ql)
    assert str(e.value) == f"`{bad}` has {got} rows but `{source}` has {n} items: one label (row) per item"
    multi = np.eye(3, dtype=int)[np.arange(n_gallery) % 3]                         # multi-hot rows too
    if bad == "gallery_labels":
        with pytest.raises(RetrievalInputError, match=f"^`gallery_labels` has {n_gallery} rows but `gallery_embeddings`"):
            evaluate(query_embeddings=Q, gallery_embeddings=G, query_labels=np.eye(3, dtype=int)[[0, 1, 2, 0]],
                     gallery_labels=multi, metrics="map")


def test_labels_of_the_wrong_length_are_named_against_scores_and_codes(embeddings):
    Q, G = embeddings
    with pytest.raises(RetrievalInputError, match="^`gallery_labels` has 9 rows but `scores` has 10 items"):
        evaluate(scores=Q @ G.T, query_labels=np.arange(4) % 2, gallery_labels=np.arange(9) % 2, metrics="map")
    with pytest.raises(RetrievalInputError, match="^`gallery_labels` has 9 rows but `gallery_codes` has 10 items"):
        evaluate(Q > 0, G > 0, np.arange(4) % 2, np.arange(9) % 2, metrics="map")
    good = evaluate(query_embeddings=Q, gallery_embeddings=G, query_labels=np.arange(4) % 2,
                    gallery_labels=np.arange(10) % 2, metrics="p@1", ties="index")
    sims = (Q / np.linalg.norm(Q, axis=1, keepdims=True)) @ (G / np.linalg.norm(G, axis=1, keepdims=True)).T
    top = np.argmax(sims, axis=1)                                                   # cosine's nearest item
    assert good.per_query["p@1"].tolist() == (top % 2 == np.arange(4) % 2).astype(float).tolist()


def test_cli_embeddings_with_wrong_labels_print_one_line(tmp_path, embeddings, capsys):
    Q, G = embeddings
    for f, a in [("q", Q), ("g", G), ("ql", np.arange(4) % 2), ("gl", np.arange(9) % 2)]:
        np.save(tmp_path / f"{f}.npy", a)
    line = _one_error_line(*_cli(["evaluate", "--query-embeddings", tmp_path / "q.npy", "--gallery-embeddings",
                                  tmp_path / "g.npy", "--query-labels", tmp_path / "ql.npy", "--gallery-labels",
                                  tmp_path / "gl.npy", "--metrics", "map"], capsys))
    assert "`gallery_labels` has 9 rows but `gallery_embeddings` has 10 items" in line


# ----------------------------------------------------------------------------- issue 33: exercise 06.3 on any platform
def _solution_cell(chapter, exercise):
    "The code of the first code cell after the markdown cell '### Solution CC.N'."
    cells = json.loads((ROOT / "nbs" / f"{chapter}.ipynb").read_text())["cells"]
    start = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith(f"### Solution {exercise}"))
    return next("".join(c["source"]) for c in cells[start + 1:] if c["cell_type"] == "code")


class _Numpy:
    "numpy, but with argsort(kind='quicksort') breaking ties as some other implementation might."
    def __init__(self, ties):
        self.ties, self.rng = ties, np.random.default_rng(0)

    def __getattr__(self, name):
        return getattr(np, name)

    def argsort(self, a, kind=None, **kw):
        a = np.asarray(a)
        if kind != "quicksort":
            return np.argsort(a, kind=kind, **kw)
        if self.ties == "index":                                     # a platform whose quicksort keeps ties in order
            return np.argsort(a, kind="stable")
        if self.ties == "descending":                                # one that reverses them
            return len(a) - 1 - np.argsort(a[::-1], kind="stable")
        perm = self.rng.permutation(len(a))                          # one that shuffles them
        return perm[np.argsort(a[perm], kind="stable")]


@pytest.mark.parametrize("ties", ["index", "descending", "shuffled", "numpy"])
def test_exercise_06_3_holds_whatever_order_quicksort_leaves_the_ties_in(ties, capsys):
    from fastcore.test import test_close
    from retrieval_lit.testing import papers_loop_ap
    code = _solution_cell("06_testing", "06.3")
    assert "found is not None" not in code                         # no assertion that quicksort reorders ties
    fake = np if ties == "numpy" else _Numpy(ties)
    scope = {"np": fake, "evaluate": evaluate, "papers_loop_ap": papers_loop_ap, "test_close": test_close}
    exec(compile(code, "solution 06.3", "exec"), scope)
    stable, unstable = scope["stable_v"], scope["unstable_v"]
    if ties == "index":                                            # quicksort kept the ties: the stable values
        assert np.array_equal(unstable, stable)
    if ties == "descending":                                       # quicksort reversed them: the descending values
        assert np.array_equal(unstable, scope["descending_v"])
    low, high = scope["low"], scope["high"]
    assert (low <= high).all() and ((low - 1e-12 <= unstable) & (unstable <= high + 1e-12)).all()


def test_cli_trec_eval_scores_a_missing_topic_as_each_tool_does(tmp_path, capsys):
    """Without -c, an ir_measures name scores a judged topic the run lacks as 0 (as ir_measures does), a trec_eval
    name leaves it out (as trec_eval does); -c scores it 0 under either. Topic a: AP 1; topic b: not in the run."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("a 0 d1 1\nb 0 d2 1\n")
    run.write_text("a Q0 d1 1 1.0 r\na Q0 d3 2 0.5 r\n")

    def mean(measure, *flags):
        code, out, _ = _cli(["trec-eval", qrels, run, "-m", measure, *flags], capsys)
        assert code == 0
        return float(out.split()[-1])
    assert mean("AP") == 0.5 and mean("map") == 1.0
    assert mean("AP", "-c") == 0.5 and mean("map", "-c") == 0.5

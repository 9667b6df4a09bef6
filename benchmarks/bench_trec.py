"""TREC runs at the limit: a 2 M-line run (2,000 topics x 1,000 documents) read and scored.

usage: python benchmarks/bench_trec.py [TOPICS DOCS] [--dir=DIR] [--part=all|files|dict]
The run's scores are rounded to 3 decimals (so ties occur); the qrels judge 50 relevant documents per topic (40 of
them retrieved) and 50 non-relevant ones. Each contender runs in a fresh process (its own peak RSS), best of 2:
  pytrec_eval    pytrec_eval.parse_qrel / parse_run (Python) + RelevanceEvaluator(map, P.10, ndcg_cut.10)
  retrieval-lit  the command line's work in process: `retrieval-lit trec-eval QRELS RUN -m map -m P.10
                 -m ndcg_cut_10` (read_qrels, read_run, evaluate_run, the printed lines); then `-m map` alone and
                 `-m all_trec`
Times are wall-clock from the first byte read to the last line printed (imports excluded: numba's own import and the
compiled reader's cached code loading are inside), with the process's CPU time beside them (steadier on a shared
machine). Goals (issue 22, item 5): retrieval-lit no slower than pytrec_eval and at most its peak memory; `-m all_trec` at most
2x `-m map`. The values are compared with pytrec_eval's per topic (the same tie order: trec_eval's).

The dict part (issue 33; `--part=dict`, or `--part=files` for the part above alone, both by default) starts from
pytrec_eval's dictionaries, built from the same files before any clock starts, in one fresh process: each contender
once to warm up (numba's cached code, ranx's compilation), then best of 3, wall and CPU time:
  pytrec_eval    RelevanceEvaluator(qrels, {map, P.10, ndcg_cut.10}) built and .evaluate(run)
  retrieval-lit  evaluate_run(qrels, run, ["map", "P_10", "ndcg_cut_10"]) on the same dictionaries
  ranx           Qrels(qrels), Run(run) built and evaluate(..., ["map", "precision@10", "ndcg@10"]) (informative)
Goal: retrieval-lit no slower than pytrec_eval (met / NOT MET, on wall and on CPU time); its values equal
pytrec_eval's at full precision.

usage: python benchmarks/bench_trec.py typical [--dir=DIR] [--repeat=N]
The typical part (issue 41): a TREC track's sizes, 10 topics x 100 documents and 50 x 1,000, written by the same
generator, the same measures (map, P_10, ndcg_cut_10), in one fresh process, each contender warmed up once, then
interleaved, median of N (default 21) calls:
  dicts   pytrec_eval  RelevanceEvaluator(qrels, {map, P.10, ndcg_cut.10}).evaluate(run) on parse_qrel / parse_run's
          retrieval-lit evaluate_run(qrels, run, ["map", "P_10", "ndcg_cut_10"]) on the same dicts
  files   pytrec_eval  parse_qrel + parse_run of the files, then the same evaluation
          retrieval-lit read_qrels + read_run (table=True, as `trec-eval` reads them) + evaluate_run
Goals: retrieval-lit <= 1x pytrec_eval on each line; the values equal pytrec_eval's (largest difference printed).
Beside the dicts lines, what bounds them from below (informative, timed in the same interleaved loop): one bare Python
pass over every entry of both dictionaries, and the Python passes that reading them into arrays takes (the ids joined
into one string, the set of the values' types, the values read into an array; both dictionaries).
A typical run is read and checked without numba; once the compiled reader is loaded in a process (after a large
file), small files are read by it too: the last line times the 50 x 1,000 files so (informative).
Then the first call in a fresh process with an empty numba cache (NUMBA_CACHE_DIR a new empty folder): the import of
retrieval_lit.trec, then read_qrels + read_run + evaluate_run on the 50 x 1,000 files; goal: the first call <= 1 s
(whether numba was imported at all is printed)."""
import io
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = ["map", "P.10", "ndcg_cut_10"]


def write_files(folder: Path, n_topics=2000, n_docs=1000, seed=0):
    "The run and qrels files (written once per folder and size)."
    run, qrels = folder / f"run_{n_topics}x{n_docs}.txt", folder / f"qrels_{n_topics}x{n_docs}.txt"
    if run.exists() and qrels.exists():
        return qrels, run
    rng = np.random.default_rng(seed)
    with open(run, "w") as r, open(qrels, "w") as q:
        for t in range(n_topics):
            docs = rng.choice(5_000_000, n_docs + 20, replace=False)
            retrieved, unretrieved = docs[:n_docs], docs[n_docs:]
            rel = rng.choice(n_docs, 40, replace=False)
            boost = np.zeros(n_docs)
            boost[rel] = 0.3
            scores = np.round(rng.random(n_docs) * 0.7 + boost, 3)
            order = np.lexsort((-retrieved, -scores))        # trec_eval's order: score, then docid descending
            qid = f"{100 + t}"
            r.write("".join(f"{qid} Q0 D{retrieved[i]} {k} {scores[i]:.3f} bench\n" for k, i in enumerate(order, 1)))
            nonrel = rng.choice(np.setdiff1d(np.arange(n_docs), rel), 50, replace=False)
            lines = [f"{qid} 0 D{retrieved[i]} 1\n" for i in rel] + [f"{qid} 0 D{d} 1\n" for d in unretrieved[:10]]
            lines += [f"{qid} 0 D{retrieved[i]} 0\n" for i in nonrel]
            q.write("".join(lines))
    return qrels, run


def stage(name, qrels, run):
    out = {}
    if name == "pytrec_eval":
        import pytrec_eval
        t0, c0 = time.perf_counter(), time.process_time()
        with open(qrels) as f:
            qr = pytrec_eval.parse_qrel(f)
        with open(run) as f:
            rn = pytrec_eval.parse_run(f)
        res = pytrec_eval.RelevanceEvaluator(qr, {"map", "P.10", "ndcg_cut.10"}).evaluate(rn)
        out["seconds"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
        out["values"] = {m: {q: v[m] for q, v in res.items()} for m in ("map", "P_10", "ndcg_cut_10")}
    else:
        from retrieval_lit.cli import main
        measures = {"three": MEASURES, "map": ["map"], "all_trec": ["all_trec"]}[name]
        argv = ["trec-eval", str(qrels), str(run), "-q"]
        for m in measures:
            argv += ["-m", m]
        buf = io.StringIO()
        t0, c0 = time.perf_counter(), time.process_time()
        code = main(argv, out=buf)
        out["seconds"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
        assert code == 0
        if name == "three":                                        # the values at full precision (not timed)
            from retrieval_lit.trec import evaluate_run, read_qrels, read_run
            report = evaluate_run(read_qrels(qrels, table=True), read_run(run, table=True), MEASURES)
            out["values"] = {m: dict(zip(report.qids, report.per_query[m].tolist())) for m in ("map", "P_10", "ndcg_cut_10")}
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def timed(f, repeat=3):
    "(value, best wall seconds, best CPU seconds) of f() after one warm-up call."
    value, walls, cpus = f(), [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        f()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return value, min(walls), min(cpus)


def dict_stage(qrels_path, run_path):
    "The dict part in this process: the dictionaries first (untimed), then each contender (see the module docstring)."
    import pytrec_eval
    from retrieval_lit.trec import evaluate_run
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    out = {"entries": sum(len(d) for d in run.values())}
    measures = {"map", "P.10", "ndcg_cut.10"}
    py, *out["pytrec_eval"] = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run))
    report, *out["retrieval_lit"] = timed(lambda: evaluate_run(qrels, run, ["map", "P_10", "ndcg_cut_10"]))
    ours = report.to_dict()
    out["largest_difference"] = max(abs(ours[q][m] - v[m]) for q, v in py.items() for m in ("map", "P_10", "ndcg_cut_10"))
    out["same_topics"] = sorted(ours) == sorted(py)
    try:
        import ranx
        _, *out["ranx"] = timed(lambda: ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map", "precision@10", "ndcg@10"]))
    except ImportError:
        out["ranx"] = None
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def dict_part(qrels, run):
    p = subprocess.run([sys.executable, __file__, "--stage", "dict", str(qrels), str(run)], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"the dict part failed:\n{p.stderr[-3000:]}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"dict part: pytrec_eval's dictionaries ({res['entries']:,} run entries), one fresh process, "
          f"each contender warmed up once, best of 3")
    label = {"pytrec_eval": "pytrec_eval RelevanceEvaluator(qrels, ...).evaluate(run)",
             "retrieval_lit": "retrieval-lit evaluate_run(qrels, run, ...)",
             "ranx": "ranx Qrels + Run + evaluate (informative)"}
    for name in ("pytrec_eval", "retrieval_lit", "ranx"):
        if res[name] is None:
            print(f"  {label[name]:58s} (not installed)")
        else:
            print(f"  {label[name]:58s} {res[name][0]:6.2f} s wall {res[name][1]:6.2f} s CPU")
    py, ours = res["pytrec_eval"], res["retrieval_lit"]
    print(f"  largest |difference| from pytrec_eval (map, P_10, ndcg_cut_10, every topic): {res['largest_difference']:.1e}")
    for i, clock in enumerate(("wall", "CPU")):
        print(f"  goal dict {clock + ' time: retrieval-lit <= pytrec_eval':38s} {ours[i]:8.2f} vs {py[i]:8.2f}  "
              f"{'met' if ours[i] <= py[i] else 'NOT MET'} (ratio {ours[i] / py[i]:.2f})")
    same = res["same_topics"] and res["largest_difference"] == 0.0
    print(f"  agreement with pytrec_eval, bit for bit: {'met' if same else 'NOT MET'}")


def fresh(name, qrels, run, repeat=2):
    "Best time of `repeat` fresh processes, and the peak RSS of the best one."
    best = None
    for _ in range(repeat):
        p = subprocess.run([sys.executable, __file__, "--stage", name, str(qrels), str(run)], capture_output=True,
                           text=True)
        if p.returncode:
            raise SystemExit(f"{name} failed:\n{p.stderr[-3000:]}")
        res = json.loads(p.stdout.strip().splitlines()[-1])
        if best is None or res["seconds"] < best["seconds"]:
            best = res
    return best


def main(n_topics=2000, n_docs=1000, folder=None, part="all"):
    folder = Path(folder or tempfile.gettempdir()) / "retrieval_lit_bench_trec"
    folder.mkdir(exist_ok=True)
    qrels, run = write_files(folder, n_topics, n_docs)
    print(f"{n_topics:,} topics x {n_docs:,} documents ({run.stat().st_size / 2**20:.0f} MiB run, "
          f"{qrels.stat().st_size / 2**20:.1f} MiB qrels)")
    if part in ("all", "files"):
        files_part(qrels, run)
    if part in ("all", "dict"):
        dict_part(qrels, run)


def files_part(qrels, run):
    print("files part: each contender in a fresh process, best of 2")
    res = {name: fresh(name, qrels, run) for name in ("pytrec_eval", "three", "map", "all_trec")}
    label = {"pytrec_eval": "pytrec_eval parse + evaluate (map, P.10, ndcg_cut.10)",
             "three": "retrieval-lit trec-eval -m map -m P.10 -m ndcg_cut_10",
             "map": "retrieval-lit trec-eval -m map", "all_trec": "retrieval-lit trec-eval -m all_trec"}
    for name, r in res.items():
        print(f"  {label[name]:58s} {r['seconds']:6.2f} s wall {r['cpu']:6.2f} s CPU  peak RSS {r['peak_rss_mib']:5.0f} MiB")
    py, ours = res["pytrec_eval"], res["three"]
    worst = max(abs(ours["values"][m][q] - v) for m, per in py["values"].items() for q, v in per.items())
    print(f"  largest |difference| from pytrec_eval over {len(py['values']['map'])} topics x 3 measures: {worst:.1e}")
    goals = [("time: retrieval-lit <= pytrec_eval", ours["seconds"], py["seconds"]),
             ("peak RSS: retrieval-lit <= pytrec_eval", ours["peak_rss_mib"], py["peak_rss_mib"]),
             ("-m all_trec <= 2x -m map", res["all_trec"]["seconds"], 2 * res["map"]["seconds"])]
    for what, a, b in goals:
        print(f"  goal {what:42s} {a:8.2f} vs {b:8.2f}  {'met' if a <= b else 'NOT MET'}")
    print(f"  agreement with pytrec_eval to 1e-12: {'met' if worst <= 1e-12 else 'NOT MET'}")


TYPICAL = ((10, 100), (50, 1000))
TYPICAL_MEASURES = ["map", "P_10", "ndcg_cut_10"]


def bare_pass(*tables):
    "One pass over every entry of the dictionaries, doing nothing with it: what any reader of them pays at least."
    for table in tables:
        for docs in table.values():
            for _ in docs.items():
                pass


def array_passes(*tables):
    """The Python passes that reading the dictionaries into arrays takes (retrieval_lit.trec's dictionary path makes
    these, then works in whole arrays): the ids joined into one string, the set of the values' types, the values read."""
    for table in tables:
        inner = [table[q] for q in sorted(table)]
        "\x00".join(itertools.chain.from_iterable(inner)).encode()
        set(map(type, itertools.chain.from_iterable([d.values() for d in inner])))
        np.fromiter(itertools.chain.from_iterable([d.values() for d in inner]), dtype=np.float64)


def typical_stage(folder, repeat):
    "The typical part in this process: dicts and files of each size, interleaved, medians (see the docstring)."
    import pytrec_eval
    from retrieval_lit.trec import evaluate_run, read_qrels, read_run
    py_measures = {"map", "P.10", "ndcg_cut.10"}
    out = []
    for n_topics, n_docs in TYPICAL:
        qrels_path, run_path = write_files(folder, n_topics, n_docs)
        with open(qrels_path) as f:
            qrels = pytrec_eval.parse_qrel(f)
        with open(run_path) as f:
            run = pytrec_eval.parse_run(f)

        def py_files():
            with open(qrels_path) as f:
                q = pytrec_eval.parse_qrel(f)
            with open(run_path) as f:
                r = pytrec_eval.parse_run(f)
            return pytrec_eval.RelevanceEvaluator(q, py_measures).evaluate(r)

        ours_files = lambda: evaluate_run(read_qrels(qrels_path, table=True), read_run(run_path, table=True),
                                          TYPICAL_MEASURES)
        cases = {"dicts": (lambda: pytrec_eval.RelevanceEvaluator(qrels, py_measures).evaluate(run),
                           lambda: evaluate_run(qrels, run, TYPICAL_MEASURES)),
                 "files": (py_files, ours_files)}
        if (n_topics, n_docs) == TYPICAL[-1]:                    # the last size: then once more with numba loaded
            cases["files, compiled reader loaded (informative)"] = (py_files, ours_files)
        for what, (theirs, ours) in cases.items():
            if what.startswith("files, compiled"):
                import retrieval_lit.trec_kernel  # noqa: F401   a process that has read a large file: the compiled reader
            py, report = theirs(), ours()                         # warm up; the values
            mine = report.to_dict()
            diff = max(abs(mine[q][m] - py[q][m]) for q in py for m in mine[q])
            contenders = [("pytrec_eval", theirs), ("retrieval_lit", ours)]
            if what == "dicts":                                   # what bounds the dicts line from below
                contenders += [("bare pass", lambda: bare_pass(qrels, run)),
                               ("array passes", lambda: array_passes(qrels, run))]
            times = {k + c: [] for k, _ in contenders for c in ("", " cpu")}
            for _ in range(repeat):                               # interleaved: the load moves both alike
                for name, fn in contenders:
                    t0, c0 = time.perf_counter(), time.process_time()
                    fn()
                    times[name].append(time.perf_counter() - t0)
                    times[name + " cpu"].append(time.process_time() - c0)
            out.append({"size": f"{n_topics} x {n_docs}", "what": what, "difference": diff,
                        "same_topics": sorted(mine) == sorted(py),
                        **{k: float(np.median(v)) for k, v in times.items()}})
    print(json.dumps(out))


COLD = """
import json, os, sys, time
t0 = time.perf_counter()
from retrieval_lit.trec import evaluate_run, read_qrels, read_run
t1 = time.perf_counter()
qrels, run = read_qrels(sys.argv[1], table=True), read_run(sys.argv[2], table=True)
report = evaluate_run(qrels, run, ["map", "P_10", "ndcg_cut_10"])
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "numba": "numba" in sys.modules, "map": report.summary["map"]}))
"""


def typical_part(folder, repeat=21):
    folder.mkdir(exist_ok=True)
    for size in TYPICAL:
        write_files(folder, *size)
    p = subprocess.run([sys.executable, __file__, "--stage", "typical", str(folder), str(repeat)], capture_output=True,
                       text=True)
    if p.returncode:
        raise SystemExit(f"the typical part failed:\n{p.stderr[-3000:]}")
    rows = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"typical part: one fresh process, each contender warmed up once, then interleaved, median of {repeat}; "
          f"measures map, P_10, ndcg_cut_10")
    for r in rows:
        for clock, key in (("wall", ""), ("CPU", " cpu")):
            ratio = r["retrieval_lit" + key] / r["pytrec_eval" + key]
            print(f"  {r['size']:>11} {r['what']} ({clock:>4}): pytrec_eval {1000 * r['pytrec_eval' + key]:8.2f} ms  "
                  f"retrieval-lit {1000 * r['retrieval_lit' + key]:8.2f} ms  ratio {ratio:5.2f}  goal <= 1x: "
                  f"{'met' if ratio <= 1 else 'NOT MET'}")
        same = r["difference"] <= 1e-12 and r["same_topics"]
        print(f"  {r['size']:>11} {r['what']}: largest |difference| from pytrec_eval {r['difference']:.1e}: "
              f"values equal {'met' if same else 'NOT MET'}")
        if "bare pass" in r:
            py = r["pytrec_eval cpu"]
            print(f"  {r['size']:>11} {r['what']} floor (informative, CPU): one bare pass over both dictionaries "
                  f"{1000 * r['bare pass cpu']:.2f} ms ({r['bare pass cpu'] / py:.2f}x), the passes reading them into "
                  f"arrays {1000 * r['array passes cpu']:.2f} ms ({r['array passes cpu'] / py:.2f}x pytrec_eval)")
    qrels, run = write_files(folder, 50, 1000)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        p = subprocess.run([sys.executable, "-c", COLD, str(qrels), str(run)], capture_output=True, text=True, env=env)
    if p.returncode:
        raise SystemExit(f"the cold call failed:\n{p.stderr[-3000:]}")
    cold = json.loads(p.stdout.strip().splitlines()[-1])
    print(f"  first call in a fresh process, empty numba cache (50 x 1000 files): import {cold['import']:.2f} s, "
          f"read + evaluate {cold['first']:.2f} s (numba imported: {'yes' if cold['numba'] else 'no'})  "
          f"goal first call <= 1 s: {'met' if cold['first'] <= 1 else 'NOT MET'}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "typical":
        folder = next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--dir=")), None)
        repeat = int(next((a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--repeat=")), 21))
        typical_part(Path(folder or tempfile.gettempdir()) / "retrieval_lit_bench_trec", repeat)
    elif len(sys.argv) > 2 and sys.argv[1] == "--stage" and sys.argv[2] == "typical":
        typical_stage(Path(sys.argv[3]), int(sys.argv[4]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--stage":
        (dict_stage if sys.argv[2] == "dict" else lambda *a: stage(sys.argv[2], *a))(Path(sys.argv[3]), Path(sys.argv[4]))
    else:
        args = [a for a in sys.argv[1:] if not a.startswith("--")]
        folder = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--dir=")), None)
        part = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--part=")), "all")
        if part not in ("all", "files", "dict"):
            raise SystemExit(f"--part must be all, files or dict, got {part!r}")
        main(*map(int, args[:2]), folder=folder, part=part)

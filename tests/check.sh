#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it (the README's test command).
# Fails when: README.md is not generated from nbs/index.ipynb; the package differs from what
# nbdev_export makes of the notebooks; nbdev_clean would change a notebook; any cell of any notebook
# raises, or a cell that draws shows no figure (each chapter is executed once, by the docs build,
# honouring nbdev's directives as nbdev_test does); a student copy of the book (solutions removed) fails to run; (where Chromium is installed) a rendered page has
# a console error, untypeset math or a missing figure; any pytest test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== 1/7 README.md is generated from nbs/index.ipynb"
python tools/make_readme.py --check

echo "== 2/7 retrieval_lit/ is exactly what nbdev_export makes of the notebooks"
mkdir -p "$tmp/export/retrieval_lit"
cp -r settings.ini nbs "$tmp/export/"
cp retrieval_lit/__init__.py "$tmp/export/retrieval_lit/"
cp -r retrieval_lit/answers "$tmp/export/retrieval_lit/"   # the answer keys are data, not exported code
(cd "$tmp/export" && nbdev_export)
if ! diff -r -x __pycache__ retrieval_lit "$tmp/export/retrieval_lit"; then
  echo "FAIL: the package is out of step with the notebooks: run nbdev_export and commit the result"; exit 1
fi

echo "== 3/7 notebooks are clean (nbdev_clean changes nothing)"
mkdir -p "$tmp/clean"
cp -r settings.ini nbs "$tmp/clean/"
(cd "$tmp/clean" && nbdev_clean >/dev/null)
if ! diff -r -q nbs "$tmp/clean/nbs"; then
  echo "FAIL: notebooks are not clean: run nbdev_clean and commit the result"; exit 1
fi

echo "== 4/7 every notebook runs, once: the offline docs build executes each chapter in a fresh kernel"
# (the log gives each chapter's run time, and its kernel's CPU time: on a shared machine the smaller of the two is what
#  an idle one takes at most; the budget line names the chapters over 60 s; --record keeps which cells ran, for 5/7)
python tools/check_docs.py --nbdev
python tools/build_docs.py "$tmp/site" --jobs 2 --record "$tmp/ran.json" > "$tmp/docs.log" 2>&1 || { grep -v "Kernel is running over TCP" "$tmp/docs.log" | tail -50; echo "FAIL: a notebook failed or the docs did not build"; exit 1; }
grep -E "^\s+\S+\.ipynb|^  executing|^  search index|^wrote" "$tmp/docs.log" || true

echo "== 5/7 a student copy of the whole book runs from top to bottom (solutions removed, stubs in place)"
# the copy sits where a student's checkout would hold it: chapters read ../tests/data and ../benchmarks
mkdir -p "$tmp/book" && ln -s "$PWD/tests" "$tmp/book/tests" && ln -s "$PWD/benchmarks" "$tmp/book/benchmarks"
retrieval-lit course --student "$tmp/book/nbs" > /dev/null
python - "$tmp/book/nbs" <<'PY' || { echo "FAIL: a student copy holds a solution"; exit 1; }
import json, pathlib, sys
bad = [p.name for p in pathlib.Path(sys.argv[1]).glob("*.ipynb")
       if any("".join(c["source"]).startswith(("## Solutions", "### Solution")) for c in json.loads(p.read_text())["cells"])]
print("\n".join(bad)); sys.exit(1 if bad else 0)
PY
# a chapter whose cells, its exercise stubs included (each the book's cell under a comment), are the cells step 4 ran, ran there
# already (build_docs.ran_in_record): --reuse runs only the others (changed cells, a cell after a stub, a cell that
# reads the notebook folder); no pages are written
python tools/build_docs.py "$tmp/student-site" --nbs "$tmp/book/nbs" --jobs 2 --reuse "$tmp/ran.json" --no-pages > "$tmp/student.log" 2>&1 || { grep -v "Kernel is running over TCP" "$tmp/student.log" | tail -50; echo "FAIL: a student copy did not run"; exit 1; }
echo "student copy: $(grep -c 'not run: the site build ran these cells' "$tmp/student.log" || true) chapters ran in step 4 already, $(grep -cE ' run +[0-9.]+s' "$tmp/student.log" || true) ran again"

echo "== 6/7 the rendered docs read well in headless Chromium"
# (the worked-solution check runs even without Chromium: every chapter with exercises must have a folded solution for each)
# (also: the sidebar's parts, the search box and the search itself, served on 127.0.0.1, the links, the API index)
status=0; python tools/check_docs.py "$tmp/site" --require-solutions --min-parts 6 || status=$?
if [ "$status" -eq 2 ]; then echo "(no Chromium here: the browser check was skipped)"; elif [ "$status" -ne 0 ]; then exit "$status"; fi

echo "== 7/7 pytest"
python -m pytest tests -q -p no:cacheprovider --durations=25   # the slowest tests, for the time budget

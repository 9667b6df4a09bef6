#!/usr/bin/env bash
# What a plain `pip install .` meets (no dev extras, no matplotlib): the demo runs, `evaluate` runs from Python, and
# `retrieval-lit demo --figures DIR` stops before computing with one line naming the [plots] extra (exit 2).
# Run by .ci/run in a fresh virtual environment; usage: bash tests/plain_install.sh [VENV_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-$(mktemp -d)/venv}
python -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check .
trec="$(pwd)/tests/data/trec_eval"
cd "$(mktemp -d)"                     # away from the checkout: import the installed package
"$venv/bin/retrieval-lit" trec-eval "$trec/qrels.test" "$trec/results.test" -m all_trec -q --trec-version 10 > trec.txt
cut -f1 trec.txt | sort -u > names.txt
grep -F -f <(sed 's/$/\t/' names.txt) "$trec/out.test.aq" | diff - trec.txt > /dev/null \
  || { echo "FAIL: trec-eval differs from trec_eval 10.0's output on its own test files"; exit 1; }
echo "plain install: trec-eval -m all_trec prints trec_eval 10.0's $(wc -l < trec.txt) lines"
"$venv/bin/retrieval-lit" demo --bits 12 > demo.txt
grep -q "^map@100 " demo.txt || { cat demo.txt; echo "FAIL: the plain demo printed no map@100"; exit 1; }
"$venv/bin/python" -c "
import numpy as np, sys
from retrieval_lit import evaluate
assert 'matplotlib' not in sys.modules
r = evaluate(np.array([[0, 1, 1, 0]]), np.array([[0, 1, 1, 0], [1, 0, 0, 1]]), np.array([1]), np.array([1, 0]), ['map', 'p@1'])
assert (r['map'], r['p@1']) == (1.0, 1.0), dict(r)
print('plain install: evaluate ok')"
if "$venv/bin/python" -c "import matplotlib" 2>/dev/null; then
  echo "(matplotlib is importable in the plain venv: the missing-extra message is not exercised)"
else
  status=0; "$venv/bin/retrieval-lit" demo --bits 12 --figures figs > out.txt 2> err.txt || status=$?
  if [ "$status" -ne 2 ] || ! grep -q 'pip install "retrieval_lit\[plots\]"' err.txt || grep -q Traceback err.txt \
     || [ "$(wc -l < err.txt)" -ne 1 ] || [ -s out.txt ]; then
    echo "FAIL: demo --figures without matplotlib (exit $status):"; cat out.txt err.txt; exit 1
  fi
  echo "plain install: demo --figures without matplotlib -> $(cat err.txt)"
fi
echo "plain install: ok"

#!/usr/bin/env bash
# A maintainer's quick check of a change, short of the whole suite (tests/check.sh is what CI runs).
#   bash tests/quick.sh            # what changed since the last commit (and untracked files)
#   BASE=main bash tests/quick.sh  # what changed since main (a branch's whole change)
# It cleans and exports the notebooks, then runs, stopping at the first failure: the house's own tests (the cell
# rule, the public names, the checklists: a few seconds), the README check (when nbs/index.ipynb changed) and
# nbdev's docs processing (when a notebook changed), every changed notebook (nbdev_test), the docstring examples of
# every changed module, and the test files that exercise a changed module (tools/consumers.py: its importers, the
# modules that import them when imported, the suites that loop over every metric), plus changed test files.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${BASE:-HEAD}
changed=$( { git diff --name-only "$base"; git ls-files --others --exclude-standard; } | sort -u)

echo "== clean and export"
nbdev_clean >/dev/null
nbdev_export

nbs=$(printf '%s\n' $changed | grep -E '^nbs/.*\.ipynb$' || true)
mods=$( { printf '%s\n' $changed | grep -E '^retrieval_lit/[a-z].*\.py$' || true;
          for nb in $nbs; do { grep -ho '"#| default_exp [a-z_.]*' "$nb" || true; } | awk '{print "retrieval_lit/" $3}' | tr . / | sed 's/$/.py/'; done; } \
        | sed 's#retrieval_lit/retrieval_lit#retrieval_lit#' | sort -u)
existing=$(for m in $mods; do [ -f "$m" ] && echo "$m"; done)
tests=$( { printf '%s\n' $changed | grep -E '^tests/test_.*\.py$' || true;
           if [ -n "$existing" ]; then python tools/consumers.py $existing; fi; } | while read -r t; do [ -f "$t" ] && echo "$t"; done | sort -u)

house=$(python tools/consumers.py --house)
echo "== the house's own tests"
python -m pytest -q -x -p no:cacheprovider $house
tests=$(printf '%s\n' $tests | grep -vxF "$house" || true)

if printf '%s\n' $changed | grep -qx 'nbs/index.ipynb'; then
  echo "== README.md is generated from nbs/index.ipynb"
  python tools/make_readme.py --check
fi
if [ -n "$nbs" ]; then
  echo "== nbdev's docs step can process the notebooks"
  python tools/check_docs.py --nbdev
fi

for nb in $nbs; do
  echo "== notebook $nb"
  nbdev_test --path "$nb"
done
for m in $mods; do
  [ -f "$m" ] || continue
  mod=$(echo "${m%.py}" | tr / .)
  echo "== docstring examples of $mod"
  python -c "import doctest, importlib, sys; r = doctest.testmod(importlib.import_module('$mod'), optionflags=doctest.NORMALIZE_WHITESPACE); sys.exit(r.failed > 0)"
done
if [ -n "$tests" ]; then
  echo "== pytest $tests"
  python -m pytest -q -x -p no:cacheprovider $tests
fi
echo "quick check passed (run bash tests/check.sh before you merge)"

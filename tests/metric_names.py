"""The metric families that the tests looping over every metric read: one list (DEVELOPING's checklist for a new
metric: add its family here). `{k}` stands for a cutoff or a radius; `names(k)` gives concrete names."""
from retrieval_lit.metrics import parse_metric

FAMILIES = ("p@{k}", "recall@{k}", "rprec", "map@{k}", "map", "map@r", "ndcg@{k}", "ndcg", "rbp@{k}", "mrr@{k}",
            "mrr", "success@{k}", "egr@{k}", "mlgap@{k}", "p@r{k}", "err@{k}")
# err@{k} reads the grade scale (R(g) = (2^g - 1) / 2^max_grade): a test running it on graded data over several
# batches declares max_grade (evaluate(..., max_grade=G)), or a batch lacking the top grade scores on another scale


def names(k: int) -> list:
    "One concrete name per family at cutoff (or radius) k."
    return [f.format(k=k) for f in FAMILIES]


def families_where(test) -> tuple:
    "The families whose metric (at k = 2) passes `test(metric)`, e.g. lambda m: m.tie_bounds and not m.hamming_only."
    return tuple(f for f in FAMILIES if test(parse_metric(f.format(k=2))))

"""Sharded evaluation on a local Dask cluster (worker processes started here) equals the single process."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from retrieval_lit import engine, ranking  # noqa: E402
from retrieval_lit.average_precision import ap_from_summary  # noqa: E402
from retrieval_lit.hamming import pack_codes  # noqa: E402
from retrieval_lit.metrics import Conventions  # noqa: E402
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix  # noqa: E402
from retrieval_lit.sharded import merge_distinct, shard_offsets, sharded_scan, sharded_summarize  # noqa: E402
from retrieval_lit.validate import RetrievalInputError  # noqa: E402


def test_no_client_is_a_clear_error():
    with pytest.raises(RetrievalInputError, match="`client`"):
        try:
            distributed.get_client()
            pytest.skip("a default client exists in this process")
        except ValueError:
            pass
        sharded_scan(np.zeros((1, 8)), [np.ones((2, 8))], np.zeros(1, int), [np.zeros(2, int)])


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def random_split(rng, n, max_parts):
    "Cut points of 1..max_parts consecutive non-empty pieces of range(n)."
    parts = int(rng.integers(1, min(max_parts, n) + 1))
    cuts = np.sort(rng.choice(np.arange(1, n), parts - 1, replace=False)) if parts > 1 else np.array([], int)
    return np.split(np.arange(n), cuts)


def case(rng, kind, nbits):
    nq, ng = int(rng.integers(1, 25)), int(rng.integers(2, 600))
    qb, gb = rng.integers(0, 2, (nq, nbits)), rng.integers(0, 2, (ng, nbits))
    gb[rng.integers(0, ng, ng // 3)] = gb[0]
    if kind == "class":
        ql, gl = rng.integers(0, 4, nq), rng.integers(0, 4, ng)
        return qb, gb, dict(ql=ql, gl=gl), relevance_from_labels(ql, gl, nq, ng)
    if kind == "multihot":
        ql, gl = rng.integers(0, 2, (nq, 6)), rng.integers(0, 2, (ng, 6))
        return qb, gb, dict(ql=ql, gl=gl), relevance_from_labels(ql, gl, nq, ng)
    m = rng.integers(0, 4, (nq, ng))
    return qb, gb, dict(m=m), relevance_from_matrix(m, nq, ng)


def assert_equal_scans(a, b):
    for f in ("hist", "top_grades", "code_max"):
        x, y = getattr(a.summary, f), getattr(b.summary, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), f
    assert (a.sums is None) == (b.sums is None)
    if a.sums is not None:
        for f in ("precision_sum", "discount_sum", "r_hits"):
            assert np.array_equal(getattr(a.sums, f), getattr(b.sums, f)), f


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_shard_lists_equal_single_process(client, seed, kind):
    rng = np.random.default_rng(100 * seed + len(kind))
    nbits = int(rng.choice([5, 32, 64, 100]))
    qb, gb, src, rel = case(rng, kind, nbits)
    qs, gs = random_split(rng, len(qb), 3), random_split(rng, len(gb), 6)
    top = int(rng.choice([0, 1, 50, -1]))
    packed = bool(rng.integers(0, 2))
    g_shards = [pack_codes(gb[s]) if packed else gb[s] for s in gs]
    kw = dict(stable_ranks=top, code_max=True, index_sums=True, client=client)
    if kind == "matrix":
        blocks = [[src["m"][np.ix_(a, b)] for b in gs] for a in qs]
        got = sharded_scan([qb[s] for s in qs], g_shards, relevance=blocks, **kw)
    else:
        got = sharded_scan([qb[s] for s in qs], g_shards, [src["ql"][s] for s in qs], [src["gl"][s] for s in gs], **kw)
    one = engine.scan(qb, gb, rel, stable_ranks=top, code_max=True, index_sums=True)
    assert_equal_scans(got, one)
    ref = ranking.summarize(qb, gb, rel, stable_ranks=top, code_max=True)
    assert np.array_equal(got.summary.hist, ref.hist)


@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_dask_arrays_equal_single_process(client, kind):
    rng = np.random.default_rng(7)
    qb, gb, src, rel = case(rng, kind, 64)
    gq = da.from_array(qb, chunks=(7, 64))
    gg = da.from_array(gb, chunks=(97, 64))
    if kind == "matrix":
        got = sharded_scan(gq, gg, relevance=da.from_array(src["m"], chunks=(5, 131)), stable_ranks=20,
                           index_sums=True, client=client)
    else:
        labels_chunks = 50        # rechunked to the codes' chunks by the driver
        got = sharded_scan(gq, gg, da.from_array(src["ql"], chunks=labels_chunks),
                           da.from_array(src["gl"], chunks=labels_chunks), stable_ranks=20, index_sums=True,
                           client=client)
    assert_equal_scans(got, engine.scan(qb, gb, rel, stable_ranks=20, index_sums=True))


def test_metrics_from_sharded_summary(client):
    rng = np.random.default_rng(3)
    qb, gb, src, rel = case(rng, "class", 32)
    s = sharded_summarize(qb, da.from_array(gb, chunks=(64, 32)), src["ql"], da.from_array(src["gl"], chunks=64),
                          stable_ranks=-1, client=client)
    ref = ranking.summarize(qb, gb, rel, stable_ranks=-1)
    for ties in ("expected", "optimistic", "pessimistic", "index"):
        c = Conventions.make(ties=ties)
        assert np.array_equal(ap_from_summary(s, None, c), ap_from_summary(ref, None, c))


def test_offsets_and_distinct_merge_by_hand():
    "Two shards of one query: the second shard's items at distance d come after the first shard's."
    h1 = np.array([[[1, 1], [0, 2]]])       # shard 0: d=0: 1 irrelevant + 1 relevant; d=1: 2 relevant
    h2 = np.array([[[2, 0], [1, 0]]])       # shard 1: d=0: 2 irrelevant; d=1: 1 irrelevant
    (b1, r1), (b2, r2) = shard_offsets([h1, h2])
    assert b1.tolist() == [[0, 4]] and r1.tolist() == [[0, 1]]
    assert b2.tolist() == [[2, 6]] and r2.tolist() == [[1, 3]]
    w = np.array([[1], [2]], dtype=np.uint64)
    words, counts = merge_distinct([(w, np.array([3, 1])), (w[::-1].copy(), np.array([5, 4]))])
    assert words.ravel().tolist() == [1, 2] and counts.tolist() == [7, 6]


def test_bad_input(client):
    qb, gb = np.zeros((3, 8)), np.ones((10, 8))
    with pytest.raises(RetrievalInputError, match="`relevance`"):
        sharded_scan(qb, [gb], np.zeros(3, int), None, client=client)
    with pytest.raises(RetrievalInputError, match="`gallery_labels`"):
        sharded_scan(qb, [gb[:5], gb[5:]], np.zeros(3, int), [np.zeros(10, int)], client=client)
    with pytest.raises(RetrievalInputError, match="`query_codes` block 0 has 8-bit codes but the gallery has 7-bit"):
        sharded_scan(qb, [gb[:, :7]], np.zeros(3, int), [np.zeros(10, int)], client=client)
    with pytest.raises(RetrievalInputError, match="`gallery_codes` shard 1 has 7-bit codes but shard 0 has 8-bit"):
        sharded_scan(qb, [gb[:5], gb[5:, :7]], np.zeros(3, int), [np.zeros(5, int), np.zeros(5, int)], client=client)
    with pytest.raises(RetrievalInputError, match="`relevance`"):
        sharded_scan([qb[:1], qb[1:]], [gb], relevance=np.zeros((3, 10)), client=client)


def _names():
    from retrieval_lit.metrics import known_metrics
    return [example for example, _ in known_metrics()] + ["map", "ndcg", "mrr", "rbp"]


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "index"])
@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_evaluate_on_a_cluster_equals_one_process(client, ties, kind):
    "evaluate(client=...): every metric, tie mode, bounds, junk and self-exclusion, as in one process."
    from retrieval_lit.evaluation import evaluate
    rng = np.random.default_rng(hash((ties, kind)) % 2**32)
    qb, gb, lab, _ = case(rng, kind, 24)
    nq, ng = len(qb), len(gb)
    rel = dict(query_labels=lab["ql"], gallery_labels=lab["gl"]) if kind != "matrix" else dict(relevance=lab["m"])
    junk = rng.random((nq, ng)) < 0.15
    own = rng.integers(-1, ng, nq)
    for extra in ({}, dict(ignore=junk, self_index=own)):
        for bounds in ((False, True) if ties != "index" else (False,)):
            a = evaluate(qb, gb, metrics=_names(), ties=ties, bounds=bounds, engine="numba", **rel, **extra)
            b = evaluate(qb, gb, metrics=_names(), ties=ties, bounds=bounds, client=client, **rel, **extra)
            for n in a:
                np.testing.assert_array_equal(a.per_query[n], b.per_query[n], err_msg=n)
            assert a.bounds == b.bounds


def test_evaluate_client_by_address_and_bad_sources(client):
    from retrieval_lit.evaluation import evaluate
    rng = np.random.default_rng(2)
    qb, gb = rng.integers(0, 2, (5, 16)), rng.integers(0, 2, (300, 16))
    ql, gl = rng.integers(0, 3, 5), rng.integers(0, 3, 300)
    a = evaluate(qb, gb, ql, gl, ["map", "map@10"], ties="index", engine="numba")
    b = evaluate(qb, gb, ql, gl, ["map", "map@10"], ties="index", client=client.scheduler.address)
    assert a.means == b.means
    with pytest.raises(RetrievalInputError, match="`client` shards a ranking of codes or of embeddings; a `scores`"):
        evaluate(scores=rng.random((5, 300)), query_labels=ql, gallery_labels=gl, client=client)


def test_sharded_scan_with_ignore_equals_one_process(client):
    "Junk removed inside each shard's passes, code_max from the removed items' codes gathered across shards."
    from retrieval_lit.relevance import make_ignore
    rng = np.random.default_rng(9)
    for kind in ("class", "multihot", "matrix"):
        qb, gb, lab, rel = case(rng, kind, 12)
        nq, ng = len(qb), len(gb)
        ig = make_ignore(nq, ng, rng.random((nq, ng)) < 0.3, rng.integers(-1, ng, nq))
        qs, gs = random_split(rng, nq, 3), random_split(rng, ng, 4)
        args = (dict(query_labels=[lab["ql"][i] for i in qs], gallery_labels=[lab["gl"][i] for i in gs])
                if kind != "matrix" else dict(relevance=[[lab["m"][np.ix_(i, j)] for j in gs] for i in qs]))
        got = sharded_scan([qb[i] for i in qs], [gb[i] for i in gs], **args, stable_ranks=-1, code_max=True,
                           index_sums=True, ignore=ig, client=client)
        one = engine.scan(qb, gb, rel, stable_ranks=-1, code_max=True, index_sums=True, ignore=ig)
        assert_equal_scans(got, one)
        ref = ranking.summarize(qb, gb, rel, stable_ranks=-1, code_max=True, ignore=ig)
        assert np.array_equal(got.summary.code_max, ref.code_max)


def test_command_line_dask_address(client, tmp_path):
    "retrieval-lit evaluate --dask ADDRESS prints the single-process report."
    import io
    import json
    from retrieval_lit.cli import main
    rng = np.random.default_rng(4)
    files = dict(query_codes=rng.integers(0, 2, (6, 32)), gallery_codes=rng.integers(0, 2, (400, 32)),
                 query_labels=rng.integers(0, 3, 6), gallery_labels=rng.integers(0, 3, 400))
    args = []
    for k, v in files.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--" + k.replace("_", "-"), str(tmp_path / f"{k}.npy")]
    outs = []
    for extra in ([], ["--dask", client.scheduler.address]):
        buf = io.StringIO()
        assert main(["evaluate", *args, "--metrics", "map", "p@10", "--json", "-", *extra], out=buf) == 0
        outs.append(json.loads(buf.getvalue()[buf.getvalue().index("{"):])["metrics"])
    assert outs[0].keys() == outs[1].keys() and outs[0]["map"] > 0   # to 1e-12 under ties="index" (as above)
    assert all(abs(outs[0][n] - outs[1][n]) < 1e-12 for n in outs[0])


def test_sharded_gallery_merges_its_distinct_codes_once(client):
    "code_max for several query blocks: the gallery's distinct-code table is merged on the first block only."
    from retrieval_lit.relevance import make_ignore
    from retrieval_lit.sharded import scatter_gallery
    rng = np.random.default_rng(12)
    qb, gb = rng.integers(0, 2, (12, 10)), rng.integers(0, 2, (300, 10))
    ql, gl = rng.integers(0, 3, 12), rng.integers(0, 3, 300)
    gal = scatter_gallery(gb, gl, shards=3, client=client)
    rel = relevance_from_labels(ql, gl, 12, 300)
    ig = make_ignore(12, 300, rng.random((12, 300)) < 0.2)
    first = gal.scan(qb[:5], rel.rows(0, 5), code_max=True, ignore=ig.rows(0, 5))
    table = gal.distinct_table()
    second = gal.scan(qb[5:], rel.rows(5, 12), code_max=True, ignore=ig.rows(5, 12))
    assert gal.distinct_table() is table
    ref = ranking.summarize(qb, gb, rel, code_max=True, ignore=ig)
    assert np.array_equal(np.concatenate([first.summary.code_max, second.summary.code_max]), ref.code_max)


# ---------------------------------------------------------------- embeddings on the cluster (issue 22)
def _score_names():
    from retrieval_lit.metrics import parse_metric
    return [n for n in _names() if not parse_metric(n).hamming_only]


def embedding_case(rng, kind, similarity="dot"):
    """Embeddings whose similarities are computed exactly in any order of additions (small integers; for cosine,
    +-1 entries in 1, 4 or 16 dimensions: norms 1, 2, 4, products and sums exact), so every score has one value
    whatever the matrix product's shape, and many scores are exactly equal: ties cross the shard borders. (With
    arbitrary floats the BLAS product's last bit can depend on the shapes multiplied, in one process too: see the
    chapter.)"""
    nq, ng = int(rng.integers(1, 20)), int(rng.integers(2, 500))
    if similarity == "cosine":
        d = int(rng.choice([1, 4, 16]))
        q, g = rng.choice([-1.0, 1.0], (nq, d)), rng.choice([-1.0, 1.0], (ng, d))
    else:
        d = int(rng.integers(1, 5))
        q, g = rng.integers(-2, 3, (nq, d)).astype(float), rng.integers(-2, 3, (ng, d)).astype(float)
        q[np.all(q == 0, axis=1)], g[np.all(g == 0, axis=1)] = 1.0, 1.0
    if kind == "class":
        return q, g, dict(query_labels=rng.integers(0, 4, nq), gallery_labels=rng.integers(0, 4, ng))
    if kind == "multihot":
        return q, g, dict(query_labels=rng.integers(0, 2, (nq, 5)), gallery_labels=rng.integers(0, 2, (ng, 5)))
    return q, g, dict(relevance=rng.integers(0, 4, (nq, ng)))


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "index"])
@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_evaluate_embeddings_on_a_cluster_equals_one_process(client, ties, kind):
    """evaluate(query_embeddings=..., client=...): every metric, tie mode, bound, junk set and self-exclusion, bit for
    bit (the whole ranking by chapter 58's counts of a gallery in parts, index-order sums included)."""
    from retrieval_lit.evaluation import evaluate
    rng = np.random.default_rng(hash((ties, kind, "emb")) % 2**32)
    for similarity in ("cosine", "dot", "l2"):
        q, g, rel = embedding_case(rng, kind, similarity)
        nq, ng = len(q), len(g)
        for extra in ({}, dict(ignore=rng.random((nq, ng)) < 0.15, self_index=rng.integers(-1, ng, nq))):
            for metrics in (_score_names(), ["map@5", "p@3", "ndcg@10"]):          # whole rankings; cutoffs only
                for bounds in ((False, True) if ties != "index" else (False,)):
                    kw = dict(query_embeddings=q, gallery_embeddings=g, similarity=similarity, metrics=metrics,
                              ties=ties, bounds=bounds, max_block_bytes=1 << 12, **rel, **extra)
                    a, b = evaluate(**kw), evaluate(**kw, client=client)
                    for n in a:          # the index-order sums too: the same counts reach the same kernel
                        np.testing.assert_array_equal(a.per_query[n], b.per_query[n], err_msg=f"{n} {similarity}")
                    assert a.bounds == b.bounds and a.orders == b.orders


@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_float32_embeddings_on_a_cluster_equal_one_process(client, kind):
    """precision="float32" on a cluster: the shards compute float32 similarities, as one process does (the ties of
    that precision), and every value equals one process's bit for bit."""
    from retrieval_lit.evaluation import evaluate
    rng = np.random.default_rng(hash((kind, "f32")) % 2**32)
    for similarity in ("cosine", "dot", "l2"):
        q, g, rel = embedding_case(rng, kind, similarity)
        extra = dict(ignore=rng.random((len(q), len(g))) < 0.15, self_index=rng.integers(-1, len(g), len(q)))
        for ties in ("expected", "index"):
            for metrics in (_score_names(), ["map@5", "p@3", "ndcg@10"]):
                kw = dict(query_embeddings=q, gallery_embeddings=g, similarity=similarity, metrics=metrics, ties=ties,
                          precision="float32", max_block_bytes=1 << 12, **rel, **extra)
                a, b = evaluate(**kw), evaluate(**kw, client=client)
                assert b.precision == "float32"
                for n in a:
                    np.testing.assert_array_equal(a.per_query[n], b.per_query[n], err_msg=f"{n} {similarity} {ties}")


def test_embeddings_in_several_shards_and_by_address(client):
    from retrieval_lit.evaluation import evaluate
    from retrieval_lit.relevance import make_ignore, relevance_from_labels
    from retrieval_lit.sharded import scatter_embeddings
    rng = np.random.default_rng(22)
    q, g, rel = embedding_case(rng, "class", "cosine")
    a = evaluate(query_embeddings=q, gallery_embeddings=g, metrics=["map", "map@10"], ties="index", **rel)
    b = evaluate(query_embeddings=q, gallery_embeddings=g, metrics=["map", "map@10"], ties="index",
                 client=client.scheduler.address, **rel)
    assert a["map@10"] == b["map@10"] and a["map"] == b["map"]
    from retrieval_lit.score_ranking import similarity_rows, summarize_scores
    ql = rel["query_labels"].copy()
    ql[0] = 9                                        # a query with no relevant item anywhere: no distinct score
    r = relevance_from_labels(ql, rel["gallery_labels"], len(q), len(g))
    mask = rng.random((len(q), len(g))) < 0.3
    if len(q) > 1:
        mask[1] |= rel["gallery_labels"] == ql[1]    # a query whose relevant items are all removed
    ig = make_ignore(len(q), len(g), mask)
    ref = summarize_scores(similarity_rows(q, g, "cosine")[2], r, stable_ranks=-1, ignore=ig, index_sums=True)
    for shards in (1, 3, 7, len(g)):                 # more shards than workers; one item a shard
        sg = scatter_embeddings(g, r, ig, "cosine", shards=shards, client=client)
        s = sg.summarize(q, 0, stable_ranks=-1, index_sums=True)
        width = max(s.hist.shape[1], ref.hist.shape[1])
        pad = lambda h: np.pad(h, ((0, 0), (0, width - h.shape[1]), (0, 0)))
        assert (pad(s.hist) == pad(ref.hist)).all() and (s.top_grades == ref.top_grades).all(), shards
        for f in ("precision_sum", "discount_sum", "r_hits"):
            np.testing.assert_array_equal(getattr(s.index_sums, f), getattr(ref.index_sums, f), err_msg=f)
    kw = dict(query_embeddings=q, gallery_embeddings=g, metrics=["map", "ndcg", "rprec"], ties="index",
              ignore=mask, query_labels=ql, gallery_labels=rel["gallery_labels"])
    one, two = evaluate(**kw), evaluate(**kw, client=client)
    for n in one:
        np.testing.assert_array_equal(one.per_query[n], two.per_query[n], err_msg=n)


def test_a_client_that_cannot_be_reached_is_one_clear_error(monkeypatch):
    from retrieval_lit import sharded
    from retrieval_lit.evaluation import evaluate
    monkeypatch.setattr(sharded, "CONNECT_SECONDS", 1)
    q, g = np.ones((2, 3)), np.ones((4, 3))
    with pytest.raises(RetrievalInputError, match=r"^`client` cannot reach a Dask scheduler at 'tcp://127.0.0.1:1'"):
        evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=[0, 1], gallery_labels=[0, 1, 0, 1],
                 client="tcp://127.0.0.1:1")
    closed = distributed.Client(distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    closed.cluster.close()
    closed.close()
    with pytest.raises(RetrievalInputError, match="^`client` is closed"):
        evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=[0, 1], gallery_labels=[0, 1, 0, 1],
                 client=closed)


def test_command_line_dask_embeddings(client, tmp_path):
    "retrieval-lit evaluate --query-embeddings ... --dask ADDRESS prints the single-process report."
    import io
    import json
    from retrieval_lit.cli import main
    rng = np.random.default_rng(8)
    files = dict(query_embeddings=rng.integers(-2, 3, (6, 4)) + 0.5,
                 gallery_embeddings=rng.integers(-2, 3, (300, 4)) + 0.5,
                 query_labels=rng.integers(0, 3, 6), gallery_labels=rng.integers(0, 3, 300))
    args = []
    for k, v in files.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--" + k.replace("_", "-"), str(tmp_path / f"{k}.npy")]
    outs = []
    for extra in ([], ["--dask", client.scheduler.address]):
        buf = io.StringIO()
        assert main(["evaluate", *args, "--metrics", "map", "p@10", "--ties", "index", "--json", "-", *extra],
                    out=buf) == 0
        outs.append(json.loads(buf.getvalue()[buf.getvalue().index("{"):])["metrics"])
    assert outs[0]["p@10"] == outs[1]["p@10"] and outs[0]["map"] == pytest.approx(outs[1]["map"], rel=0, abs=1e-12)
    assert outs[0]["map"] > 0


@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_workers_load_the_kernels_the_client_prepared(client, kind):
    """Issue 41: the client prepares (compiles or loads) the kernels before its tasks leave, with the signatures the
    workers' read-only arrays give, so a worker process on this machine loads numba's cache and compiles none."""
    rng = np.random.default_rng(41)
    qb, gb = rng.integers(0, 2, (40, 100)), rng.integers(0, 2, (500, 100))   # 2 words; 40 queries: class groups
    shards = [gb[:300], gb[300:]]
    kw = dict(stable_ranks=20, code_max=True, index_sums=True, self_index=np.arange(40), client=client)
    if kind == "matrix":
        m = rng.integers(0, 3, (40, 500))
        got = sharded_scan(qb, shards, relevance=[[m[:, :300], m[:, 300:]]], **kw)
        rel = relevance_from_matrix(m, 40, 500)
    else:
        ql, gl = ((rng.integers(0, 4, 40), rng.integers(0, 4, 500)) if kind == "class"
                  else (rng.integers(0, 2, (40, 6)), rng.integers(0, 2, (500, 6))))
        got = sharded_scan(qb, shards, ql, [gl[:300], gl[300:]], **kw)
        rel = relevance_from_labels(ql, gl, 40, 500)
    from retrieval_lit.relevance import make_ignore
    one = engine.scan(qb, gb, rel, stable_ranks=20, code_max=True, index_sums=True,
                      ignore=make_ignore(40, 500, None, np.arange(40)))
    assert_equal_scans(got, one)

    def compiled_here() -> dict:           # nested: sent to the workers by value
        "On a worker: how many signatures of each kernel it compiled itself (numba's cache misses)."
        from retrieval_lit import engine as worker_engine
        kernels = ("_hist_kernel", "_unhist_kernel", "_top_kernel", "_sums_kernel", "_code_max_kernel")
        return {n: sum(getattr(worker_engine, n).stats.cache_misses.values()) for n in kernels}
    assert all(v == 0 for per_worker in client.run(compiled_here).values() for v in per_worker.values())

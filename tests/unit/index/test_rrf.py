"""Reciprocal Rank Fusion: order, sources, and ties that never depend on how point ids sort."""

from __future__ import annotations

from daemon.index._payload import RRF_K, rrf_fuse


def test_an_id_found_by_both_rankers_outranks_ids_found_by_one() -> None:
    fused = rrf_fuse([("lexical", ["a", "b", "c"]), ("dense", ["b", "d"])])
    assert [f.id for f in fused] == ["b", "a", "d", "c"]
    assert fused[0].sources == ("lexical", "dense")
    assert fused[0].score == 1 / (RRF_K + 1) + 1 / RRF_K


def test_an_exact_disagreement_goes_to_the_ranker_with_the_clearer_preference() -> None:
    # lexical: x far ahead of y; dense: y barely ahead of x. Equal RRF, equal best position.
    for x, y in (("x", "y"), ("zz", "aa"), ("aa", "zz")):  # whatever the ids sort like
        fused = rrf_fuse([("lexical", [x, y]), ("dense", [y, x])], strengths=[[12.5, 3.0], [0.53, 0.37]])
        assert fused[0].score == fused[1].score
        assert [f.id for f in fused] == [x, y]
        fused = rrf_fuse([("lexical", [x, y]), ("dense", [y, x])], strengths=[[12.5, 11.0], [0.9, 0.2]])
        assert [f.id for f in fused] == [y, x]


def test_without_strengths_ties_are_broken_by_id_so_the_order_is_stable() -> None:
    fused = rrf_fuse([("lexical", ["m", "n"]), ("dense", ["n", "m"])])
    assert [f.id for f in fused] == ["m", "n"]
    assert rrf_fuse([("lexical", ["a", "a", "b"])])[0].sources == ("lexical",)  # a repeat counts once

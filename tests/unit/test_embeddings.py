"""The input-side analysis (experiments/method/embeddings.py) on tables whose answers are known, against brute force, and its
record's file (embedding_files) and report section (report/embeddings.py)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from leviathan.errors import UserError
from leviathan.eval.frequency import make_buckets
from leviathan.experiments.method import embeddings as E
from leviathan.experiments.machinery.embedding_files import read_record, read_records, write_record
from leviathan.experiments.machinery.provenance import CodeProvenance, DataProvenance
from leviathan.experiments.report.embeddings import embeddings_section, render_embeddings


def groups_of(stats):
    return {s.group: s for s in stats}


def one_group(n, count=5):
    """Every id seen ``count`` times: one bucket holds them all (the others are empty), no unseen ids."""
    return E.frequency_groups(np.full(n, count), n, 2)


def test_identical_rows_share_everything():
    table = np.tile(np.arange(1.0, 9.0), (12, 1))  # (12, 8), every row the same
    stats = groups_of(E.table_geometry(table, one_group(12)))
    for name in ("all", "seen", "bucket 2"):
        s = stats[name]
        assert s.num_ids == 12 and s.min_count == s.max_count == 5
        assert s.shared_share == pytest.approx(1.0, abs=1e-12)
        assert s.effective_rank == pytest.approx(1.0, abs=1e-9)
        assert s.mean_cosine == pytest.approx(1.0, abs=1e-12)
        assert s.rms == pytest.approx(math.sqrt(np.mean(np.arange(1.0, 9.0) ** 2)))
    empty = stats["bucket 1"]  # equal counts all land in one bucket
    assert empty.num_ids == 0 and empty.rms is None and empty.effective_rank is None and empty.mean_cosine is None
    assert stats["unseen"].num_ids == 0


def test_orthogonal_rows():
    D = 16
    table = 3.0 * np.eye(D)  # rows along the D axes
    s = groups_of(E.table_geometry(table, one_group(D)))["all"]
    assert s.mean_cosine == pytest.approx(0.0, abs=1e-12)
    assert s.shared_share == pytest.approx(1 / D)  # ||mean||^2 = 9 / D, mean ||e||^2 = 9
    assert s.effective_rank == pytest.approx(D)
    assert s.rms == pytest.approx(3 / math.sqrt(D))


def test_two_directions_effective_rank():
    # 4 rows along e1 of norm 1 and 1 row along e2 of norm 2: singular values 2 and 2, so exp(H) = 2
    table = np.zeros((5, 4))
    table[:4, 0] = 1.0
    table[4, 1] = 2.0
    assert groups_of(E.table_geometry(table, one_group(5)))["all"].effective_rank == pytest.approx(2.0)


def test_zero_rows_have_no_direction():
    table = np.zeros((4, 3))
    table[0, 0] = table[1, 0] = 1.0
    s = groups_of(E.table_geometry(table, one_group(4)))["all"]
    assert s.mean_cosine == pytest.approx(1.0)  # the two zero rows are left out of the pairs
    table[:] = 0.0
    s = groups_of(E.table_geometry(table, one_group(4)))["all"]
    assert s.mean_cosine is None and s.shared_share is None and s.effective_rank is None and s.rms == 0.0


def brute_stats(x):
    """RMS, shared share, effective rank and mean cosine of rows ``x`` by their definitions."""
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    cos = u @ u.T
    n = len(x)
    s = np.linalg.svd(x, compute_uv=False)
    p = s / s.sum()
    return (np.sqrt((x ** 2).mean(1)).mean(), (x.mean(0) ** 2).sum() / (x ** 2).sum(1).mean(),
            math.exp(-(p[p > 0] * np.log(p[p > 0])).sum()), (cos.sum() - np.trace(cos)) / (n * (n - 1)))


def freq_table(V=300, D=12, seed=0):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((V, D)) + 0.3  # a shared mean, so the shares are not all ~0
    freq = np.zeros(V - 20, dtype=np.int64)  # shorter than V: a head larger than the tokenizer
    seen = rng.choice(V - 20, V // 2, replace=False)
    freq[seen] = np.ceil(np.exp(rng.normal(2.0, 1.5, V // 2)))  # counts over three decades: five full buckets
    return table.astype(np.float32), freq


def test_statistics_match_brute_force_across_chunks(monkeypatch):
    table, freq = freq_table()
    monkeypatch.setattr(E, "ROW_CHUNK", 7)  # many chunks: the merged moments must be exact
    groups = E.frequency_groups(freq, len(table), 4)
    stats = E.table_geometry(table, groups)
    assert [s.group for s in stats] == ["all", "seen", "bucket 1", "bucket 2", "bucket 3", "bucket 4", "unseen"]
    ids = {g.name: g.ids for g in groups}
    ids["seen"] = np.concatenate([g.ids for g in groups if g.name != "unseen"])
    ids["all"] = np.arange(len(table))
    for s in stats:
        if s.num_ids < 2:
            continue
        want = brute_stats(table[ids[s.group]].astype(np.float64))
        got = (s.rms, s.shared_share, s.effective_rank, s.mean_cosine)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12), s.group
        assert s.num_ids == len(ids[s.group])


def test_groups_are_the_eval_buckets_of_the_seen_ids():
    _, freq = freq_table()
    V = 300
    groups = E.frequency_groups(freq, V, 5)
    padded = np.concatenate([freq, np.zeros(V - len(freq), dtype=np.int64)])
    eval_buckets = make_buckets(freq, 5, "mass").bucket_of
    for j, g in enumerate(groups[:5]):
        assert np.all(padded[g.ids] > 0)
        assert np.all(eval_buckets[g.ids] == j)  # the eval's bucket of every id that occurs
        assert np.array_equal(g.counts, padded[g.ids])
    assert groups[5].name == "unseen" and np.array_equal(groups[5].ids, np.flatnonzero(padded == 0))
    assert sum(len(g.ids) for g in groups) == V
    with pytest.raises(UserError, match="another tokenizer"):
        E.frequency_groups(np.ones(V + 1), V)


def test_probes_follow_the_fixed_rule():
    counts = np.arange(1000)[::-1] + 1  # id 999 is the rarest
    group = E.IdGroup("bucket 1", np.arange(1000), counts)
    probes = E.probe_ids([group, E.IdGroup("unseen", np.array([3, 5]), np.zeros(2, dtype=np.int64)),
                          E.IdGroup("bucket 2", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))], 200)
    first = [p for p in probes if p[1] == "bucket 1"]
    assert len(first) == 200 and len({p[0] for p in first}) == 200
    assert first[0] == (999, "bucket 1", 1) and first[-1] == (0, "bucket 1", 1000)  # rarest .. most frequent
    assert [c for _, _, c in first] == sorted(c for _, _, c in first)
    assert [p for p in probes if p[1] == "unseen"] == [(3, "unseen", 0), (5, "unseen", 0)]  # fewer ids: all of them
    assert probes == E.probe_ids([group, E.IdGroup("unseen", np.array([3, 5]), np.zeros(2, dtype=np.int64))], 200)


def test_neighbours_match_brute_force(monkeypatch):
    table, freq = freq_table(V=120, D=6)
    table[7] = table[9]  # an exact tie: the lower id comes first
    monkeypatch.setattr(E, "PROBE_CHUNK", 3)
    candidates = np.sort(np.flatnonzero(np.concatenate([freq, np.zeros(20, dtype=np.int64)])[:120] > 0))
    candidates = np.union1d(candidates, [7, 9])
    probes = np.array([7, 9, 0, 50, 119, int(candidates[3])])
    got = E.nearest_neighbours(table, probes, candidates, 5)
    u = table.astype(np.float64) / np.linalg.norm(table.astype(np.float64), axis=1, keepdims=True)
    for p, row in zip(probes, got):
        others = [c for c in candidates if c != p]
        cos = {c: float(u[p] @ u[c]) for c in others}
        want = sorted(others, key=lambda c: (-cos[c], c))[:5]
        assert list(row) == want
        assert p not in row
    assert got[0][0] == 9 and got[1][0] == 7  # an identical row is the nearest


def test_identical_tables_agree_fully_and_different_probes_are_refused():
    table, freq = freq_table()
    rec = make_record(table, table * 2.0, freq, run="a-s0")
    twin = make_record(table, table * 2.0, freq, run="b-s0")
    pair = E.compare_records(rec, twin)
    assert [g.group for g in pair.groups] == ["all"] + [f"bucket {j}" for j in range(1, 6)] + ["unseen"]
    assert all(g.init == 1.0 and g.final == 1.0 for g in pair.groups)
    assert pair.groups[0].num_probes == len(rec.probes)
    other = make_record(table, -table, freq, run="c-s0")  # -table: the same cosines, so the same neighbours
    assert all(g.final == 1.0 for g in E.compare_records(rec, other).groups)
    fewer = make_record(table, table, freq, run="d-s0", probes_per_group=3)
    with pytest.raises(UserError, match="different probe ids"):
        E.compare_records(rec, fewer)
    more = make_record(table, table, freq, run="e-s0", top_k=4)
    with pytest.raises(UserError, match="--top-k"):
        E.compare_records(rec, more)


def make_record(init, final, freq, run="m-s0", variant="leviathan", seed=0, probes_per_group=8, top_k=5):
    found = E.analyze_tables(init, final, freq, 5, "mass", probes_per_group, top_k)
    return E.EmbeddingRecord(
        format=E.FORMAT, run=run, arm=run.rsplit("-s", 1)[0], variant=variant, seed=seed,
        code=CodeProvenance("abc", "0.1.0", "2.0"), analysed_with=CodeProvenance(None, "0.1.0", "2.0"),
        data=DataProvenance("data/x", "f" * 8, "bpe:300", 300, 1000, 100), vocab_size=init.shape[0],
        hidden_size=init.shape[1], step=4, total_steps=4, tokens=1024, num_buckets=5, bucket_method="mass",
        probes_per_group=probes_per_group, top_k=top_k, num_candidates=found.num_candidates,
        definitions=E.Definitions(), init=found.init, final=found.final, probes=found.probes)


def test_record_round_trip(tmp_path):
    table, freq = freq_table()
    rec = make_record(table, table + 0.5, freq)
    path = write_record(tmp_path / "embeddings" / "m-s0.json", rec)
    text = path.read_text()
    assert text.startswith('{\n "format": 2,') and text.endswith("}\n") and "/tmp" not in text
    back = read_record(path)
    assert back == replace(rec, sha256=json.loads(text)["sha256"]) and len(back.sha256) == 64
    assert read_records(tmp_path) == [back] and read_records(tmp_path / "results.jsonl") == [back]
    assert read_records(tmp_path / "nothing") == []
    probe = json.loads(text)["probes"][0]
    assert set(probe) == {"id", "group", "count", "init", "final"} and len(probe["init"]) == 5


def test_bad_record_files_are_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="bad.json"):
        read_record(bad)
    bad.write_text(json.dumps({"format": 99}))
    with pytest.raises(UserError, match="newer than this leviathan reads"):
        read_record(bad)
    bad.write_text(json.dumps({"format": 1, "run": "x"}))
    with pytest.raises(UserError, match="damaged embeddings record"):
        read_record(bad)
    bad.write_text(json.dumps([1, 2]))
    with pytest.raises(UserError, match="not an embeddings record"):
        read_record(bad)


def test_report_section_means_over_seeds_and_pairs_within_a_seed():
    table, freq = freq_table()
    recs = [make_record(table, table * (1 + s), freq, run=f"x-leviathan-s{s}", seed=s) for s in (0, 1)]
    recs += [make_record(table, table + s, freq, run=f"x-dense_tied-s{s}", variant="dense_tied", seed=s)
             for s in (0, 1)]
    section = embeddings_section(recs)
    assert [a.arm for a in section.arms] == ["x-dense_tied", "x-leviathan"]
    lev = section.arms[1]
    assert lev.seeds == [0, 1] and lev.runs == ["x-leviathan-s0", "x-leviathan-s1"]
    rms = [r.stats("final")["all"].rms for r in recs[:2]]
    assert lev.groups[0].group == "all" and lev.groups[0].final.rms == pytest.approx(sum(rms) / 2)
    assert [(p.run_a, p.run_b) for p in section.pairs] == [("x-dense_tied-s0", "x-leviathan-s0"),
                                                           ("x-dense_tied-s1", "x-leviathan-s1")]
    assert section.pairs[0].groups[0].init == 1.0  # the same init table
    md = "\n".join(render_embeddings(section))
    assert md.startswith("## Input side at init and at the end")
    assert "### x-leviathan (leviathan; seeds 0, 1; final step 4)" in md
    assert "| 0 | x-dense_tied-s0 | x-leviathan-s0 | 1.000 -> " in md
    odd = make_record(table, table, freq, run="x-odd-s0", probes_per_group=2)
    section = embeddings_section(recs + [odd])
    assert {(u.run_a, u.run_b) for u in section.unpaired} == {("x-dense_tied-s0", "x-odd-s0"),
                                                               ("x-leviathan-s0", "x-odd-s0")}
    assert "not compared" in "\n".join(render_embeddings(section))

"""The input side's geometry at init and at the end of training, and how far two arms agree on neighbours.

    analysis = analyze_tables(init, final, train_freq)      # TableAnalysis: GroupStats at init and at the end, Probes
    analysis.final[0].effective_rank                         # group "all": every id of the table
    pair = compare_records(record_a, record_b)               # EmbeddingPair: neighbour agreement per group

What is measured (docs/DESIGN.md §7; each number's definition is also in ``Definitions``, which every record
carries). The input side as a V x D table (a generator baked with ``embed_tokens.bake()``). Training a table moves
only the rows of ids that occur; a generator moves every row with every step. So the rows are grouped by their id's
count in the *training* split with the eval's own bucketing (``eval.frequency.make_buckets``), restricted to ids that
occur, plus ``unseen`` (an untied table's unseen rows get no gradient at all). Groups, in order: ``all``, ``seen``,
``bucket 1`` .. ``bucket n`` (rarest first), ``unseen``. Per group, ``GroupStats``: the rows' RMS, the share of
their energy in their common mean (1: all rows equal; about 1/n for independent zero-mean rows), the effective rank
of the *uncentred* rows (a shared mean is one direction of its own; singular values from a tall-skinny QR over
chunks, no (n, n) matrix) and the exact mean pairwise cosine in O(n D) (rows of norm 0 have no direction and are
left out). The statistics are additive moments (``_Moments``): each id is read once. At V = 200,019, D = 64 with
58k ids seen, ``analyze_tables`` takes about 2 s on one thread and some 300 MB.

Neighbours. From each bucket and ``unseen``, up to ``probes_per_group`` probe ids at evenly spaced ranks of the
group sorted by (training count, id) (``floor(linspace(0, n - 1, m))``: the same for every run on the same data),
each with its ``top_k`` cosine neighbours among the ids seen in training (ties to the lower id; one (chunk, N_seen)
float64 block of cosines at a time). ``compare_records``: per probe the overlap |A n B| / k of two records' lists,
its mean per group and over every probe, at init and at the end. Chance level is about k / N_seen (near 0).

Footguns:
- Two records compare only when they hold the same probes (same data, ``--buckets``, ``--method``,
  ``--probes``) and the same k; ``compare_records`` refuses others by name.
- At init two dense arms of one seed (tied and untied) share their table (the model builds its input side
  first from the seed), so their neighbours agree fully at init; a generator's init shares nothing with a table.
- The ``unseen`` group of a table holds rows that never moved in an untied table; their neighbours among the
  seen ids still change, because the seen rows moved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import UserError
from ...eval.frequency import checked_counts, make_buckets
from ..machinery.provenance import CodeProvenance, DataProvenance
from .records import Record

FORMAT = 2  # the record's layout; a reader refuses a newer one. 2: the record holds the sha256 of its other fields
UNSEEN = "unseen"
ROW_CHUNK = 65_536  # rows per block of the moments: (ROW_CHUNK, D) float64, 32 MiB at D = 64
PROBE_CHUNK = 128  # probes per block of cosines: (PROBE_CHUNK, N_seen) float64, 60 MiB at N_seen = 58k


# ---- records ------------------------------------------------------------------------------------------
@dataclass
class GroupStats(Record):
    """The geometry of one group of rows of one table (see the module docstring); None where it is undefined
    (an empty group; fewer than two nonzero rows for the cosine)."""

    group: str  # all | seen | bucket 1 .. bucket n (rarest first) | unseen
    num_ids: int
    min_count: int  # training counts of its ids
    max_count: int
    rms: float | None
    shared_share: float | None
    effective_rank: float | None
    mean_cosine: float | None


@dataclass
class Probe(Record):
    """One probe id and its ``top_k`` nearest neighbours (cosine, among the ids seen in training), most similar
    first, at init and at the end of training."""

    id: int
    group: str
    count: int  # its training count
    init: list[int]
    final: list[int]


@dataclass
class Definitions(Record):
    """What the record's numbers are, in words, so that a committed file explains itself."""

    rms: str = "mean over the group's ids of each row's RMS, sqrt(mean_d e_d^2)"
    shared_share: str = "||mean_i e_i||^2 / mean_i ||e_i||^2"
    effective_rank: str = ("exp(Shannon entropy of p_j = s_j / sum s), s: singular values of the group's uncentred "
                           "(n, D) rows (Roy & Vetterli 2007)")
    mean_cosine: str = ("exact mean over every ordered pair i != j of nonzero rows, "
                        "(||sum_i u_i||^2 - n) / (n (n - 1)) with unit rows u_i; no sample")
    groups: str = ("ids bucketed by training count with eval.frequency.make_buckets (rarest first), restricted to "
                   "ids that occur in training; unseen: ids that never occur; seen: the buckets; all: every id")
    probes: str = ("per bucket and unseen, up to probes_per_group ids at evenly spaced ranks of the group sorted by "
                   "(training count, id)")
    neighbours: str = ("top_k ids by cosine among the ids that occur in training, the probe excluded, most similar "
                       "first, ties to the lower id")


@dataclass
class TableAnalysis:
    """What ``analyze_tables`` finds in one run's two tables (the numbers of an ``EmbeddingRecord``)."""

    init: list[GroupStats]
    final: list[GroupStats]
    probes: list[Probe]
    num_candidates: int  # ids that occur in training: the neighbours' candidates


@dataclass
class EmbeddingRecord(Record):
    """One run's input side at init and at the end of training: the portable file ``leviathan analyze embeddings
    RUN_DIR --out FILE`` writes (``embedding_files.write_record``; read back by ``embedding_files.read_record``).
    No machine path: run folders do not outlive their session, these files are committed beside results.jsonl."""

    format: int
    run: str  # the run folder's name
    arm: str  # the run name without its seed suffix (-s<seed>)
    variant: str  # model.embedding
    seed: int
    code: CodeProvenance  # what the run trained with (its versions.json)
    analysed_with: CodeProvenance  # what rebuilt the init and computed this record
    data: DataProvenance
    vocab_size: int
    hidden_size: int
    step: int  # the checkpoint analysed as "final"
    total_steps: int  # the run's schedule; step < total_steps: the run had not finished
    tokens: int | None
    num_buckets: int
    bucket_method: str
    probes_per_group: int
    top_k: int
    num_candidates: int
    definitions: Definitions
    init: list[GroupStats]
    final: list[GroupStats]
    probes: list[Probe]
    sha256: str | None = None  # of the other fields' canonical JSON, set as it is written (format 2; None before)

    def stats(self, when: str) -> dict[str, GroupStats]:
        """``init`` or ``final`` statistics by group name."""
        return {g.group: g for g in (self.init if when == "init" else self.final)}


@dataclass
class Agreement(Record):
    """Mean neighbour overlap |A n B| / k of the probes of one group, at init and at the end."""

    group: str  # all (every probe) | bucket 1 .. bucket n | unseen
    num_probes: int
    init: float | None
    final: float | None


@dataclass
class EmbeddingPair(Record):
    """Two runs' neighbour agreement (the same probes, the same k); ``chance`` is k / (candidates - 1)."""

    run_a: str
    run_b: str
    variant_a: str
    variant_b: str
    seed_a: int
    seed_b: int
    top_k: int
    chance: float
    groups: list[Agreement]


# ---- groups and statistics ----------------------------------------------------------------------------
@dataclass
class IdGroup:
    """The ids of one group, ascending, with their training counts."""

    name: str
    ids: np.ndarray  # (n,) int64
    counts: np.ndarray  # (n,) int64


def frequency_groups(train_freq: np.ndarray, vocab_size: int, num_buckets: int = 5,
                     method: str = "mass") -> list[IdGroup]:
    """``bucket 1`` .. ``bucket n`` (rarest first; ids that occur in training) and ``unseen`` of a V-row table, bucketed as
    the eval buckets targets (``eval.frequency.make_buckets``). ``train_freq`` may be shorter than V (a head larger than
    the tokenizer: the extra ids never occur); longer is another tokenizer's and refused. The counts are checked as
    the eval's are (``eval.frequency.checked_counts``): a NaN was cast to int64 first and blamed as
    -9223372036854775808, after numpy's RuntimeWarning (issue 30 round 23, U432); ``vocab_size`` 300.0 was numpy's
    TypeError and -1 was blamed on another tokenizer (found beside U432)."""
    from ...value_rules import api_check, whole_problem

    api_check("frequency_groups", "vocab_size", whole_problem(vocab_size, 1, "a whole number >= 1"),
              "pass the table's number of rows, len(table)")
    counts = checked_counts(train_freq)
    if len(counts) > vocab_size:
        raise UserError(f"train_freq has {counts.size:,} ids but the table has {vocab_size:,} rows: it belongs to data "
                        f"prepared with another tokenizer; pass the prepared folder the run trained on")
    counts = np.concatenate([counts, np.zeros(vocab_size - len(counts), dtype=np.int64)])  # (V,)
    bucket_of = make_buckets(counts, num_buckets, method).bucket_of  # (V,)
    seen = counts > 0
    groups = [np.flatnonzero(seen & (bucket_of == j)) for j in range(num_buckets)]
    groups.append(np.flatnonzero(~seen))
    names = [f"bucket {j + 1}" for j in range(num_buckets)] + [UNSEEN]
    return [IdGroup(name, ids.astype(np.int64), counts[ids]) for name, ids in zip(names, groups)]


@dataclass
class _Moments:
    """Additive summaries of a set of rows, enough for every ``GroupStats`` number (see the module docstring)."""

    num_ids: int
    min_count: int | None
    max_count: int | None
    rms_sum: float  # sum_i sqrt(mean_d e_id^2)
    row_sum: np.ndarray  # (D,) sum_i e_i
    energy: float  # sum_i ||e_i||^2
    unit_sum: np.ndarray  # (D,) sum_i e_i / ||e_i|| over nonzero rows
    num_nonzero: int
    r: np.ndarray  # (m, D) with m <= D: R of a QR of the rows, which has their singular values

    def __add__(self, other: _Moments) -> _Moments:
        counts = [c for c in (self.min_count, self.max_count, other.min_count, other.max_count) if c is not None]
        return _Moments(self.num_ids + other.num_ids, min(counts) if counts else None,
                        max(counts) if counts else None, self.rms_sum + other.rms_sum, self.row_sum + other.row_sum,
                        self.energy + other.energy, self.unit_sum + other.unit_sum,
                        self.num_nonzero + other.num_nonzero, _stacked_r(self.r, other.r))

    def stats(self, name: str) -> GroupStats:
        n, m = self.num_ids, self.num_nonzero
        if n == 0:
            return GroupStats(name, 0, 0, 0, None, None, None, None)
        s = np.linalg.svd(self.r, compute_uv=False) if len(self.r) else np.zeros(0)  # (min(m, D),)
        total = float(s.sum())
        rank = None
        if total > 0:
            p = s[s > 0] / total
            rank = math.exp(float(-(p * np.log(p)).sum()))
        return GroupStats(
            name, n, int(self.min_count), int(self.max_count), self.rms_sum / n,
            float(self.row_sum @ self.row_sum) / (n * self.energy) if self.energy > 0 else None, rank,
            (float(self.unit_sum @ self.unit_sum) - m) / (m * (m - 1)) if m >= 2 else None)


def _stacked_r(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """R of the rows of two matrices from their R factors: R of [R_a; R_b] (a tall-skinny QR's merge step)."""
    stacked = np.concatenate([a, b])  # (m_a + m_b, D)
    return np.linalg.qr(stacked, mode="r") if len(stacked) > stacked.shape[1] else stacked


def _moments(table: np.ndarray, group: IdGroup) -> _Moments:
    """The moments of the rows ``table[group.ids]``, read ``ROW_CHUNK`` rows at a time in float64."""
    D = table.shape[1]
    acc = _Moments(0, None, None, 0.0, np.zeros(D), 0.0, np.zeros(D), 0, np.zeros((0, D)))
    for a in range(0, len(group.ids), ROW_CHUNK):
        ids = group.ids[a:a + ROW_CHUNK]
        x = table[ids].astype(np.float64)  # (c, D)
        sq = (x * x).sum(1)  # (c,) squared norms
        norm = np.sqrt(sq)
        nz = norm > 0
        counts = group.counts[a:a + ROW_CHUNK]
        acc = acc + _Moments(len(ids), int(counts.min()), int(counts.max()), float(np.sqrt(sq / D).sum()),
                             x.sum(0), float(sq.sum()), (x[nz] / norm[nz, None]).sum(0), int(nz.sum()),
                             np.linalg.qr(x, mode="r") if len(x) > D else x)  # R: (min(c, D), D)
    return acc


def table_geometry(table: np.ndarray, groups: list[IdGroup]) -> list[GroupStats]:
    """``GroupStats`` of ``all``, ``seen``, then each of ``groups`` (the buckets, then ``unseen``) of a (V, D) table.
    ``groups`` (``frequency_groups``) must be a non-empty list of ``IdGroup`` of the table's rows: no groups was
    IndexError "list index out of range", and a group's id past the table "index 299 is out of bounds" (issue 30
    round 23, U433, U451); the rows read must be finite (a NaN row's numbers are NaN)."""
    from ...value_rules import api_check

    table = _values("table_geometry", "table", table)
    _check_shape("table_geometry", "table", table)
    ok = isinstance(groups, (list, tuple)) and len(groups) > 0 and all(isinstance(g, IdGroup) for g in groups)
    api_check("table_geometry", "groups", None if ok else f"expected a non-empty list of IdGroup, got {groups!r:.60}",
              "pass frequency_groups(train_freq, len(table)) (its buckets and unseen)")
    ids = np.concatenate([np.asarray(g.ids, dtype=np.int64) for g in groups])
    _check_ids_in_table("table_geometry", "groups", ids, len(table))
    _check_finite_rows("table_geometry", "table", table, ids)
    parts = [_moments(table, g) for g in groups]
    none = _moments(table, IdGroup("none", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)))
    seen = sum((m for g, m in zip(groups, parts) if g.name != UNSEEN), none)  # none: groups of unseen ids only
    every = sum(parts, none)
    return [every.stats("all"), seen.stats("seen")] + [m.stats(g.name) for g, m in zip(groups, parts)]


# ---- neighbours -------------------------------------------------------------------------------------
def probe_ids(groups: list[IdGroup], per_group: int) -> list[tuple[int, str, int]]:
    """(id, group, training count) of up to ``per_group`` probes per group, by the fixed rule of the module
    docstring (evenly spaced ranks of the group sorted by (count, id)), in group order. ``per_group`` is a whole number
    >= 0 (0: no probes): -1 was numpy's "Number of samples, -1, must be non-negative" (issue 30 round 23, U449)."""
    from ...value_rules import api_check, whole_problem

    api_check("probe_ids", "per_group", whole_problem(per_group, 0, "a whole number >= 0"),
              "pass the probes wanted per group, e.g. per_group=200")
    out = []
    for g in groups:
        n = len(g.ids)
        if n == 0:
            continue
        order = np.lexsort((g.ids, g.counts))  # by count, then id
        ranks = np.unique(np.floor(np.linspace(0, n - 1, min(n, per_group))).astype(np.int64))
        out += [(int(g.ids[order[r]]), g.name, int(g.counts[order[r]])) for r in ranks]
    return out


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to norm 1 in float64 (a zero row stays zero: cosine 0 with everything)."""
    x = x.astype(np.float64)
    norm = np.linalg.norm(x, axis=1, keepdims=True)  # (n, 1)
    return x / np.where(norm > 0, norm, 1.0)


def nearest_neighbours(table: np.ndarray, probes: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    """(P, k) ids: for each probe id its ``k`` most cosine-similar ``candidates`` (ascending ids), itself excluded,
    most similar first, ties to the lower id. One (``PROBE_CHUNK``, N) block of cosines at a time. ``k`` is a whole
    number >= 1 and the rows read finite: k=0 was numpy's "zero-size array to reduction operation minimum", a NaN row
    was given neighbours without a word and an all-NaN table was "could not broadcast" (issue 30 round 23, U435,
    U437; ``analyze_tables`` checked its tables, this did not). Ids are whole numbers and their rows nonzero (round 29,
    W672, W673: a float probe 1.5 was read as row 1, and a zero row, which has no direction, got ids 0, 1, 2)."""
    from ...value_rules import api_check, whole_problem

    api_check("nearest_neighbours", "k", whole_problem(k, 1, "a whole number >= 1"),
              "pass the neighbours wanted per probe, e.g. k=10 (--top-k)")
    table = _values("nearest_neighbours", "table", table)
    probes = _id_array("nearest_neighbours", "probes", probes)
    candidates = _id_array("nearest_neighbours", "candidates", candidates)
    _check_shape("nearest_neighbours", "table", table)
    for name, ids in (("probes", probes), ("candidates", candidates)):
        _check_ids_in_table("nearest_neighbours", name, ids, len(table))
    _check_ascending("nearest_neighbours", "candidates", candidates)
    _check_finite_rows("nearest_neighbours", "table", table, np.concatenate([probes, candidates]))
    for name, ids in (("probes", probes), ("candidates", candidates)):
        _check_nonzero_rows("nearest_neighbours", name, table, ids)
    _check_enough_neighbours(probes, candidates, k)
    cand = _unit_rows(np.asarray(table)[candidates])  # (N, D)
    out = np.empty((len(probes), k), dtype=np.int64)
    for a in range(0, len(probes), PROBE_CHUNK):
        ids = probes[a:a + PROBE_CHUNK]
        cos = _unit_rows(np.asarray(table)[ids]) @ cand.T  # (c, N)
        pos = np.searchsorted(candidates, ids)  # (c,) where each probe sits among the candidates, if it is one
        own = (pos < len(candidates)) & (candidates[np.minimum(pos, len(candidates) - 1)] == ids)
        cos[np.flatnonzero(own), pos[own]] = -np.inf  # never its own neighbour
        top = np.argpartition(-cos, k - 1, axis=1)[:, :k]  # (c, k): the k largest, in any order
        kth = np.take_along_axis(cos, top, 1).min(1)  # (c,)
        for r in range(len(ids)):
            sel = np.flatnonzero(cos[r] >= kth[r])  # (>= k,) everything tied with the k-th too
            order = np.lexsort((candidates[sel], -cos[r, sel]))  # by cosine, descending, then id
            out[a + r] = candidates[sel[order[:k]]]
    return out


def _check_enough_neighbours(probes: np.ndarray, candidates: np.ndarray, k: int) -> None:
    """UserError unless every probe has ``k`` candidates besides itself (a probe is never its own neighbour), naming
    what was asked and what there is: "only 2 ids occur in training: too few for 5 neighbours; lower --top-k" named
    the CLI's option and its corpus for an API call, and said "only 0 ids" for no candidates and "only 1 ids" where
    the one candidate was the probe itself (issue 30 round 32, AC333, AC337, AC338). ``candidates`` is ascending."""
    from ...value_rules import api_check

    api_check("nearest_neighbours", "candidates", "is empty, so no probe has a neighbour among them" if len(candidates)
              == 0 else None, "pass the ids to search among (np.unique of the ids seen in training, for example)")
    pos = np.minimum(np.searchsorted(candidates, probes), len(candidates) - 1)
    among = candidates[pos] == probes  # (P,) which probes are candidates themselves
    if len(probes) == 0 or (not among.any() and len(candidates) >= k):
        return
    probe = int(probes[np.argmax(among)]) if among.any() else int(probes[0])
    left = len(candidates) - int(among.any())
    api_check("nearest_neighbours", "candidates", f"holds only probe {probe} itself, which is never its own "
              f"neighbour, so it has none" if left == 0 else None, "pass other ids as candidates (or a larger list)")
    besides = f", one of them probe {probe}, which is never its own neighbour," if among.any() else ","
    api_check("nearest_neighbours", "k", f"asks {k:,} neighbours per probe, but candidates holds {len(candidates):,} "
              f"ids{besides} so probe {probe} can have at most {left:,}" if left < k else None,
              f"pass k={left:,} or less (--top-k), or more candidates")


def _values(api: str, name: str, value) -> np.ndarray:
    """``value`` (an array, a list, or a torch tensor on any device) as a numpy array of its values; a tensor on the
    meta device, which has none, is one UserError (``meta_device.refuse_meta``): ``nearest_neighbours`` of a table
    there was torch's raw "can't convert meta device type tensor to numpy" (issue 30 round 33, AE149), as were the
    other readers of a table or ids here. A tensor on a GPU, or one that requires grad, is read as its values (numpy's
    "can't convert cuda:0 device type tensor" / "Can't call numpy() on Tensor that requires grad")."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        from ...meta_device import refuse_meta

        refuse_meta(value, f"{api}: {name}", "pass it with values (a numpy array, or a tensor on the CPU or a GPU)")
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _id_array(api: str, name: str, ids) -> np.ndarray:
    """``ids`` as an int64 array, or a UserError unless they are whole numbers by their dtype
    (``integers.is_integer_array``): ``np.asarray(ids, dtype=np.int64)`` cut a float probe 1.5 to row 1 and read
    ``True`` as row 1 without a word (issue 30 round 29, W672). An empty list (float64 to numpy) is no ids. The ids
    are one list (a 1-D array): 2-D candidates ``[[2, 3]]`` were numpy's raw "all the input arrays must have same
    number of dimensions" (issue 30 round 31, AA393)."""
    from ...integers import is_integer_array
    from ...value_rules import api_check

    array = _values(api, name, ids)
    if array.ndim != 1 and array.size:
        api_check(api, name, f"must be one list of token ids (a 1-D array), got an array of shape "
                  f"{tuple(array.shape)}", "pass a flat list of ids (np.ravel(ids), if every row is meant)")
    if array.size == 0:
        return array.astype(np.int64).reshape(-1)
    if not is_integer_array(array):
        flat = array.reshape(-1)
        cut = np.flatnonzero(flat != np.floor(flat)) if array.dtype.kind == "f" else []  # the value cut, if any
        api_check(api, name, f"must be whole token ids, got an array of {array.dtype} "
                  f"({flat[cut[0] if len(cut) else 0].item()!r})",
                  "pass integer ids (np.asarray(ids, dtype=np.int64) of whole numbers)")
    return array.astype(np.int64)


def _check_nonzero_rows(api: str, name: str, table: np.ndarray, ids: np.ndarray) -> None:
    """UserError naming the ids of ``name`` whose rows of ``table`` are all zero: such a row has no direction, so its
    cosine with every row is undefined (read as 0), and a zero probe was given ids 0, 1, 2 as its neighbours without a
    word (issue 30 round 29, W673); NaN rows are ``_check_finite_rows``'."""
    from ...value_rules import api_check

    rows = np.unique(ids)
    bad = rows[~np.any(table[rows] != 0, axis=1)] if len(rows) else rows
    shown = ", ".join(str(i) for i in bad[:8]) + (f" and {len(bad) - 8:,} more" if len(bad) > 8 else "")
    api_check(api, name, f"holds {len(bad):,} ids whose table rows are all zero (ids {shown}): a zero row has no "
              f"direction, so no cosine neighbours" if len(bad) else None,
              "leave those ids out, or analyse a table whose rows are nonzero")


def _check_ids_in_table(api: str, name: str, ids: np.ndarray, rows: int) -> None:
    """UserError naming the ids outside [0, ``rows``): a probe past the table was numpy's IndexError "index 400 is out
    of bounds for axis 0 with size 300", and a negative one was read from the table's end without a word (issue 30
    round 20, M238)."""
    from ...value_rules import api_check

    bad = ids[(ids < 0) | (ids >= rows)]
    shown = ", ".join(str(i) for i in bad[:8]) + (f" and {len(bad) - 8:,} more" if len(bad) > 8 else "")
    api_check(api, name, f"holds ids outside the table's [0, {rows:,}): {shown}" if len(bad) else None,
              f"pass token ids of the table (0 to {rows - 1:,})")


def _check_ascending(api: str, name: str, ids: np.ndarray) -> None:
    """UserError unless ``ids`` are strictly ascending, each id once, as documented for ``nearest_neighbours``'
    candidates: [2, 2, 2, 2] gave the neighbours [2, 2, 2], one id counted three times, without a word (issue 30 round
    30, Y195), and unsorted ones were searched as if sorted (``np.searchsorted``), so a probe could be its own
    neighbour."""
    from ...value_rules import api_check

    back = np.flatnonzero(np.diff(ids) <= 0)
    problem = None
    if back.size:
        i = int(back[0]) + 1
        problem = (f"holds id {ids[i]} twice (at [{i - 1:,}] and [{i:,}])" if ids[i] == ids[i - 1] else
                   f"is not in ascending order: [{i:,}] is {ids[i]} after {ids[i - 1]}")
    api_check(api, name, problem, "pass each id once, ascending (np.unique(ids) gives that)")


def _check_shape(api: str, name: str, table: np.ndarray) -> None:
    """UserError unless ``table`` is a (V, D) array of numbers with D >= 1: a (V, 0) table was analysed into rms NaN
    per group with numpy's RuntimeWarnings (issue 30 round 23, U447)."""
    from ...value_rules import api_check

    if not np.issubdtype(table.dtype, np.number) or table.ndim != 2 or table.shape[1] == 0:
        api_check(api, name, f"expected a (V, D) table of numbers with D >= 1, got {table.dtype} shape {table.shape}",
                  "pass the embedding table as a 2-D float array")


def _check_finite_rows(api: str, name: str, table: np.ndarray, ids: np.ndarray | None = None) -> None:
    """UserError naming the rows ``ids`` (every row when None; ids the caller checked are the table's) of ``table``
    (V, D) that hold NaN or inf: a NaN row has no nearest neighbours, and numpy's "could not broadcast input array
    from shape (0,) into shape (10,)" named nothing (issue 30 round 18, G281); ``nearest_neighbours`` and
    ``table_geometry`` called directly did not check (round 23, U437)."""
    from ...value_rules import api_check

    if ids is None:
        bad = np.flatnonzero(~np.isfinite(table).all(axis=1))
    else:
        rows = np.unique(ids)
        bad = rows[~np.isfinite(table[rows]).all(axis=1)]
    shown = ", ".join(str(i) for i in bad[:8]) + (f" and {len(bad) - 8:,} more" if len(bad) > 8 else "")
    api_check(api, name, f"holds NaN or inf in {len(bad):,} of its {table.shape[0]:,} rows (ids {shown})"
              if len(bad) else None, "analyse a checkpoint whose weights are finite (a diverged run has none)")


def _check_enough_candidates(num_candidates: int, top_k: int, num_counts: int, rows: int) -> None:
    """UserError naming a ``train_freq`` shorter than the table when it leaves too few ids seen for ``top_k``
    neighbours: counts of 10 ids for a 300-row table were "only 4 ids occur in training ...; lower --top-k", which
    blamed k, not the counts (issue 30 round 23, U445). A shorter ``train_freq`` is allowed (a head larger than its
    tokenizer), so only this case is refused here; ``nearest_neighbours`` refuses the others."""
    from ...value_rules import api_check

    api_check("analyze_tables", "train_freq", f"holds counts of {num_counts:,} ids for a table of {rows:,} rows, and "
              f"only {num_candidates:,} of them occur in training: too few for {top_k:,} neighbours"
              if num_candidates <= top_k and num_counts < rows else None,
              "pass the train_freq.npy of the data the run trained on (one count per token id), or lower top_k")


def analyze_tables(init: np.ndarray, final: np.ndarray, train_freq: np.ndarray, num_buckets: int = 5,
                   method: str = "mass", probes_per_group: int = 200, top_k: int = 10) -> TableAnalysis:
    """Geometry per group of the (V, D) tables at init and at the end, and the probes' neighbours in both."""
    init, final = _values("analyze_tables", "init", init), _values("analyze_tables", "final", final)
    if init.shape != final.shape:
        raise UserError(f"the initial table {init.shape} and the final one {final.shape} differ in shape: they are "
                        f"not one run's; rebuild the init from the config of the checkpoint analysed")
    from ...value_rules import api_check, whole_problem

    for name, value in (("probes_per_group", probes_per_group), ("top_k", top_k)):  # top_k=2.5: range()'s TypeError
        api_check("analyze_tables", name, whole_problem(value, 1, "a positive integer"),  # (round 18, G283)
                  f"pass {name} as a whole number, e.g. {name}=10")
    for name, table in (("init", init), ("final", final)):
        _check_shape("analyze_tables", name, table)
        _check_finite_rows("analyze_tables", name, table)
    groups = frequency_groups(train_freq, init.shape[0], num_buckets, method)
    candidates = np.concatenate([g.ids for g in groups if g.name != UNSEEN])
    candidates.sort()
    _check_enough_candidates(len(candidates), top_k, len(np.asarray(train_freq)), init.shape[0])
    probes = probe_ids(groups, probes_per_group)
    ids = np.array([p[0] for p in probes], dtype=np.int64)
    before = nearest_neighbours(init, ids, candidates, top_k)
    after = nearest_neighbours(final, ids, candidates, top_k)
    return TableAnalysis(table_geometry(init, groups), table_geometry(final, groups),
                         [Probe(i, g, c, b.tolist(), f.tolist()) for (i, g, c), b, f in zip(probes, before, after)],
                         int(len(candidates)))


# ---- two records ----------------------------------------------------------------------------------
def _overlap(a: list[int], b: list[int], k: int) -> float:
    return len(set(a) & set(b)) / k


def check_records(api: str, name: str, records) -> list:
    """``records`` as a list of ``EmbeddingRecord``s, or an ArgumentTypeError naming the first that is not one:
    ``compare_records('a', 'b')`` was the raw AttributeError "'str' object has no attribute 'top_k'" (issue 30 round
    24, W630). Footgun: a single record given for a list is refused too, as is text (a list of its letters)."""
    from ...errors import ArgumentTypeError

    fix = "pass what read_record, read_records or record_of_run return"
    if isinstance(records, (str, bytes, EmbeddingRecord)) or not isinstance(records, (list, tuple)):
        raise ArgumentTypeError(f"{api}: {name}: expected a list of EmbeddingRecords, got {type(records).__name__} "
                                f"{records!r:.60}; {fix}")
    for value in records:
        if not isinstance(value, EmbeddingRecord):
            raise ArgumentTypeError(f"{api}: {name}: expected an EmbeddingRecord, got {type(value).__name__} "
                                    f"{value!r:.60}; {fix}")
    return list(records)


def compare_records(a: EmbeddingRecord, b: EmbeddingRecord) -> EmbeddingPair:
    """Neighbour agreement of two records made on the same probes with the same k (see the module docstring)."""
    check_records("compare_records", "a and b", [a, b])
    if a.top_k != b.top_k:
        raise UserError(f"{a.run} lists {a.top_k} neighbours per probe and {b.run} {b.top_k}: make both records with "
                        f"the same --top-k")
    if (a.num_buckets, a.bucket_method) != (b.num_buckets, b.bucket_method):  # round 11 (R27): same probe ids, other
        # groups: the agreement per bucket was tabled by a's buckets
        raise UserError(f"{a.run} was analysed with {a.num_buckets} {a.bucket_method} buckets and {b.run} with "
                        f"{b.num_buckets} {b.bucket_method} buckets: their groups differ; remake them with the same "
                        f"--buckets / --method")
    if [p.id for p in a.probes] != [p.id for p in b.probes]:
        raise UserError(f"{a.run} and {b.run} hold different probe ids: they were made on other data or with other "
                        f"--buckets / --method / --probes; remake them on the same prepared data with the same options")
    k = a.top_k
    names = list(dict.fromkeys(p.group for p in a.probes))
    groups = []
    for name in ["all"] + names:
        pairs = [(p, q) for p, q in zip(a.probes, b.probes) if name == "all" or p.group == name]
        init = [_overlap(p.init, q.init, k) for p, q in pairs]
        final = [_overlap(p.final, q.final, k) for p, q in pairs]
        groups.append(Agreement(name, len(pairs), float(np.mean(init)) if pairs else None,
                                float(np.mean(final)) if pairs else None))
    chance = k / max(a.num_candidates - 1, 1)
    return EmbeddingPair(a.run, b.run, a.variant, b.variant, a.seed, b.seed, k, chance, groups)

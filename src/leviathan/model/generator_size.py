"""How many parameters a generator's settings give it, refused before any tensor when no memory holds them.

    check_size(vocab_size=300, hidden_size=16, k=3, seed_dim=128, modes=8, knots=32, rank=10**9, base=None)
    # ValueError: these settings give the generator 32,896,000,135,808 parameters (122,547 GiB in float32), ...

Torch-free, so that ``ModelConfig`` (a config read without building a model) and ``LeviathanGenerator`` (every way
in: adoption, the Python API) apply the same bound.
"""

from __future__ import annotations

MAX_PARAMETERS = 2**31  # 8 GiB of float32; the paper's generator at V = 200,019, D = 512 has about 2.5 million
MAX_KNOTS = 1024  # 32x the paper's 32 (16 also used); each knot adds modes x seed_dim x rank spline parameters
MAX_MODES = 256  # 32x the paper's 8, the knot cap's multiple; each mode adds a projection, splines and an output map
MAX_RANK = 2048  # 32x the paper's 64; each rank adds modes x (seed_dim x knots + hidden_size) parameters
PAPER_FEATURES = 8 * 64  # the paper's modes x rank: step 6's features, always allowed (small vocabularies use it)


def check_size(vocab_size: int, hidden_size: int, k: int, seed_dim: int, modes: int, knots: int, rank: int,
               base: int | None) -> None:
    """ValueError when the sizes, each valid alone, ask for a generator no memory holds (issue 30 round 8:
    ``adopt(model, rank=10**9)`` ended in the allocator's traceback asking for 131 TB). Counted before any tensor
    is made: codebooks, projections, splines and output maps. Parameters: the generator's sizes (docs/DESIGN.md §2),
    one each as ModelConfig and LeviathanGenerator hold them."""
    if k > 64:
        raise ValueError(f"k must be an integer in [1, 64] (base 2 already addresses 2^64 ids), got {k!r}")
    b = base if base is not None else smallest_base(vocab_size, k)
    parts = {"codebooks (k x base x seed_dim)": (k * b * seed_dim, "base, k or seed_dim"),
             "splines (modes x seed_dim x (seed_dim + 2 + knots x rank))":
                 (modes * seed_dim * (seed_dim + 2 + knots * rank), "knots, rank, seed_dim or modes"),
             "output maps (modes x rank x hidden_size)": (modes * rank * hidden_size, "hidden_size, rank or modes")}
    count = sum(n for n, _ in parts.values())
    if count > MAX_PARAMETERS:
        # the largest part named (a hidden_size of 1e9 was refused naming only rank, knots, ..., issue 30 round 9,
        # M55), and the fix its own sizes: that part's fix still named the generator's settings only (round 25, X59)
        most = max(parts, key=lambda part: parts[part][0])
        raise ValueError(f"these settings give the generator {count:,} parameters ({count * 4 / 2**30:,.0f} GiB in "
                         f"float32), more than the {MAX_PARAMETERS:,} any generator can use (the paper's has about "
                         f"2.5 million), most of them in its {most}; lower {parts[most][1]} "
                         f"(given: rank {rank}, knots {knots}, modes {modes}, seed_dim {seed_dim}, base {b}, k {k}, "
                         f"hidden_size {hidden_size:,})")


def digits_problem(vocab_size: int, k: int, base: int | None, knots: int, prefix: str = "") -> str | None:
    """Why ``base`` or ``knots`` is past what ``vocab_size`` ids can use, with the fix; None when both are fine.
    ``prefix`` names the settings as the caller spells them (ModelConfig's ``model.generator_``).

    The paper writes each id in k = ceil(log_b V) digits of base b: with a base so large that every id fits in k - 1
    digits (b^(k-1) >= V), the top digit is always 0 and most codebook rows are never used. ``adopt(base=10**7)`` for
    300 ids built 3 x 10^7 codebook rows of which 302 are read, and ``knots=10**6`` 64 million spline parameters,
    without a word (issue 30 round 27, S28, S29, S135, S396). One rule for ModelConfig (a run config,
    ``LeviathanConfig``) and ``LeviathanGenerator`` (adopt, the Python API); the arguments are checked before."""
    largest = largest_base(vocab_size, k)
    if base is not None and base > largest:
        unused = (f"rows past {vocab_size:,} are never read" if k == 1 else
                  f"every id fits in {k - 1} digits, so the top codebook is read only at its row 0")
        return (f"{prefix}base={base:,} is larger than {vocab_size:,} ids can use with {prefix}k={k} (the paper writes "
                f"an id in k = ceil(log_b V) digits; past base {largest:,} {unused}); set {prefix}base to at most "
                f"{largest:,}, or leave it out for the smallest base, {smallest_base(vocab_size, k):,}")
    if knots > MAX_KNOTS:
        return (f"{prefix}knots={knots:,} is more than {MAX_KNOTS:,}, past any spline grid the generator uses (the "
                f"paper uses 16 and 32; each knot adds modes x seed_dim x rank parameters, and a finer grid than the "
                f"ids' inputs fill leaves knots no id trains); set {prefix}knots to at most {MAX_KNOTS:,} (e.g. 32)")
    return None


def features_problem(vocab_size: int, modes: int, rank: int, prefix: str = "") -> str | None:
    """Why ``modes`` or ``rank`` is past what the generator can use for ``vocab_size`` ids, with the fix; None when
    both are fine. ``prefix`` as ``digits_problem``'s; the arguments are checked before, and after ``check_size``
    (whose line names a generator no memory holds first).

    Step 6 writes e(i) = sum_m P_m W^out_m: a (modes x rank)-wide feature row per id times a (modes x rank) x D map.
    The V ids' feature rows span at most V dimensions, so features past V (and past the paper's 8 x 64 = 512, kept
    for small vocabularies) add parameters and no embedding the table could not already hold; past that, and past
    32x the paper's 8 modes or 64 ranks (the knot cap's multiple), a value is a typo. ``ModelConfig(generator_modes=
    10**6)`` and ``rank=10**7``, ``LeviathanGenerator(300, 16, modes=10**6)`` and ``adopt(..., modes=10**6)`` built
    hundreds of millions of parameters for a 300 x 32 table without a word (issue 30 round 28, U27, U28, U71, U182).
    One rule for ModelConfig and LeviathanGenerator, as ``digits_problem`` is."""
    for name, value, cap, paper, adds in (("modes", modes, MAX_MODES, 8, "a projection, splines and an output map"),
                                          ("rank", rank, MAX_RANK, 64, "modes x (seed_dim x knots + hidden_size) "
                                                                        "parameters")):
        if value > cap:
            return (f"{prefix}{name}={value:,} is more than {cap:,}, 32x the paper's {paper}, past any generator's "
                    f"(each adds {adds}); set {prefix}{name} to at most {cap:,} (the paper: {paper})")
    limit = max(vocab_size, PAPER_FEATURES)
    if modes * rank > limit:
        return (f"{prefix}modes x {prefix}rank = {modes:,} x {rank:,} = {modes * rank:,} features is more than "
                f"{vocab_size:,} ids can use (step 6 maps each id's modes x rank features to its embedding, and "
                f"{vocab_size:,} ids' features span at most {vocab_size:,} dimensions: past that, or past the paper's "
                f"8 x 64 = {PAPER_FEATURES}, they add parameters, not embeddings); lower {prefix}modes or {prefix}rank "
                f"so that their product is at most {limit:,}")
    return None


def largest_base(vocab_size: int, k: int) -> int:
    """The largest base whose k digits ``vocab_size`` ids all use: b^(k-1) < V (for k = 1, b <= V), and never less
    than the smallest base (2 digits of base 2 for 3 ids leave the top one unused already)."""
    top = vocab_size if k == 1 else smallest_base(vocab_size, k - 1) - 1
    return max(top, smallest_base(vocab_size, k))


def smallest_base(vocab_size: int, k: int) -> int:
    """The smallest integer b >= 2 with b**k >= vocab_size, in exact integer arithmetic (``model.config.min_base``
    checks its arguments in ModelConfig's words and calls this). Its own arguments are checked too: ``k=-1`` looped
    forever (b**-1 never reaches vocab_size) and a bool was taken as 1 (issue 30 round 22, the kind of S225)."""
    from ..value_rules import check_whole

    check_whole("smallest_base", "vocab_size", vocab_size, 1, fix="pass the number of token ids")
    check_whole("smallest_base", "k", k, 1, 64, fix="pass the number of digits per id (3 in the paper)")
    b = max(2, int(round(vocab_size ** (1.0 / k))))
    while b**k < vocab_size:
        b += 1
    while b > 2 and (b - 1) ** k >= vocab_size:
        b -= 1
    return b

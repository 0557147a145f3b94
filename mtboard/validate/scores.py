"""Validating scores-only cards (issue 17 item 2; spec §6.4, §8 sovereignty): ``mtboard validate-scores``.

Checks, in order (each problem one line naming the JSON path):

1. ``json`` — strict JSON (:mod:`mtboard.core.safejson`: size cap, no duplicate keys, no NaN).
2. ``text`` — every string value sits at a path the schema declares as an identifier, hash, enum or signature and
   matches that path's own pattern and length (:data:`mtboard.core.schema.SCORES_STRING_PATTERNS`: the shapes of the real
   values); any other string — a ``source``, ``reference``, ``predicted`` or ``hypothesis`` field anywhere, a
   sentence, or a long payload in an identifier field — is rejected. (The schema forbids unknown keys too; this
   check names the text.) What the allowed fields can still carry is stated honestly at
   :data:`~mtboard.core.schema.SCORES_STRING_PATTERNS` (32 bytes per segment in ``hypothesis_hmac``).
3. ``schema`` — :class:`mtboard.core.schema.ScoresCard`, strict.
4. ``seal`` — ``scores_card_hash`` equals the SHA-256 of the canonical card with it set to "".
5. ``recompute`` — every aggregate equals :func:`mtboard.score.scores_card.recompute` of the segments exactly (``==``),
   ``dataset.entry_count`` the number of segments.
5b. ``entries`` — entry ids unique (issue 32 item 3: a good segment listed twice in place of a bad one).
5c. ``stats`` — every segment's chrF++/BLEU/TER statistics internally consistent
   (:func:`mtboard.validate.bounds.statistics_problems`: matches ≤ totals, n-gram totals that follow from the
   lengths, non-negative whole counts) and its facts too (``fst_accepted_words`` ≤ ``fst_checked_words``,
   ``glossary_hits`` ≤ ``glossary_terms``): only the aggregates are recomputed from the statistics, so impossible
   statistics would otherwise give impossible scores (matches above the hypothesis's n-grams: chrF++ 100).
5d. ``timestamp`` — not after the validation time (+ :data:`mtboard.validate.bounds.CLOCK_SKEW`), not before 2024.
5e. ``corpus`` (only with the secret corpus: ``mtboard validate-scores --secret-corpus``, and the official board build
   given ``$MTBOARD_SECRET_SEGMENT``; :class:`SecretCorpus`) — for a card whose ``dataset.sha256`` is that file's,
   the entries are exactly the file's entries of ``dataset.segment`` and every reference-side statistic equals the
   harness's own of that entry's reference (:func:`mtboard.validate.bounds.reference_problems`); a card naming the
   file's dataset id and version with another SHA-256 is refused. A card of another corpus is not checked here.
6. ``segment`` — ``dataset.segment`` is gold_standard or held_out.
6b. ``signature`` — the chrF++, BLEU and TER signatures equal this harness's for the target language and the
   composite signature this harness's for the card's profile and mechanical policy
   (:func:`mtboard.score.metrics.chrf.chrf_signature` …): recomputed, so they carry nothing of their own.
7. ``link`` — :func:`dev_link_problems`, the one dev-link check (issue 34 item 6: ``mtboard validate-scores`` and the
   official board build, :func:`mtboard.verify.official.refuse_mislinked`, both call it, so they refuse the same
   cards with the same words): the development card the gold card names (``card_run_card_hash``), looked up among
   the development cards (the board's shown cards in the build; in ``validate-scores`` the sealed cards under
   ``--submissions``, :func:`development_cards`, or the ``--dev-card`` given), must match it —
   :func:`check_dev_link`: the gold card's ``card_run_card_hash``, ``method_spec``, ``model_slug``, ``condition``,
   ``card_fingerprint``, ``card_dataset_id`` and languages are the development card's. ``model_slug`` and
   ``condition`` are components of the fingerprint; the re-run's own fingerprint (``rerun_fingerprint``) hashes the
   secret corpus, harness and engine versions of the re-run, which the card does not carry, so it cannot be compared.
   A file named as the layout says (``<development card stem>.<segment>.scores.json``, the stem ending in the first
   12 hex of the development card's run_card_hash) must name the card's own development card and segment. A gold
   card whose development card is absent is not refused (a withdrawn card keeps its gold row; the official page says
   it has no development row).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mtboard.core import canonical, safejson
from mtboard.core.errors import MtboardError
from mtboard.core.schema import SCORES_STRING_PATTERNS, SECRET_SEGMENTS, Corpus, RunCard, ScoresCard
from mtboard.validate import bounds

STRING_PATHS = frozenset(SCORES_STRING_PATTERNS)
"""Paths (``[]`` for any list index) where a scores-only card may hold a string."""
_PATTERNS = {path: re.compile(rx) for path, rx in SCORES_STRING_PATTERNS.items()}
TEXT_ALLOWED = ("no string here (strings only at the identifier, hash, enum and signature paths of "
                "mtboard.core.schema.SCORES_STRING_PATTERNS, each of its pattern; spec §6.4: a scores-only card holds "
                "no source, reference or hypothesis text)")
MAX_BYTES = 16 * 1024 * 1024
MAX_LINES_PER_CHECK = 20
"""Statistics problems listed per card (the rest are counted in one more line)."""


@dataclass(frozen=True)
class SecretCorpus:
    """The secret corpus a scores-only card may name (check 5e): the parsed file, the SHA-256 of its bytes and how
    messages name it (never its path's content)."""

    corpus: Corpus
    sha256: str
    name: str

    @classmethod
    def load(cls, path: str | os.PathLike[str], name: str | None = None) -> SecretCorpus:
        """Read a corpus file (:func:`mtboard.core.documents.load_corpus`). Raises InputError when unreadable."""
        from mtboard.core.documents import load_corpus  # noqa: PLC0415

        corpus, sha = load_corpus(path)
        return cls(corpus, sha, name or "the secret corpus")


@dataclass
class ScoresReport:
    path: str
    problems: list[str] = field(default_factory=list)
    card: ScoresCard | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def text_fields(data: Any, path: str = "") -> list[str]:
    """JSON paths of every string that is not an allowed identifier (module docstring, check 2)."""
    out: list[str] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(text_fields(v, f"{path}.{k}" if path else str(k)))
    elif isinstance(data, list):
        generic = f"{path}[]"
        for i, v in enumerate(data):
            found = text_fields(v, generic)
            out.extend(f.replace(generic, f"{path}[{i}]", 1) for f in found)
    elif isinstance(data, str):
        pattern = _PATTERNS.get(path)
        if pattern is None or not pattern.fullmatch(data):
            out.append(path or "$")
    return out


def check_scores_data(data: Any, where: str, *, secret: SecretCorpus | None = None,
                      now: datetime | None = None) -> ScoresReport:
    """Checks 2–6 on parsed JSON (module docstring). ``secret``: the secret corpus for check 5e (None: skipped);
    ``now``: the validation time (default: the clock)."""
    from mtboard.core.documents import validate_model  # noqa: PLC0415

    rep = ScoresReport(where)
    texts = text_fields(data)
    if texts:
        rep.problems.extend(f"text: $.{p} holds text (not repeated here), allowed: {TEXT_ALLOWED}" for p in texts)
        return rep
    try:
        card = validate_model(ScoresCard, _dumps(data), where)  # JSON mode: enum strings, strict numbers
    except MtboardError as exc:
        rep.problems.append(f"schema: {exc.one_line()}")
        return rep
    rep.card = card
    if card.dataset.segment not in SECRET_SEGMENTS:
        rep.problems.append(f"segment: $.dataset.segment is {card.dataset.segment.value}, allowed: gold_standard or "
                            "held_out (scores-only cards are for the secret segments; spec §6.4)")
    rep.problems.extend(signature_problems(card))
    want = scores_card_hash_of(data)
    if not card.scores_card_hash or want != card.scores_card_hash:
        rep.problems.append(f"seal: $.scores_card_hash is {card.scores_card_hash[:12]!r}…, allowed: {want[:12]!r}… "
                            "(the SHA-256 of the canonical card with this field \"\": changed after sealing; spec "
                            "§3.9)")
    late = bounds.date_problem(card.timestamp, "$.timestamp", now or datetime.now(UTC))
    if late:
        rep.problems.append(f"timestamp: {late}")
    rep.problems.extend(entry_problems(card))
    consistent = _capped("stats", segment_problems(card))
    rep.problems.extend(consistent)
    if secret is not None:
        rep.problems.extend(_capped("corpus", corpus_problems(card, secret)))
    if card.dataset.entry_count != len(card.segments):
        rep.problems.append(f"recompute: $.dataset.entry_count is {card.dataset.entry_count}, allowed: "
                            f"{len(card.segments)} (the number of segments the card lists)")
    if consistent:
        return rep  # aggregates of impossible statistics mean nothing
    rep.problems.extend(recompute_problems(card))
    return rep


def scores_card_hash_of(data: Any) -> str:
    """:func:`mtboard.score.scores_card.scores_card_hash` (imported late: score/ loads sacrebleu)."""
    from mtboard.score.scores_card import scores_card_hash  # noqa: PLC0415

    return scores_card_hash(data)


def recompute_problems(card: ScoresCard) -> list[str]:
    """Check 5: one ``recompute:`` line per aggregate that differs from the segments' recomputation."""
    from mtboard.score.scores_card import recompute  # noqa: PLC0415

    try:
        agg = recompute(card.segments)
    except MtboardError as exc:
        return [f"recompute: {exc.one_line()}"]
    stored = card.scores.model_dump(mode="json")
    return [f"recompute: $.scores.{name} is {stored.get(name)!r}, allowed: {value!r} (recomputed from the segments: "
            "mtboard.score.scores_card.recompute)" for name, value in agg.items() if stored.get(name) != value]


def entry_problems(card: ScoresCard) -> list[str]:
    """Check 5b: one ``entries:`` line per segment repeating an earlier segment's entry id."""
    first: dict[int, int] = {}
    out = []
    for i, s in enumerate(card.segments):
        if s.entry_id in first:
            out.append(f"entries: $.segments[{i}].entry_id is {s.entry_id}, already at "
                       f"$.segments[{first[s.entry_id]}]; allowed: each entry of the secret segment once")
        else:
            first[s.entry_id] = i
    return out


def segment_problems(card: ScoresCard) -> list[str]:
    """Check 5c: the statistics and facts of every segment (module docstring), one line each."""
    out: list[str] = []
    try:
        modes = bounds.metric_modes(card.dataset.target_language)
    except MtboardError as exc:
        return [f"$.dataset.target_language: {exc.one_line()}"]
    for i, s in enumerate(card.segments):
        path = f"$.segments[{i}]"
        out.extend(bounds.statistics_problems(s.chrf, s.bleu, s.ter, path))
        out.extend(bounds.facts_problems(s, path, modes))
        for part, whole in (("fst_accepted_words", "fst_checked_words"), ("glossary_hits", "glossary_terms")):
            a, b = getattr(s, part), getattr(s, whole)
            if a is not None and (b is None or a > b):
                out.append(f"{path}.{part} is {a}, allowed: 0…{b if b is not None else 0} (at most "
                           f"{path}.{whole}: a subset of those)")
    return out


def corpus_problems(card: ScoresCard, secret: SecretCorpus) -> list[str]:
    """Check 5e (module docstring): the card's entries and reference-side statistics against the secret corpus."""
    d, sd = card.dataset, secret.corpus.dataset
    if d.sha256 != secret.sha256:
        if (d.id, d.version) == (sd.id, sd.version):
            return [f"$.dataset.sha256 is {d.sha256[:12]}…, allowed: {secret.sha256[:12]}… (the SHA-256 of "
                    f"{secret.name}, dataset {sd.id} v{sd.version})"]
        return []
    entries = secret.corpus.segment(d.segment)
    want = {e.id for e in entries}
    got = {s.entry_id for s in card.segments}
    out = [f"$.segments has no entry {i}, allowed: exactly the {len(want)} {d.segment.value} entries of "
           f"{secret.name}" for i in sorted(want - got)]
    out += [f"$.segments[{i}].entry_id is {s.entry_id}, allowed: an entry id of the {d.segment.value} segment of "
            f"{secret.name}" for i, s in enumerate(card.segments) if s.entry_id not in want]
    by_id = {e.id: e for e in entries}
    pairs = [(i, s) for i, s in enumerate(card.segments) if s.entry_id in by_id]
    try:
        refs = bounds.reference_statistics([by_id[s.entry_id].reference for _, s in pairs], d.target_language)
    except MtboardError as exc:
        return out + [f"cannot compute the reference statistics: {exc.one_line()}"]
    for (i, s), ref in zip(pairs, refs):  # the schema fixed the statistics' widths
        out.extend(bounds.reference_problems(s.chrf, s.bleu, s.ter, ref, f"$.segments[{i}]", secret.name))
    scored = sum(s.ter is not None for _, s in pairs)
    covered = sum(r.ter_ref_words is not None for r in refs)
    if scored != covered:
        out.append(f"$.segments[*].ter is present on {scored} of {len(pairs)} entries (TER coverage {scored}/"
                   f"{len(pairs)}), allowed: {covered} of {len(pairs)} (the entries whose reference in {secret.name} "
                   "is within TER's coverage: mtboard.score.metrics.ter.ter_covered)")
    return out


def _capped(check: str, lines: list[str]) -> list[str]:
    """``check: line`` for the first :data:`MAX_LINES_PER_CHECK` lines, and a count of the rest."""
    out = [f"{check}: {line}" for line in lines[:MAX_LINES_PER_CHECK]]
    if len(lines) > MAX_LINES_PER_CHECK:
        out.append(f"{check}: … and {len(lines) - MAX_LINES_PER_CHECK} more")
    return out


def signature_problems(card: ScoresCard) -> list[str]:
    """Check 6b (module docstring): one ``signature:`` line per signature that is not this harness's."""
    from mtboard.score.checks import POLICY_VERSION  # noqa: PLC0415
    from mtboard.score.metrics.bleu import bleu_signature  # noqa: PLC0415
    from mtboard.score.metrics.chrf import chrf_signature  # noqa: PLC0415
    from mtboard.score.metrics.composite import composite_signature  # noqa: PLC0415
    from mtboard.score.metrics.ter import ter_signature  # noqa: PLC0415

    tgt = card.dataset.target_language
    try:
        mine = {"chrf": chrf_signature(), "bleu": bleu_signature(tgt), "ter": ter_signature(tgt),
                "composite": composite_signature(card.scores.composite_profile, POLICY_VERSION)}
    except MtboardError as exc:
        return [f"signature: cannot compute this harness's signatures for {tgt}: {exc.one_line()}"]
    return [f"signature: $.signatures.{name} is {getattr(card.signatures, name)!r}, allowed: {want!r} (this "
            f"harness's {name} signature for target {tgt})" for name, want in mine.items()
            if getattr(card.signatures, name) != want]


def check_dev_link(card: ScoresCard, dev: RunCard) -> list[str]:
    """Check 7 (module docstring): one ``link:`` line per field where the scores-only card and the development card
    it names disagree; [] when they agree. A gold row that fails this would borrow ``dev``'s development row and its
    dev–gold gap for another method's scores (issue 17 item 3)."""
    pairs = (("card_run_card_hash", card.card_run_card_hash, dev.run_card_hash, "run_card_hash"),
             ("method_spec", card.method_spec, dev.method.spec, "method.spec"),
             ("model_slug", card.model_slug, dev.model_slug, "model_slug"),
             ("condition", card.condition, dev.condition, "condition"),
             ("card_fingerprint", card.card_fingerprint, dev.fingerprint.hash, "fingerprint.hash"),
             ("card_dataset_id", card.card_dataset_id, dev.dataset.id, "dataset.id"),
             ("dataset.source_language", card.dataset.source_language, dev.dataset.source_language,
              "dataset.source_language"),
             ("dataset.target_language", card.dataset.target_language, dev.dataset.target_language,
              "dataset.target_language"))
    return [f"link: $.{name} is {got!r}, allowed: {want!r} (the development card's {src}: a gold card is a re-run "
            "of its development card's method)" for name, got, want, src in pairs if got != want]


GOLD_NAME_RE = re.compile(r"__(?P<hex>[0-9a-f]{12})\.(?P<segment>[a-z_]+)\.scores\.json$")
"""A scores-only card's file name as ``mtboard verify --segment`` writes it (:func:`mtboard.verify.secret.scores_name`):
``<development card stem>.<segment>.scores.json``, the stem ending in ``__`` and 12 hex of the development card's
run_card_hash (:func:`mtboard.validate.naming.canonical_name`)."""


def dev_link_problems(card: ScoresCard, dev_cards: Mapping[str, RunCard], name: str | None = None) -> list[str]:
    """Check 7 (module docstring), the one dev-link check of a gold card (issue 34 item 6): one ``link:`` line per
    disagreement; [] when the card agrees with the development card it names, or when ``dev_cards`` (run_card_hash →
    development card) does not hold that card. ``name``: the card's file name (any folder part is ignored); when it
    has the layout's shape, the development card and segment it names must be the card's.

    ``mtboard validate-scores`` and :func:`mtboard.verify.official.refuse_mislinked` (the official board build) both
    call this, so a gold card one refuses the other refuses, with the same lines."""
    problems: list[str] = []
    m = GOLD_NAME_RE.search(Path(name).name) if name else None
    if m is not None:
        if m["hex"] != card.card_run_card_hash[:12]:
            problems.append(f"link: the file name names development card {m['hex']}…, but $.card_run_card_hash is "
                            f"{card.card_run_card_hash[:12]}… (a gold card is filed as "
                            "<its development card's stem>.<segment>.scores.json)")
        if m["segment"] != str(card.dataset.segment):
            problems.append(f"link: the file name names segment {m['segment']!r}, but $.dataset.segment is "
                            f"{str(card.dataset.segment)!r} (a gold card is filed as "
                            "<its development card's stem>.<segment>.scores.json)")
    dev = dev_cards.get(card.card_run_card_hash)
    if dev is not None:
        problems.extend(check_dev_link(card, dev))
    return problems


def development_cards(submissions: str | os.PathLike[str]) -> dict[str, RunCard]:
    """run_card_hash → development card, of every sealed run card under ``submissions`` (recursively; hidden folders,
    symlinks and ``*.verification.json`` records skipped): what :func:`dev_link_problems` compares gold cards with
    in ``mtboard validate-scores``. A file that is not a card whose seal holds is left out — the build does not show
    it either, and ``mtboard validate`` (the step before in the site workflow) reports it. {} when the folder is
    missing."""
    from mtboard.core.documents import loads_card  # noqa: PLC0415

    root = Path(submissions)
    out: dict[str, RunCard] = {}
    if not root.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if not fname.endswith(".json") or fname.startswith(".") or fname.endswith(".verification.json"):
                continue
            path = Path(dirpath) / fname
            try:
                raw = safejson.read_bytes(path)
                card = loads_card(raw, str(path))
                sealed = canonical.run_card_hash(safejson.loads(raw, where=str(path)))
            except MtboardError:
                continue
            if card.run_card_hash and sealed == card.run_card_hash:
                out.setdefault(card.run_card_hash, card)
    return out


def _dumps(data: Any) -> bytes:
    import json  # noqa: PLC0415

    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def validate_scores_card(path: str | os.PathLike[str], *, secret: SecretCorpus | None = None,
                         now: datetime | None = None) -> ScoresReport:
    """All checks on one file; never raises for a bad card (problems are lines of the report). ``secret``, ``now``:
    as :func:`check_scores_data`."""
    p = Path(path)
    where = p.name
    try:
        data = safejson.loads(safejson.read_bytes(p, max_bytes=MAX_BYTES), where=where, max_bytes=MAX_BYTES)
    except MtboardError as exc:
        return ScoresReport(where, [f"json: {exc.one_line()}"])
    return check_scores_data(data, where, secret=secret, now=now)


__all__ = ["GOLD_NAME_RE", "MAX_LINES_PER_CHECK", "STRING_PATHS", "ScoresReport", "SecretCorpus", "check_dev_link",
           "dev_link_problems", "development_cards",
           "check_scores_data", "corpus_problems", "entry_problems", "recompute_problems", "segment_problems",
           "signature_problems", "text_fields", "validate_scores_card"]

"""Checkpoint-key judge (BookTrans EN→RU method, ``../shared/spec/booktrans-bench-en-ru.txt``; digest "Checkpoint key").

A **benchmark folder** (``--bench DIR``) holds:

* ``bench.json`` — ``{"format": "mtboard-checkpoints/1", "id", "description", "corpus": "corpus.json",
  "key": "key.json" | "key.json.gz", "penalties": {kind: weight}, "allowed_scripts": [...]}``;
* the corpus file: an ordinary mtboard corpus whose entries are the text's paragraphs in order; a paragraph's
  **address** is its entry id, written ``P<id>`` in prompts and answers. A run is judged only when its card's
  ``dataset.sha256`` equals the SHA-256 of this file;
* the key: ``{"points": [{"id": "A01", "area": "names", "paragraphs": [3], "correct": "what counts as correct"}]}``,
  optionally gzip-compressed so the answers are not trivially scraped into training data (BookTrans ships its key
  compressed for the same reason). The translator never sees the key.

The judge answers one line per point, plus what it finds beyond the key, and a closing marker::

    [[[CHECK A01 ok]]]
    [[[CHECK A02 fail "why, quoting the translation"]]]
    [[[ADDITION P3 "a fact, action or judgement not in the source"]]]
    [[[UNTRANSLATED P5 "fragment left in the source language"]]]
    [[[END]]]

Every non-blank line must be one of these (fail closed); points missing from a well-formed answer are asked again,
just those, up to the attempt limit. Scoring (code, not the judge): area score = points passed in that area; a run's
score = 100 × (points passed − Σ penalty weight × count) / number of points, clamped to 0–100. Penalties: judge-found
``addition`` and ``untranslated``; code-found ``lost_paragraph`` (no usable output, echoed source or missing),
``markup`` (a paragraph whose markup tokens differ from the source's), ``foreign_script`` (each run of letters from
a script the target language does not use; Latin is always allowed) and ``extra_attempt`` (translation attempts beyond
the first, from the card). Points on a lost paragraph fail without being asked. ``--runs 3`` by default: the judge
runs three times; mean and spread (sample standard deviation) are reported, mean not median on purpose (BookTrans).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from mtboard.core import documents, paths, safejson
from mtboard.core.canonical import CHECKOUT_FIX, line_end_mismatch, sha256_hex
from mtboard.core.errors import ConfigError, InputError
from mtboard.judges.base import JudgeParseError, register, split_lines
from mtboard.core.languages import language_name, primary
from mtboard.core.schema import Corpus, EntryResult, Outcome, Strict
from mtboard.core.text import TAG

FORMAT = "mtboard-checkpoints/1"
PENALTY_KINDS = ("addition", "untranslated", "lost_paragraph", "markup", "foreign_script", "extra_attempt")
DEFAULT_RUNS = 3
"""BookTrans' default number of translation runs (``mtboard run --runs 3``); the judge judges each once."""
MAX_KEY_BYTES = 4 * 1024 * 1024


class KeyPoint(Strict):
    """One checkpoint of the key."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,32}$")
    """Point id, e.g. 'A01' (unique)."""
    area: str = Field(min_length=1, max_length=64)
    """Area the point belongs to, e.g. 'names', 'idiom', 'gender'."""
    paragraphs: list[int] = Field(min_length=1)
    """Addresses (corpus entry ids) of the paragraphs the point is about."""
    correct: str = Field(min_length=1)
    """What counts as correct (written in English, independent of the target language)."""


class Key(Strict):
    """The answer key file."""

    points: list[KeyPoint] = Field(min_length=1)


class BenchManifest(Strict):
    """``bench.json``."""

    format: Literal["mtboard-checkpoints/1"]
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")
    description: str | None = None
    corpus: str = "corpus.json"
    key: str = "key.json"
    penalties: dict[str, float] = {}
    """Weight per penalty kind (defaults 1 each; kinds: addition, untranslated, lost_paragraph, markup,
    foreign_script, extra_attempt)."""
    allowed_scripts: list[str] | None = None
    """Scripts allowed in the translation (Unicode name prefixes, e.g. ['CYRILLIC']); default from the target
    language; LATIN is always allowed."""


@dataclass
class Bench:
    """A loaded checkpoint benchmark."""

    root: Path
    manifest: BenchManifest
    corpus: Corpus
    corpus_sha256: str
    key: Key
    key_sha256: str

    @property
    def penalties(self) -> dict[str, float]:
        return {k: float(self.manifest.penalties.get(k, 1.0)) for k in PENALTY_KINDS}

    def check_corpus(self, sha256: str, what: str) -> None:
        """Refuse a run whose corpus file (SHA-256 ``sha256``, ``what`` names it) is not the benchmark's corpus.

        Raises: ConfigError; when the files differ only in line ends (a checkout with ``core.autocrlf=true``), the
        message says so and how to repair the checkout (:func:`mtboard.core.canonical.line_end_mismatch`).
        """
        if sha256 == self.corpus_sha256:
            return
        path = self.root / self.manifest.corpus
        why = line_end_mismatch(path.read_bytes(), sha256, str(path)) if path.is_file() else None
        if why:
            raise ConfigError(f"{what} is not the benchmark's corpus byte for byte: {why}", field="--bench",
                              fix=CHECKOUT_FIX)
        raise ConfigError(f"{what} (sha256 {sha256[:12]}…) is not the benchmark's corpus "
                          f"({self.manifest.corpus}, sha256 {self.corpus_sha256[:12]}…)", field="--bench",
                          fix="run the benchmark's own corpus file, or pass the matching --bench")


def _safe_member(root: Path, name: str, field_name: str) -> Path:
    """``root / name`` for the manifest's ``field_name``: inside the benchmark folder, with no ``..``, no absolute path
    and no symbolic link at any level (:func:`mtboard.core.paths.resolve_inside`; issue 34 item 4). Raises:
    InputError naming bench.json, the field and the path."""
    return paths.resolve_inside(root, name, where=str(root / "bench.json"), field=field_name,
                                root_name="the benchmark folder")


def load_bench(root: str | Path) -> Bench:
    """Load and check a benchmark folder (manifest, corpus, key; gzip key allowed).

    Raises: InputError naming the file and field (unknown penalty kind, duplicate point id, a point addressing a
    paragraph that is not in the corpus, paths outside the folder); ConfigError when the folder has no bench.json.
    """
    root = Path(root)
    mpath = root / "bench.json"
    if not mpath.is_file():
        raise ConfigError("not a checkpoint benchmark folder (no bench.json)", where=str(root), field="--bench",
                          fix="point --bench at a folder holding bench.json, the corpus and the key")
    manifest = documents.validate_model(BenchManifest, safejson.load_file(mpath), str(mpath))
    unknown = sorted(set(manifest.penalties) - set(PENALTY_KINDS))
    if unknown:
        raise InputError(f"unknown penalty kinds {unknown}", where=str(mpath), field="penalties",
                         fix=f"use {', '.join(PENALTY_KINDS)}")
    cpath = _safe_member(root, manifest.corpus, "corpus")
    corpus, corpus_sha = documents.load_corpus(cpath)
    kpath = _safe_member(root, manifest.key, "key")
    raw = (safejson.read_gzip_bytes(kpath, max_bytes=MAX_KEY_BYTES) if kpath.name.endswith(".gz")
           else safejson.read_bytes(kpath, max_bytes=MAX_KEY_BYTES))
    key = documents.validate_model(Key, safejson.loads(raw, where=str(kpath)), str(kpath))
    ids = {e.id for e in corpus.entries}
    seen: set[str] = set()
    for i, p in enumerate(key.points):
        if p.id in seen:
            raise InputError(f"point id {p.id!r} is duplicated", where=str(kpath), field=f"points[{i}].id")
        seen.add(p.id)
        missing = [a for a in p.paragraphs if a not in ids]
        if missing:
            raise InputError(f"point {p.id} addresses paragraphs {missing} that are not in the corpus",
                             where=str(kpath), field=f"points[{i}].paragraphs")
    return Bench(root=root, manifest=manifest, corpus=corpus, corpus_sha256=corpus_sha, key=key,
                 key_sha256=sha256_hex(raw))


# --------------------------------------------------------------------------------------------------------------------
# Parser

_CHECK_RE = re.compile(r'^\[\[\[CHECK (?P<id>[A-Za-z0-9_.-]+) (?P<verdict>ok|fail)(?: "(?P<reason>.*)")?\]\]\]$')
_FIND_RE = re.compile(r'^\[\[\[(?P<what>ADDITION|UNTRANSLATED) P(?P<para>[0-9]+) "(?P<quote>.+)"\]\]\]$')
END = "[[[END]]]"


@dataclass
class CheckpointAnswer:
    """A parsed answer: verdicts for the points it covers, judge-found additions/untranslated fragments."""

    verdicts: dict[str, tuple[bool, str | None]] = field(default_factory=dict)
    additions: list[tuple[int, str]] = field(default_factory=list)
    untranslated: list[tuple[int, str]] = field(default_factory=list)


def parse_checkpoints(text: str | None, expected: set[str], paragraphs: set[int]) -> CheckpointAnswer:
    """Parse a checkpoint answer strictly. Points of ``expected`` that are absent are simply not in ``verdicts``
    (the caller asks again for just those).

    Raises: JudgeParseError for an empty answer, a missing or non-final ``[[[END]]]``, any other line, a point not
    in ``expected``, a point answered twice, ``fail`` without a quoted reason, ``ok`` with one, or a paragraph
    address that does not exist.
    """
    if text is None or not text.strip():
        raise JudgeParseError("empty answer")
    lines = split_lines(text)
    if lines[-1] != END:
        if END in lines:
            raise JudgeParseError("text after [[[END]]]")
        raise JudgeParseError(f"no closing [[[END]]] line (answer cut off?); last line {lines[-1][:60]!r}")
    out = CheckpointAnswer()
    for line in lines[:-1]:
        m = _CHECK_RE.match(line)
        if m:
            pid, ok, reason = m.group("id"), m.group("verdict") == "ok", m.group("reason")
            if pid not in expected:
                raise JudgeParseError(f"verdict for point {pid[:32]!r} that was not asked")
            if pid in out.verdicts:
                raise JudgeParseError(f"point {pid} answered twice")
            if ok and reason is not None:
                raise JudgeParseError(f"point {pid}: 'ok' takes no reason")
            if not ok and not (reason or "").strip():
                raise JudgeParseError(f"point {pid}: 'fail' needs a quoted reason")
            out.verdicts[pid] = (ok, reason)
            continue
        m = _FIND_RE.match(line)
        if m:
            para = int(m.group("para"))
            if para not in paragraphs:
                raise JudgeParseError(f"{m.group('what')} names paragraph P{para}, which does not exist")
            (out.additions if m.group("what") == "ADDITION" else out.untranslated).append((para, m.group("quote")))
            continue
        if line == END:
            raise JudgeParseError("more than one [[[END]]] line")
        raise JudgeParseError(f"unexpected line {line[:60]!r}")
    return out


# --------------------------------------------------------------------------------------------------------------------
# Code-found penalties

_MARK_RE = re.compile(r"\*\*|__|`|\*|\{[A-Za-z0-9_.]*\}|%(?:\d+\$)?[sdif]")

LANGUAGE_SCRIPTS = {
    "ru": ["CYRILLIC"], "uk": ["CYRILLIC"], "bg": ["CYRILLIC"], "mk": ["CYRILLIC"], "sr": ["CYRILLIC"],
    "be": ["CYRILLIC"], "kk": ["CYRILLIC"], "el": ["GREEK"], "ar": ["ARABIC"], "fa": ["ARABIC"], "ur": ["ARABIC"],
    "he": ["HEBREW"], "hi": ["DEVANAGARI"], "mr": ["DEVANAGARI"], "th": ["THAI"], "ka": ["GEORGIAN"],
    "hy": ["ARMENIAN"], "ja": ["CJK", "HIRAGANA", "KATAKANA"], "zh": ["CJK"], "ko": ["HANGUL", "CJK"],
    "crk": ["CANADIAN"],
}
"""Target language → Unicode script name prefixes its text uses (LATIN is always allowed: names, brands)."""


def markup_tokens(text: str) -> Counter[str]:
    """Multiset of markup tokens: HTML/XML tags by name (``<b>``/``</b>``; :data:`mtboard.core.text.TAG`), ``**``, ``__``,
    `` ` ``, ``*``, ``{placeholder}`` and printf ``%s``/``%1$d``."""
    c: Counter[str] = Counter()
    for m in TAG.finditer(text):
        c[("</" if m.group(0).startswith("</") else "<") + m.group(1).lower() + ">"] += 1
    stripped = TAG.sub(" ", text)
    for m in _MARK_RE.finditer(stripped):
        c[m.group(0)] += 1
    return c


def _script(ch: str) -> str:
    try:
        return unicodedata.name(ch).split(" ")[0]
    except ValueError:
        return "UNKNOWN"


def foreign_script_blocks(text: str, allowed: list[str]) -> int:
    """Number of maximal runs of letters whose script (first word of the Unicode name) is not LATIN nor allowed."""
    ok = {"LATIN", *allowed}
    blocks, inside = 0, False
    for ch in text:
        if unicodedata.category(ch).startswith("L") and _script(ch) not in ok:
            if not inside:
                blocks += 1
            inside = True
        elif unicodedata.category(ch).startswith("L") or not ch.isspace():
            inside = False
        # whitespace between two foreign letters keeps the run going (one block: "他 说")
    return blocks


def code_penalties(bench: Bench, results: dict[int, EntryResult], target_language: str) -> dict[str, Any]:
    """Code-found penalty counts over the bench's paragraphs.

    Returns: {"lost_paragraph": n, "markup": n, "foreign_script": n, "extra_attempt": n, "lost": [ids],
    "detail": {kind: [paragraph ids]}}.
    """
    allowed = bench.manifest.allowed_scripts
    if allowed is None:
        allowed = LANGUAGE_SCRIPTS.get(primary(target_language), [])
    counts = {"lost_paragraph": 0, "markup": 0, "foreign_script": 0, "extra_attempt": 0}
    detail: dict[str, list[int]] = {k: [] for k in counts}
    lost: list[int] = []
    for entry in bench.corpus.entries:
        r = results.get(entry.id)
        if r is None or r.checks.outcome != Outcome.usable:
            counts["lost_paragraph"] += 1
            detail["lost_paragraph"].append(entry.id)
            lost.append(entry.id)
            continue
        if markup_tokens(entry.source) != markup_tokens(r.predicted):
            counts["markup"] += 1
            detail["markup"].append(entry.id)
        fs = foreign_script_blocks(r.predicted, allowed)
        if fs:
            counts["foreign_script"] += fs
            detail["foreign_script"].append(entry.id)
        extra = max(0, r.attempts - 1)
        if extra:
            counts["extra_attempt"] += extra
            detail["extra_attempt"].append(entry.id)
    return {**counts, "lost": lost, "detail": detail}


def run_score(n_points: int, passed: int, penalty_total: float) -> float:
    """100 × (passed − penalties) / points, clamped to [0, 100]."""
    return max(0.0, min(100.0, 100.0 * (passed - penalty_total) / n_points))


def mean_and_spread(scores: list[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (None for fewer than 2 runs)."""
    if not scores:
        return None, None
    return statistics.fmean(scores), (statistics.stdev(scores) if len(scores) >= 2 else None)


@register
class CheckpointsJudge:
    """Document-level checkpoint judge (one request per replicate, plus re-asks for missing points)."""

    kind: ClassVar[str] = "checkpoints"
    prompt_name: ClassVar[str] = "checkpoints"
    default_max_tokens: ClassVar[int] = 4096
    worst_score: ClassVar[float] = 0.0
    higher_is_better: ClassVar[bool] = True
    parser_version: ClassVar[str] = "checkpoints/1"
    default_runs: ClassVar[int] = DEFAULT_RUNS

    def variables(self, bench: Bench, results: dict[int, EntryResult], source_lang: str, target_lang: str,
                  point_ids: list[str], lost: set[int]) -> dict[str, Any]:
        """Template variables: paragraphs (address, source, translation or None when lost) and the points asked."""
        paras = [{"address": f"P{e.id}", "source": e.source,
                  "translation": None if e.id in lost else results[e.id].predicted} for e in bench.corpus.entries]
        wanted = set(point_ids)
        points = [{"id": p.id, "area": p.area, "paragraphs": ", ".join(f"P{a}" for a in p.paragraphs),
                   "correct": p.correct} for p in bench.key.points if p.id in wanted]
        return {"source_lang": language_name(source_lang), "target_lang": language_name(target_lang),
                "paragraphs": paras, "points": points}

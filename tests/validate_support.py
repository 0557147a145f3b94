"""Shared helpers for the validation tests (issue 6): a REAL run card and a scratch repository around it.

The card is produced by the real pipeline on a small slice of a real corpus: the Apertium backend (/usr/bin/apertium)
translates the first N development entries of corpora/mtb-en-es-dev.json through the runner's translation phase,
then :func:`mtboard.run.runner.build_card` scores and seals it — the function ``mtboard.run.runner.finish`` calls, with the
card's ``elapsed_seconds`` equal to the time scoring used (the rule the validator recomputes with). Nothing here is hand-made evaluation data.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable

from mtboard.core import canonical
from mtboard.score.card import compute_fingerprint
from mtboard.core.documents import card_bytes, card_json, seal
from mtboard.core.schema import RunCard

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpora" / "mtb-en-es-dev.json"
FIXED_NOW = None  # validators use the real clock; cards are made "now"


SHARED_DIR: Path | None = None
"""A folder every pytest-xdist worker of the run shares (set by tests/conftest.py; None outside pytest): each card is
built once per run and read from there by the other workers, instead of once per worker."""


def _shared(key: str, build: Callable[[], bytes]) -> bytes:
    """``build()``'s bytes, built once per run under a file lock in :data:`SHARED_DIR` (or just built when unset)."""
    if SHARED_DIR is None:
        return build()
    from filelock import FileLock

    path = SHARED_DIR / f"{key}.json"
    with FileLock(f"{path}.lock"):
        if path.is_file():
            return path.read_bytes()
        data = build()
        part = path.with_suffix(".part")
        part.write_bytes(data)
        part.replace(path)
        return data


@functools.lru_cache(maxsize=4)
def _build(limit: int | None, fst: bool | None, runs: int = 1, corpus: Path = CORPUS) -> bytes:
    key = f"real-{limit}-{fst}-{runs}-{hashlib.sha256(corpus.read_bytes()).hexdigest()[:16]}"
    return _shared(key, lambda: _build_card(limit, fst, runs, corpus))


def _build_card(limit: int | None, fst: bool | None, runs: int, corpus: Path) -> bytes:
    import tempfile

    from mtboard.score import card as card_mod
    from mtboard.run import runner

    work_dir = Path(tempfile.mkdtemp(prefix="mtboard-validate-card-"))
    settings = runner.RunSettings(corpus_path=corpus, method="apertium:eng-spa", limit=limit, work_dir=work_dir,
                                  runs=runs)
    plan = runner.prepare(settings)
    translated = asyncio.run(runner.translate_all(plan))
    saved, card_mod.FST_MODE = card_mod.FST_MODE, fst
    try:  # the card's elapsed_seconds is the unrounded translation time (what the validator recomputes with)
        card, _ = runner.build_card(translated, elapsed_seconds=translated.elapsed_seconds)
    finally:
        card_mod.FST_MODE = saved
    shutil.rmtree(work_dir, ignore_errors=True)
    return card_bytes(card)


def real_card_bytes(limit: int = 12, *, fst: bool | None = None, runs: int = 1) -> bytes:
    """Canonical bytes of a sealed real Apertium card over the first ``limit`` development entries (cached).

    ``fst``: None = the runner's behaviour (use the installed Spanish analyser: profile A); False = score without FST
    (profile B, as on a machine without the analyser) — faster to re-validate, used by the large tamper suite.
    ``runs``: replicate runs (``--runs``; Apertium is deterministic, so every replicate is the same translation).
    """
    return _build(limit, fst, runs)


MINI_DEV_ENTRIES = 8
"""Development entries kept in the mini corpus (:func:`mini_corpus`)."""


@functools.lru_cache(maxsize=1)
def mini_corpus() -> Path:
    """A trimmed copy of the real development corpus (the same envelope, its first :data:`MINI_DEV_ENTRIES`
    development entries and first 2 diagnostic ones, written in the file's own JSON layout) in a temporary folder
    of its own, under the real file's name: a corpus whose whole development segment is small, so that a
    **full-segment** card (no ``--limit``: the leaderboard case) is cheap to build and validate. Real human
    translations only; nothing is invented. Cached per process."""
    import tempfile

    data = json.loads(CORPUS.read_bytes())
    dev = [e for e in data["entries"] if e["segment"] == "development"][:MINI_DEV_ENTRIES]
    diag = [e for e in data["entries"] if e["segment"] == "diagnostic"][:2]
    data["entries"] = sorted(dev + diag, key=lambda e: e["id"])
    folder = Path(tempfile.mkdtemp(prefix="mtboard-mini-corpus-"))
    path = folder / CORPUS.name
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def mini_full_card_bytes(*, fst: bool | None = False) -> bytes:
    """A sealed real Apertium card over the **whole** development segment of :func:`mini_corpus` (no limit; profile
    B unless ``fst`` is None). Cached per process, like :func:`real_card_bytes`."""
    return _build(None, fst, 1, mini_corpus())


def make_mini_repo(base: Path, cards: list[bytes] | None = None) -> Path:
    """:func:`make_repo` around :func:`mini_corpus` instead of the real corpus file."""
    return make_repo(base, cards, corpus=mini_corpus())


MQM_CLEAN = "Critical:\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"
MQM_ERRORS = ('Critical:\nno-error\nMajor:\naccuracy/mistranslation - "la"\nMinor:\nfluency/punctuation - ","\n'
              "contextBehavior: unclear")
MQM_BROKEN = "**Critical:**\nno-error\nMajor:\nno-error\nMinor:\nno-error\ncontextBehavior: unclear"
RUBRIC_OK = "adequacy: 3\npragmatics: 4\nfluency: 2\nflags: NAME\njustification: mostly right"
"""Scripted judge answers (hand-written; the judge is a fake on purpose: it answers what the test scripts)."""


@functools.lru_cache(maxsize=2)
def judged_card_bytes(limit: int = 12) -> bytes:
    """A real Apertium card (profile B) judged by GEMBA-MQM and the rubric through the real judging code, with a
    scripted judge server answering: MQM clean, with a major and a minor error, then three unparsable answers (a
    failed judgement), in turn; the rubric always ``3/4/2``. Canonical bytes, sealed."""
    return _shared(f"judged-{limit}", lambda: _judge(limit))


def _judge(limit: int) -> bytes:
    import itertools
    import tempfile

    from judges_support import ScriptedServer
    from mtboard.core.documents import loads_card
    from mtboard.judges import run_judges
    from mtboard.llm import LLMClient
    from mtboard.validate.binding import expected_entries
    from mtboard.core.documents import load_corpus

    card = loads_card(real_card_bytes(limit, fst=False), "card")
    corpus, _ = load_corpus(CORPUS)
    mqm = itertools.cycle([MQM_CLEAN, MQM_ERRORS, MQM_BROKEN, MQM_BROKEN, MQM_BROKEN])

    def script(body):
        from judges_support import admission_answer

        known = admission_answer(body)  # the admission items (issue 39) get their known answers; the cycle is the card's
        if known is not None:
            return known
        system = " ".join(m.get("content", "") for m in body.get("messages", []))
        return RUBRIC_OK if "adequacy" in system else next(mqm)

    work = Path(tempfile.mkdtemp(prefix="mtboard-judged-card-"))
    with ScriptedServer(script, model="scripted-judge") as srv:
        judged = run_judges(card, corpus, ["gemba-mqm=openai:scripted-judge", "rubric=openai:scripted-judge"],
                            workdir=work, allow_self_judge=False, concurrency=1,
                            client_factory=lambda: LLMClient(srv.url, None, max_retries=0))
    shutil.rmtree(work, ignore_errors=True)
    assert expected_entries(judged, corpus)
    return card_bytes(judged)


NEURAL_SCORES = (0.8123, 0.7, 0.6543, 0.9, 0.31, 0.5, 0.55, 0.6, 0.61, 0.62, 0.9999, 0.1234)
"""Hand-made per-entry COMET-22 values for :func:`neural_card_bytes` (a model's output stand-in; the model path is
tested on a real tiny COMET model in tests/test_neural_comet.py)."""


@functools.lru_cache(maxsize=1)
def neural_card_bytes() -> bytes:
    """The 12-entry Apertium card (profile B) with COMET-22 values (:data:`NEURAL_SCORES`) put on it by the real
    :func:`mtboard.score.neural_card.apply_neural`. Canonical bytes, sealed."""
    from mtboard.core.documents import loads_card
    from mtboard.score.metrics import neural
    from mtboard.score.neural_card import apply_neural

    card = loads_card(real_card_bytes(12, fst=False), "card")
    commit = "2760a223ac957f30acfb18c8aa649b01cf1d75f2"
    versions = {"unbabel-comet": "2.2.7", "torch": "2.13.0+cpu", "transformers": "4.57.6",
                "huggingface-hub": "0.36.2", "pytorch-lightning": "2.6.6"}
    run = neural.NeuralRun(key="comet22", repo_id="Unbabel/wmt22-comet-da", revision=commit, commit=commit,
                           encoder="xlm-roberta-large", batch_size=16, device="cpu", versions=versions,
                           scores=list(NEURAL_SCORES), raw_scores=list(NEURAL_SCORES),
                           score=neural.aggregate(NEURAL_SCORES), system_score=None)
    return card_bytes(apply_neural(card, [run]))


def reseal(data: dict[str, Any]) -> dict[str, Any]:
    """Recompute run_card_hash over the (mutated) card JSON — what a cheater would do."""
    out = copy.deepcopy(data)
    out["run_card_hash"] = canonical.run_card_hash(out)
    return out


def refingerprint_and_reseal(data: dict[str, Any]) -> dict[str, Any]:
    """Re-derive the fingerprint from the mutated fields and re-seal (a more careful cheater)."""
    card = RunCard.model_validate_json(json.dumps(data))
    card = card.model_copy(update={"fingerprint": compute_fingerprint(card), "run_card_hash": ""})
    return card_json(seal(card))


def set_at(data: dict[str, Any], parts: tuple, value: Any) -> dict[str, Any]:
    """A deep copy of ``data`` with the value at the key/index path ``parts`` replaced by ``value``."""
    out = copy.deepcopy(data)
    cur = out
    for p in parts[:-1]:
        cur = cur[p]
    cur[parts[-1]] = value
    return out


def first_schema_valid_edit(data: dict[str, Any], parts: tuple, value: Any, candidates: list[Any]) -> dict | None:
    """A copy of the card ``data`` with the value at ``parts`` (now ``value``) replaced by the first of ``candidates``
    that differs from it and still passes the :class:`RunCard` schema (what a cheater who re-seals would write); None
    when none does."""
    cand = first_schema_valid_candidate(data, parts, value, candidates)
    return None if cand is NO_EDIT else set_at(data, parts, cand)


NO_EDIT = object()


def first_schema_valid_candidate(data: dict[str, Any], parts: tuple, value: Any, candidates: list[Any]) -> Any:
    """The candidate :func:`first_schema_valid_edit` would write, or ``NO_EDIT``: each is probed on a copy of the path
    only (:func:`path_copy`), never on a deep copy of the card."""
    from pydantic import ValidationError

    for cand in candidates:
        if cand == value and type(cand) is type(value):
            continue
        try:
            RunCard.model_validate_json(json.dumps(path_copy(data, parts, cand)))
        except (ValidationError, ValueError):
            continue
        return cand
    return NO_EDIT


def path_copy(data: Any, parts: tuple, value: Any) -> Any:
    """``data`` with the value at ``parts`` replaced: the dicts and lists along the path copied, everything else
    shared with ``data`` — for reading only (a deep copy of a card per candidate made collecting
    test_validate_binding.py and test_validate_tamper.py cost ~2 CPU-s in every worker)."""
    if not parts:
        return value
    out = copy.copy(data)
    out[parts[0]] = path_copy(data[parts[0]], parts[1:], value)
    return out


def validate_resealed(root: Path, ctx: Any, data: dict[str, Any]) -> Any:
    """Validate ``data`` as a cheater would file it: re-fingerprinted, re-sealed and placed at its canonical path under
    ``root`` (removed again afterwards). Returns the card report; asserts that the seal, fingerprint and file name
    checks passed, so every problem reported is about the edit itself."""
    from mtboard import validate as V

    dest = place(root, dump(refingerprint_and_reseal(data)))
    try:
        report = V.validate_card(dest, ctx)
    finally:
        dest.unlink()
    failed = {p.check for p in report.problems}
    assert not failed & {"run_card_hash", "fingerprint", "file_name"}, report.problems
    return report


def dump(data: dict[str, Any]) -> bytes:
    """Canonical bytes + newline (the file format of a card)."""
    return canonical.canonical_bytes(data) + b"\n"


def make_repo(base: Path, cards: list[bytes] | None = None, *, corpus: Path = CORPUS) -> Path:
    """A scratch repository: corpora/ with the real corpus file (or ``corpus``), submissions/ with the given cards at
    their canonical paths. Returns the root."""
    from mtboard.core.documents import loads_card
    from mtboard.validate import canonical_relpath

    root = base / "repo"
    (root / "corpora").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(corpus, root / "corpora" / corpus.name)
    (root / "submissions").mkdir(exist_ok=True)
    for raw in cards or []:
        rel = canonical_relpath(loads_card(raw, "card"))
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(raw)
    return root


def place(root: Path, raw: bytes) -> Path:
    """Write card bytes at their canonical path under ``root`` (schema-valid cards) and return the path."""
    from mtboard.core.documents import loads_card
    from mtboard.validate import canonical_relpath

    dest = root / canonical_relpath(loads_card(raw, "card"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(raw)
    return dest

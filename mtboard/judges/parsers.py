"""The versioned registry of judge-answer parsers: every parser version a card may name, so that the validator can
parse each stored raw answer again with the parser that decided it (issue 32, item 4).

A judge summary records its ``parser`` (the judge class's ``parser_version``, e.g. ``gemba-mqm-context/1
(uncapped)``). :data:`ENTRY_PARSERS` maps ``(kind, version)`` to the pure parse function of that version
(text → :class:`~mtboard.core.schema.JudgeVerdict` with status ``scored``, or
:class:`~mtboard.judges.base.JudgeParseError`). When a parser's behaviour changes, the judge class gets a new
``parser_version`` and the old function stays here under its old version, so that cards judged before keep
re-deriving exactly as they were judged.

A version not in the registry is **refused** by the validator (:func:`entry_parser` returns None; the check names
the field and the known versions), never accepted as declared: a verdict nothing can re-derive would reach the
leaderboard as a score, while re-judging costs nothing (``mtboard judge WORKDIR`` answers every request from the work
directory's judge cache, :mod:`mtboard.judges.store`, whose key does not depend on the parser). No committed card
carries judges (issue 32: checked in ``submissions/``), so only the current versions are registered.

The checkpoint judge's answers are document-level and are parsed against the benchmark key, which the card does
not hold (the key is kept out of the card and compressed, BookTrans): its version is known
(:data:`CHECKPOINT_PARSERS`) but its answers are not parsed again here (docs/judges.md).
"""

from __future__ import annotations

from collections.abc import Callable

from mtboard.core.schema import JudgeVerdict
from mtboard.judges.checkpoints import CheckpointsJudge
from mtboard.judges.gemba_mqm import GembaMqmJudge, parse_mqm
from mtboard.judges.rubric import RubricJudge, parse_rubric

EntryParser = Callable[[str | None], JudgeVerdict]
"""A per-entry judge's parser: the raw answer → a ``scored`` verdict, or JudgeParseError (fail closed)."""

ENTRY_PARSERS: dict[tuple[str, str], EntryParser] = {
    (GembaMqmJudge.kind, GembaMqmJudge.parser_version): parse_mqm,
    (RubricJudge.kind, RubricJudge.parser_version): parse_rubric,
}
"""``(judge kind, parser version)`` → parse function, for every version a card may name (current ones included)."""

CHECKPOINT_PARSERS: frozenset[str] = frozenset({CheckpointsJudge.parser_version})
"""Parser versions of the checkpoint judge a card may name (:mod:`mtboard.judges.checkpoints`)."""


def entry_parser(kind: str, version: str | None) -> EntryParser | None:
    """The parse function of ``kind``'s parser ``version``; None when this mtboard does not know that version."""
    if version is None:
        return None
    return ENTRY_PARSERS.get((kind, version))


def known_versions(kind: str) -> list[str]:
    """The parser versions this mtboard knows for ``kind`` (sorted), for error messages."""
    if kind == "checkpoints":
        return sorted(CHECKPOINT_PARSERS)
    return sorted(v for k, v in ENTRY_PARSERS if k == kind)

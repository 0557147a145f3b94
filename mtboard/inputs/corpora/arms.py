"""Corpus views for translation in context (issue 40 item 2): the *arms* and the *history length* of the JA→EN
screen-translator write-up (``../shared/spec/screen-translator-bench-ja-en.txt``, method steps 4–5: "12 scenes × 0,
3, 6, 12 and 24 lines of history" and "250 bare lines, plus the 31 scenes bare, with context, and in full").

:func:`arm_view` is a pure function: given a segment's entries (corpus order), an arm and a history length, it returns
the entries a run translates. The runner (:func:`mtboard.run.runner.prepare`) and the validator
(:func:`mtboard.validate.binding.expected_entries`) call the same function, so a card is recomputed on exactly the
items it was run on. ``--limit N`` applies *after* the view: the first N lines, or the first N scenes.

Arms (:data:`ARMS`):

* ``lines`` — every line alone, no history (the write-up's bare lines). Ids unchanged.
* ``scene-bare`` — one item per scene: its last line, no history.
* ``scene-context`` — one item per scene: its last line with its own ``history`` (the preceding lines of its scene,
  oldest first, as the corpus records them), cut to the last ``history`` lines when a history length is given.
* ``scene-full`` — one item per scene: the scene's corpus entries as one segment (the lines the corpus keeps as
  entries; lines kept only as history have no reference and are left out): the entries' sources joined with
  ``"\\n"`` (corpus order), their references likewise; no history, no variants; the glossary terms of its lines (each
  once, first occurrence first); ``difficulty`` the highest of its lines'; ``added`` the latest of its lines' dates
  (unknown when one is unknown); the other labels are its last line's; ``origin``, ``notes``,
  ``morphological_analysis`` and ``variant_class`` are dropped (they describe one line).

No arm (``None``): the entries as the corpus stores them, history included; a history length then cuts every
entry's history to its last N lines.

A *scene* is the entries with the same ``scene`` id (the optional ``Entry.scene``; read with :func:`scene_of`, so a
corpus schema without the field works: then no entry has a scene), in order of first appearance; only the given
entries (the run's segment) count. A scene item's id is the id of the scene's **last line**, so the ids are stable
and the four scene items of one scene share one id across arms (the arm is in the card's fingerprint). Entries
without a scene id belong to no scene and are left out of the scene arms.

History length ``N`` (0–:data:`MAX_HISTORY`): keep the last N lines of the history (0: none). It applies only to
the arms that carry history (``scene-context`` and no arm); the bare arms refuse it.

Raises: ConfigError (one line naming ``--arm``/``--history`` and the fix) for an unknown arm, a history length with
a bare arm or out of range, and a scene arm over entries none of which has a scene id.
"""

from __future__ import annotations

from typing import Literal, get_args

from mtboard.core.errors import ConfigError
from mtboard.core.schema import Entry, GlossaryTerm

Arm = Literal["lines", "scene-bare", "scene-context", "scene-full"]
ARMS: tuple[str, ...] = get_args(Arm)
"""The arms, in the write-up's order (bare lines; scenes bare, with context, in full)."""
HISTORY_ARMS: frozenset[str | None] = frozenset({None, "scene-context"})
"""Arms that carry history (a history length applies to them; the others are bare)."""
SCENE_ARMS: frozenset[str] = frozenset({"scene-bare", "scene-context", "scene-full"})
MAX_HISTORY = 1000
"""Largest history length (lines): far above any scene (the write-up's largest is 24)."""
SCENE_JOIN = "\n"
"""What joins a scene's lines in the ``scene-full`` arm (source and reference alike)."""


def scene_of(entry: Entry) -> str | None:
    """The entry's scene id, or None (also when the corpus schema has no ``scene`` field)."""
    scene = getattr(entry, "scene", None)
    return scene if isinstance(scene, str) and scene else None


def check_arm(arm: str | None, history: int | None) -> None:
    """Refuse an arm/history pair :func:`arm_view` cannot apply (module docstring). Raises: ConfigError."""
    if arm is not None and arm not in ARMS:
        raise ConfigError(f"unknown arm {arm[:40]!r}", field="--arm", fix=f"use one of {', '.join(ARMS)}")
    if history is not None:
        if isinstance(history, bool) or not isinstance(history, int) or not 0 <= history <= MAX_HISTORY:
            raise ConfigError(f"history length {history!r} is not a whole number of lines 0–{MAX_HISTORY}",
                              field="--history", fix="give the number of history lines to keep, e.g. --history 6")
        if arm not in HISTORY_ARMS:
            raise ConfigError(f"the {arm} arm translates lines without history: a history length does not apply",
                              field="--history", fix="drop --history, or use --arm scene-context")


def sends_history(arm: str | None, history: int | None) -> bool:
    """Whether a run with ``arm``/``history`` asks for history to be sent: a history length above 0, or the
    ``scene-context`` arm with its whole history. (No arm and no length: the corpus as stored, as before issue 40.)"""
    return (history is not None and history > 0) or (arm == "scene-context" and history is None)


def history_not_applicable(arm: str | None, history: int | None, *, method: str, raw: bool,
                           prompt: str | None, prompt_uses_history: bool) -> str | None:
    """Why history does not apply to a run (None when it does, or when none is asked for: :func:`sends_history`):
    ``"history does not apply to apertium: it translates the raw source text"`` for an engine without a prompt
    (Apertium, the baselines), or ``"… prompt few-shot-completion has no history variable"``. The runner refuses such a
    run; a sweep lists such a cell as not applicable instead of running it."""
    if not sends_history(arm, history):
        return None
    if raw:
        return f"history does not apply to {method}: it translates the raw source text, without context"
    if not prompt_uses_history:
        return f"history does not apply to prompt {prompt}: the template has no history variable"
    return None


def scenes(entries: list[Entry]) -> list[tuple[str, list[Entry]]]:
    """``(scene id, its entries in corpus order)`` in order of first appearance; entries without a scene left out."""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        s = scene_of(e)
        if s is not None:
            groups.setdefault(s, []).append(e)
    return list(groups.items())


def _cut(history: list[str], n: int | None) -> list[str]:
    if n is None:
        return list(history)
    return list(history[-n:]) if n > 0 else []


def _joined(lines: list[Entry]) -> Entry:
    """A ``scene-full`` item (module docstring)."""
    last = lines[-1]
    terms: list[GlossaryTerm] = []
    for e in lines:
        for t in e.glossary:
            if t not in terms:
                terms.append(t)
    levels = [e.difficulty for e in lines if e.difficulty is not None]
    dates = [e.added for e in lines]
    return last.model_copy(update={
        "source": SCENE_JOIN.join(e.source for e in lines),
        "reference": SCENE_JOIN.join(e.reference for e in lines),
        "history": [], "variants": [], "variant_class": None, "glossary": terms,
        "difficulty": max(levels) if levels else None,
        "added": max(dates) if dates and all(d is not None for d in dates) else None,  # type: ignore[type-var]
        "origin": None, "notes": None, "morphological_analysis": None})


def _check_reach(items: list[Entry], history: int | None) -> None:
    """Refuse a history length that no item reaches (issue 40 review): ``--history 100`` on a corpus whose longest
    history is 24 lines sends what ``--history 24`` sends, so its card would carry a length nothing was sent with.
    Raises: ConfigError."""
    if not history or not items:
        return
    longest = max(len(e.history) for e in items)
    if history > longest:
        raise ConfigError(f"history length {history} is above the longest history of the selected items "
                          f"({longest} line{'s' if longest != 1 else ''})", field="--history",
                          fix=f"give --history {longest} or less (the corpus keeps at most {longest} earlier lines)")


def arm_view(entries: list[Entry], arm: str | None = None, history: int | None = None) -> list[Entry]:
    """The entries a run with ``arm`` and ``history`` translates, from a segment's ``entries`` (module docstring).

    Args: ``entries``: corpus order (one segment); ``arm``: one of :data:`ARMS` or None (as stored); ``history``:
    0–:data:`MAX_HISTORY` lines kept, None keeps all. Returns new entries (the inputs are not changed).
    Raises: ConfigError (:func:`check_arm`; a scene arm when no entry has a scene id; a history length above the
    longest history the view's items have: a label the inputs cannot carry, e.g. 100 where the corpus keeps 24)."""
    check_arm(arm, history)
    if arm is None:
        _check_reach(entries, history)
        return [e if history is None else e.model_copy(update={"history": _cut(e.history, history)})
                for e in entries]
    if arm == "lines":
        return [e.model_copy(update={"history": []}) for e in entries]
    groups = scenes(entries)
    if not groups:
        raise ConfigError(f"the {arm} arm needs scene ids, and none of the {len(entries)} entries has one",
                          field="--arm", fix="use --arm lines, or a dialogue corpus whose entries carry `scene`")
    if arm == "scene-bare":
        return [lines[-1].model_copy(update={"history": []}) for _, lines in groups]
    if arm == "scene-context":
        _check_reach([lines[-1] for _, lines in groups], history)
        return [lines[-1].model_copy(update={"history": _cut(lines[-1].history, history)}) for _, lines in groups]
    return [_joined(lines) for _, lines in groups]


def describe(arm: str | None, history: int | None) -> str:
    """A short label: ``scene-context · 6 lines``, ``lines``, ``as stored``."""
    text = arm or "as stored"
    if history is not None:
        text += f" · {history} line{'s' if history != 1 else ''} of history"
    return text


__all__ = ["ARMS", "Arm", "HISTORY_ARMS", "MAX_HISTORY", "SCENE_ARMS", "SCENE_JOIN", "arm_view", "check_arm",
           "describe", "history_not_applicable", "scene_of", "scenes", "sends_history"]

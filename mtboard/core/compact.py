"""Holding many parsed documents at once: equal parts shared instead of repeated (issue 35, "memory").

A site build holds every accepted run card until it has rendered the last page. A 355-entry card parsed by pydantic
takes ~2.55 MiB (measured on the synthetic cards of ``bench/site_scale.py``; the file is ~0.45 MiB), so 10,000 cards
would need ~25 GB. More than half of that is pydantic's record of which fields each model was given
(``__pydantic_fields_set__``, the set behind :attr:`pydantic.BaseModel.model_fields_set`): one ``set`` of ~40 field
names per entry, ~2 KiB each, although nearly every entry of a card has the same one. Another ~0.1 MiB is the corpus's
source and reference text, repeated by every card of that corpus.

:func:`share` replaces, inside one document, each model's fields set by one :class:`SharedFields` shared by every model
of that class with the same fields, and each string equal to a known text (a corpus's sources and references) by that
text's one object. Values do not change: every field reads the same, ``model_dump``/``model_dump_json`` give the same
output (``exclude_unset`` included), equality holds, and a pickled document comes back shared the same way.

A shared document is meant to be read. Assigning a field the model was given works as on any model (its fields set
does not change). Assigning one it was not given would add that name to the set of every model sharing it: the set
refuses with :class:`TypeError` — but pydantic stores the value before it records the field, so the model then holds
the new value: discard it. ``model_copy(deep=True)`` and ``copy.deepcopy`` give plain sets throughout; a shallow
``model_copy(update=...)`` gives the copy its own set (its nested models stay shared, as pydantic shares them). A
model class with ``validate_assignment`` keeps its own sets (pydantic-core records an assigned field through the C
API, which no subclass can refuse). Measured: 2.55 → 1.15 MiB per card, ~2.3 ms per card.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_set = object.__setattr__

MAX_SETS_PER_CLASS = 32
"""Distinct fields sets kept per model class (a card's entries have one to a few: the optional fields a run wrote);
comparing against each is what bounds the cost of :meth:`Sharing.fields`."""


def _holds_model(annotation: Any, seen: tuple[Any, ...] = ()) -> bool:
    """Whether a field annotated ``annotation`` can hold a pydantic model (directly, or in a list, dict or union)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    if annotation in seen:
        return False
    return any(_holds_model(a, (*seen, annotation)) for a in typing.get_args(annotation))


def _is_text(annotation: Any) -> bool:
    """Whether a field annotated ``annotation`` holds a string (``str`` or ``str | None``)."""
    return annotation is str or (isinstance(annotation, types.UnionType) and str in typing.get_args(annotation)
                                 and all(a in (str, type(None)) for a in typing.get_args(annotation)))


class SharedFields(set):
    """A fields set shared by many models: a ``set`` (pydantic-core's ``exclude_unset`` serialiser requires one) that
    refuses to change, and is copied (as pydantic's ``model_copy`` and ``copy`` do) into a plain mutable ``set``, so a
    copy can be given fields again. Pickled as itself (``set``'s own reduction), so one object stays one object.

    Raises: TypeError from ``add``/``update`` of a name it does not hold and from every other mutating method
    (``discard``, ``remove``, ``pop``, ``clear``, the in-place operators …)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("this model is shared by a held document (mtboard.core.compact) and read-only: "
                        "change a model_copy(deep=True) of it instead")

    def add(self, name: Any) -> None:
        if name not in self:
            self._refuse()

    def update(self, *names: Any) -> None:
        if any(n not in self for group in names for n in group):
            self._refuse()

    discard = remove = pop = clear = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)


class Sharing:
    """What :func:`share` shares across documents: one :class:`SharedFields` per (model class, fields given), and ``texts``
    (each known string by itself; a document's equal string is replaced by it). One ``Sharing`` per build."""

    def __init__(self, texts: Mapping[str, str] | None = None) -> None:
        self.texts: Mapping[str, str] = texts or {}
        self._fields: dict[type, list[SharedFields] | None] = {}
        """Per model class, its known sets; None for a class with ``validate_assignment`` (keeps its own)."""
        self._plans: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def plan(self, cls: type[BaseModel]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(fields that can hold a model, string fields)`` of ``cls``, from its annotations (made once a class)."""
        plan = self._plans.get(cls)
        if plan is None:
            fields = cls.model_fields.items()
            plan = self._plans[cls] = (tuple(n for n, f in fields if _holds_model(f.annotation)),
                                       tuple(n for n, f in fields if _is_text(f.annotation)))
        return plan

    def fields(self, model: BaseModel) -> set[str]:
        """The shared :class:`SharedFields` equal to ``model``'s fields set: one of the class's known sets (at most
        :data:`MAX_SETS_PER_CLASS` are kept; a class with more distinct sets gets unshared copies past them); the
        model's own set when its class has ``validate_assignment`` (module docstring)."""
        given = model.__pydantic_fields_set__
        cls = type(model)
        try:
            known = self._fields[cls]
        except KeyError:
            known = self._fields[cls] = None if cls.model_config.get("validate_assignment") else []
        if known is None:
            return given
        for shared in known:
            if shared == given:
                return shared
        shared = SharedFields(given)
        if len(known) < MAX_SETS_PER_CLASS:
            known.append(shared)
        return shared


def share(document: BaseModel, sharing: Sharing) -> BaseModel:
    """Share ``document``'s equal parts (module docstring) in place and return it.

    Walks every model reachable through fields whose annotation can hold one (lists and dicts included); a string
    field whose value equals a key of ``sharing.texts`` gets that key's object. ``JsonValue`` fields (e.g. a plugin's
    metrics) are left as they are. Raises nothing for a valid document; afterwards the document is to be read only
    (module docstring)."""
    stack: list[Any] = [document]
    texts = sharing.texts
    fields, plan, push = sharing.fields, sharing.plan, stack.append  # bound once: ~1,600 models a 355-entry card
    holders = (BaseModel, list, dict)
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            _set(item, "__pydantic_fields_set__", fields(item))
            values = item.__dict__
            nested, strings = plan(type(item))
            if texts:
                for name in strings:
                    value = values.get(name)
                    if value is not None:
                        known = texts.get(value)
                        if known is not None:
                            values[name] = known
            for name in nested:
                value = values.get(name)
                if value is not None:
                    push(value)
        elif isinstance(item, list):
            stack.extend([v for v in item if isinstance(v, holders)])
        elif isinstance(item, dict):
            stack.extend([v for v in item.values() if isinstance(v, holders)])
    return document

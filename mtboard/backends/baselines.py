"""Reference baselines ``echo:`` and ``empty:`` (issue 3, backend 4; method class ``baseline``).

* ``echo`` returns the source unchanged: what "no translation at all" scores. The mechanical checks must flag every
  entry as *source returned untranslated* (JA→EN write-up, output compliance), so its composite shows how much a
  metric rewards copying (chrF++ is not 0 for shared names, numbers and markup).
* ``empty`` returns nothing: every entry must come out as *no usable output* with score 0.

Both take the raw source (no prompt), cost nothing, and are labelled as baselines in summaries and on the
leaderboard — never ``raw-llm``. The part after the colon is optional and ignored (``echo:`` = ``echo:any``).
"""

from __future__ import annotations

import time
from typing import ClassVar, Literal

from mtboard.backends.base import Backend, TranslateRequest
from mtboard.core.schema import BackendFacts, MethodClass, TranslationRecord


class _Baseline(Backend):
    method_class: ClassVar[MethodClass] = MethodClass.baseline
    model_optional: ClassVar[bool] = True
    prompt_format: ClassVar[Literal["raw"] | None] = "raw"
    preferred_batch_size: ClassVar[int] = 1000
    default_concurrency: ClassVar[int] = 1

    @classmethod
    def model_slug_for(cls, model: str, effort: str | None = None) -> str:
        """``baseline/<name>`` whatever follows the colon."""
        return f"baseline/{cls.name}"

    def describe(self) -> BackendFacts:
        """api_provider ``baseline``, model_id = the backend name, model_slug ``baseline/<name>``."""
        return BackendFacts(api_provider="baseline", model_id=self.name, model_slug=self.model_slug_for(""))

    def output(self, source: str) -> str:
        raise NotImplementedError

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        out = []
        for r in requests:
            t0 = time.perf_counter()
            text = self.output(r.source)
            out.append(TranslationRecord(run_index=r.run_index, entry_id=r.entry_id, raw_predicted=text,
                                         latency_s=time.perf_counter() - t0, model_id=self.name))
        return out


class EchoBaseline(_Baseline):
    """Returns the source text unchanged."""

    name: ClassVar[str] = "echo"
    label: ClassVar[str | None] = "baseline: echo (source returned unchanged)"

    def output(self, source: str) -> str:
        return source


class EmptyBaseline(_Baseline):
    """Returns an empty string for every entry."""

    name: ClassVar[str] = "empty"
    label: ClassVar[str | None] = "baseline: empty (no output)"

    def output(self, source: str) -> str:
        return ""


__all__ = ["EchoBaseline", "EmptyBaseline"]

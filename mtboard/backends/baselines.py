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
from typing import Any, ClassVar

from mtboard.backends.base import BackendOptions, MethodSpec, TranslateRequest, register
from mtboard.schema import MethodClass, TranslationRecord


class _Baseline:
    method_class: ClassVar[MethodClass] = MethodClass.baseline
    model_optional: ClassVar[bool] = True
    prompt_format: ClassVar[str] = "raw"
    preferred_batch_size: ClassVar[int] = 1000
    default_concurrency: ClassVar[int] = 1
    name: ClassVar[str]
    label: ClassVar[str]

    def __init__(self, spec: MethodSpec | None = None, options: BackendOptions | None = None, **_: Any):
        self.spec = spec

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        """api_provider ``baseline``, model_id = the backend name, model_slug ``baseline/<name>``."""
        return {"api_provider": "baseline", "model_id": self.name, "model_slug": f"baseline/{self.name}",
                "engine_version": None}

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


@register
class EchoBaseline(_Baseline):
    """Returns the source text unchanged."""

    name: ClassVar[str] = "echo"
    label: ClassVar[str] = "baseline: echo (source returned unchanged)"

    def output(self, source: str) -> str:
        return source


@register
class EmptyBaseline(_Baseline):
    """Returns an empty string for every entry."""

    name: ClassVar[str] = "empty"
    label: ClassVar[str] = "baseline: empty (no output)"

    def output(self, source: str) -> str:
        return ""


__all__ = ["EchoBaseline", "EmptyBaseline"]

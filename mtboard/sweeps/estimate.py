"""Token and cost estimate of a sweep before anything is sent (spec §10.1: run cost = entries × calls per entry ×
cost per call; §10.2: sweep cost = Σ run costs).

Per cell, from the corpus slice the cell covers:

* **prompt tokens** — every entry's prompt rendered with the cell's template (:meth:`mtboard.inputs.prompts.Prompt.render`:
  the few-shot examples, the instructions and the source), counted with the model's own tokenizer where a local one
  is available (a GGUF file: llama-cpp-python loads only its vocabulary, ``vocab_only=True``, and tokenizes as the
  server does, with the BOS token), otherwise with a chars-per-token ratio for the text's script
  (:data:`CHARS_PER_TOKEN`, a range: the low and high token counts come from the high and low ratios). Chat prompts
  add :data:`CHAT_OVERHEAD_PER_MESSAGE` tokens per message and :data:`CHAT_OVERHEAD_PER_REQUEST` per request (the
  role markers a chat template adds; OpenAI's cookbook "How to count tokens with tiktoken" counts 3 + 3).
* **completion tokens** — the reference translation's length in tokens plus one end token (the newline a completion
  prompt stops at, or the end-of-turn token), i.e. the assumption that a translation is about as long as the human
  one; the range is :data:`OUTPUT_SPREAD` × that (a model that rambles or stops short), capped at ``max_tokens``.
* **judge calls** — one call per entry, replicate and judge (per-entry judges), with the judge prompt rendered with
  the source and the reference standing in for the translation (the ratio counts: judges are API models), and
  :data:`JUDGE_OUTPUT_TOKENS` answer tokens per kind (range: half of it to the kind's ``max_tokens`` cap).
* **reasoning tokens** — a method (or judge) with a reasoning effort (``openai:gpt-5-mini:low``) also bills hidden
  reasoning tokens as output: :data:`REASONING_TOKENS` per call for its effort (a range), capped at ``max_tokens``
  when the cell sets one (the cap covers reasoning and answer), priced at the table's ``reasoning`` rate, else at the
  ``output`` rate (how providers bill them; :class:`mtboard.inputs.prices.Rates`). A method without an effort: none.
* **cost** — the rates of ``prompts/prices.yaml`` (:meth:`mtboard.inputs.prices.PriceTable.rates`) for the cell's provider
  and model, the sweep file's ``price_in``/``price_out`` when given, zero for engines without a per-token price
  (local models, Apertium, baselines); unknown (None) when a priced model is not in the table.

Engines that take the raw source (Apertium, baselines) make one call per entry and no tokens. The local-model gate
(canary and latency lines, 17 short requests per gguf cell) is not in a card's token totals and is not counted.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mtboard.inputs.corpora.arms import arm_view
from mtboard.backends.local import sandbox
from mtboard.backends import get_backend
from mtboard.core import paths
from mtboard.core.documents import MAX_CORPUS_BYTES, loads_corpus
from mtboard.core.errors import BackendError, ConfigError
from mtboard.judges import REGISTRY
from mtboard.judges.base import JudgeItem, load_judge_prompt, parse_judge_spec
from mtboard.inputs.prices import Rates, load_prices
from mtboard.inputs.prompts import load_prompt
from mtboard.inputs.runspec import split_method
from mtboard.core.schema import Segment
from mtboard.sweeps.cells import Cell, model_path
from mtboard.sweeps.spec import Sweep, gguf_package_path

CHARS_PER_TOKEN: dict[str, tuple[float, float]] = {
    "latin": (3.0, 4.5),
    "cyrillic": (2.2, 3.5),
    "greek": (2.0, 3.2),
    "arabic": (2.0, 3.2),
    "hebrew": (2.0, 3.2),
    "devanagari": (1.5, 3.0),
    "cjk": (0.8, 1.6),
    "other": (1.2, 3.0),
}
"""Characters per token by script, (low, high): the estimate's range when no tokenizer of the model is at hand.
Latin: OpenAI's rule of thumb is ~4 characters per token of English text ("What are tokens and how to count them?",
help.openai.com); other Latin-script languages split into more pieces (3.0). CJK (Han, kana, Hangul): about one
token per 1–1.5 characters in current BPE vocabularies; other scripts in between. Checked here against Gemma 3's
tokenizer on the committed corpora: EN→ES/EN→FR prompts 3.6–4.1 chars/token, the JA corpus 1.1–1.3."""

SCRIPT_GROUPS = {"LATIN": "latin", "CYRILLIC": "cyrillic", "GREEK": "greek", "ARABIC": "arabic", "HEBREW": "hebrew",
                 "DEVANAGARI": "devanagari", "CJK": "cjk", "HIRAGANA": "cjk", "KATAKANA": "cjk", "HANGUL": "cjk",
                 "IDEOGRAPHIC": "cjk"}

CHAT_OVERHEAD_PER_MESSAGE = 3
CHAT_OVERHEAD_PER_REQUEST = 3
OUTPUT_SPREAD = (0.75, 1.5)
"""(low, high) multipliers of the reference-length output estimate."""
REASONING_TOKENS: dict[str, tuple[int, int, int]] = {
    "none": (0, 0, 0),
    "minimal": (0, 16, 128),
    "low": (64, 256, 1024),
    "medium": (256, 1024, 4096),
    "high": (1024, 4096, 16384),
    "xhigh": (2048, 8192, 32768),
}
"""Hidden reasoning tokens per call by effort, (low, estimate, high). An assumption for one-sentence translation and
judging, not a measurement: OpenAI's reasoning guide says only that reasoning uses "from a few hundred to tens of
thousands" of tokens per request depending on the problem, and each effort step is taken as ~4× the one below. The
range is wide on purpose (``--budget`` checks its upper end); calibrate it against the ``totals.reasoning_tokens`` of
real cards with an effort."""
JUDGE_OUTPUT_TOKENS = {"rubric": 40, "gemba-mqm": 120}
"""Typical answer tokens per judge kind (a rubric line of scores and flags; an MQM error list)."""


@dataclass(frozen=True)
class Range:
    """A token count or cost as (low, estimate, high)."""

    low: float
    mid: float
    high: float

    def __add__(self, other: Range) -> Range:
        return Range(self.low + other.low, self.mid + other.mid, self.high + other.high)

    def scale(self, k: float) -> Range:
        return Range(self.low * k, self.mid * k, self.high * k)

    @staticmethod
    def zero() -> Range:
        return Range(0.0, 0.0, 0.0)

    def rounded(self) -> dict[str, int]:
        return {"low": round(self.low), "estimate": round(self.mid), "high": round(self.high)}


def script_of(text: str) -> str:
    """The script most letters of ``text`` are in (a key of :data:`CHARS_PER_TOKEN`); ``latin`` for text without
    letters. From the Unicode character names (``LATIN SMALL LETTER A`` → latin, ``CJK UNIFIED IDEOGRAPH`` → cjk)."""
    counts: dict[str, int] = {}
    for ch in text:
        if not ch.isalpha():
            continue
        first = unicodedata.name(ch, "OTHER").split()[0]
        group = SCRIPT_GROUPS.get(first, "other")
        counts[group] = counts.get(group, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else "latin"


class RatioCounter:
    """Token counts from :data:`CHARS_PER_TOKEN` for the text's script, as a :class:`Range`."""

    name = "chars-per-token ratio"

    def count(self, text: str, bos: bool = False) -> Range:
        low_ratio, high_ratio = CHARS_PER_TOKEN[script_of(text)]
        n = len(text)
        return Range(n / high_ratio, n / ((low_ratio + high_ratio) / 2), n / low_ratio)


_TOKENIZE = """
import json, sys
import llama_cpp
from llama_cpp._utils import suppress_stdout_stderr
with suppress_stdout_stderr(disable=False):
    llm = llama_cpp.Llama(model_path=sys.argv[1], vocab_only=True, verbose=False)
todo = json.load(sys.stdin)
json.dump([len(llm.tokenize(t.encode("utf-8"), add_bos=b, special=True)) for t, b in todo], sys.stdout)
"""
"""The tokenizing script run inside the sandbox: loads only the GGUF file's vocabulary and counts tokens."""


class GGUFCounter:
    """Exact token counts with a GGUF file's own vocabulary, tokenizing as llama-cpp-python's server does
    (``special=True``; BOS on prompts). The file is untrusted input to native code, so it is never loaded into
    mtboard's process (docs/SECURITY.md): one short-lived ``python -c`` per batch loads only the vocabulary
    (``vocab_only=True``: no weights) inside :class:`mtboard.backends.local.sandbox.Sandbox` (no network, empty environment, the
    model read-only), reads the texts as JSON on stdin and writes the counts. Counts are cached per text."""

    def __init__(self, path: Path):
        self.path = path
        self.name = f"{path.name} tokenizer"
        self._cache: dict[tuple[str, bool], int] = {}

    def prime(self, texts: list[tuple[str, bool]]) -> None:
        """Count every ``(text, bos)`` not yet counted, in one sandboxed run. Raises: BackendError when the
        sandbox or the tokenizer fails."""


        todo = sorted({t for t in texts if t not in self._cache})
        if not todo:
            return
        inside = f"{sandbox.MODEL_DIR}/{self.path.name}"
        argv = sandbox.Sandbox(ro_binds=[(str(self.path.resolve()), inside)]).argv(
            [sys.executable, "-c", _TOKENIZE, inside])
        try:
            proc = subprocess.run(argv, input=json.dumps(todo), capture_output=True, text=True, timeout=600,
                                  env=sandbox.BWRAP_ENV)
        except (OSError, subprocess.SubprocessError) as exc:
            raise BackendError(f"the sandboxed tokenizer could not run: {exc}", where=str(self.path)) from None
        if proc.returncode != 0:
            why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1][:200]
            raise BackendError(f"the sandboxed tokenizer failed: {why}", where=str(self.path),
                               fix="check the GGUF file, or plan with --ratio-only")
        for key, n in zip(todo, json.loads(proc.stdout)):
            self._cache[key] = int(n)

    def count(self, text: str, bos: bool = False) -> Range:
        key = (text, bos)
        if key not in self._cache:
            self.prime([key])
        n = float(self._cache[key])
        return Range(n, n, n)


@functools.lru_cache(maxsize=8)
def _gguf_counter(path: str) -> GGUFCounter:
    return GGUFCounter(Path(path))


def counter_for(cell: Cell, *, use_tokenizers: bool = True, root: Path | None = None) -> Any:
    """The token counter of a cell: the model's GGUF vocabulary (:class:`GGUFCounter`) when the cell runs a local
    GGUF file that is here (a ``gguf_package`` that is installed, or a file under the sweep's ``root`` checked by
    :func:`mtboard.sweeps.cells.model_path`: relative, no ``..``, no symbolic link — issue 34 item 4; without
    ``root`` no local file is read), llama-cpp-python is installed and the sandbox works; else
    :class:`RatioCounter`. Raises: PathRefused (InputError) for a model path that leaves ``root``."""
    if not (use_tokenizers and cell.backend == "gguf"):
        return RatioCounter()


    if importlib.util.find_spec("llama_cpp") is None or not sandbox.status().available:
        return RatioCounter()
    model = cell.method.partition(":")[2]
    path: Path | None = None
    if cell.gguf_package:
        try:
            path = gguf_package_path(cell.gguf_package, model)
        except ConfigError:
            path = None
    elif root is not None:
        path = model_path(get_backend(cell.backend), split_method(cell.method)[1], None, root,
                          field=f"methods.{cell.method_index}.method")
    return _gguf_counter(str(path)) if path is not None else RatioCounter()


def _count(x: float) -> int | None:
    """A token count for JSON: rounded; None (unknown) for a count that is not finite. The sweep file's bounds keep
    every count finite (issue 34 item 3); this keeps ``sweep plan --json`` strict JSON regardless."""
    return round(x) if math.isfinite(x) else None


@dataclass
class CellEstimate:
    """The estimate of one cell (module docstring). Token counts are totals over entries × replicates."""

    cell: Cell
    calls: int
    """Translation calls (entries × replicates; batch size 1)."""
    judge_calls: int
    prompt: Range
    completion: Range
    judge_prompt: Range
    judge_completion: Range
    counter: str
    cost: Range | None
    """USD; None when a rate is unknown."""
    price_source: str
    reasoning: Range = field(default_factory=Range.zero)
    """Hidden reasoning tokens of the translation calls (a method with an effort; :data:`REASONING_TOKENS`)."""
    judge_reasoning: Range = field(default_factory=Range.zero)
    """Hidden reasoning tokens of the judge calls (a judge with an effort)."""

    @property
    def tokens(self) -> Range:
        return (self.prompt + self.completion + self.reasoning + self.judge_prompt + self.judge_completion
                + self.judge_reasoning)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape (``sweep plan --json`` and the run summary)."""
        t = self.tokens
        cost = None if self.cost is None else {k: round(v, 6) for k, v in
                                                (("low", self.cost.low), ("estimate", self.cost.mid),
                                                 ("high", self.cost.high))}
        per_call = None if self.cost is None or not (self.calls + self.judge_calls) else round(
            self.cost.mid / (self.calls + self.judge_calls), 8)
        return {"cell": self.cell.id, "entries": self.cell.entries, "runs": self.cell.runs,
                "calls": {"translation": self.calls, "judge": self.judge_calls,
                          "per_entry": (self.calls + self.judge_calls) / max(1, self.cell.entries)},
                "tokens": {"prompt": _count(self.prompt.mid), "completion": _count(self.completion.mid),
                           "judge_prompt": _count(self.judge_prompt.mid),
                           "judge_completion": _count(self.judge_completion.mid),
                           "reasoning": _count(self.reasoning.mid), "judge_reasoning": _count(self.judge_reasoning.mid),
                           "total": _count(t.mid),
                           "low": _count(t.low), "high": _count(t.high)},
                "counted_with": self.counter, "cost_usd": cost, "cost_per_call_usd": per_call,
                "price_source": self.price_source}


@dataclass
class SweepEstimate:
    """Every cell's estimate and the sweep's totals (spec §10.2: the sum over cells)."""

    cells: list[CellEstimate] = field(default_factory=list)

    @property
    def tokens(self) -> Range:
        total = Range.zero()
        for c in self.cells:
            total = total + c.tokens
        return total

    @property
    def unknown_cost(self) -> list[str]:
        return [c.cell.id for c in self.cells if c.cost is None]

    def _cost(self, attr: str) -> float | None:
        if self.unknown_cost:
            return None
        return sum(getattr(c.cost, attr) for c in self.cells if c.cost is not None)

    @property
    def cost_usd(self) -> float | None:
        return self._cost("mid")

    @property
    def cost_high_usd(self) -> float | None:
        return self._cost("high")

    def totals(self) -> dict[str, Any]:
        t = self.tokens
        return {"cells": len(self.cells), "calls": sum(c.calls for c in self.cells),
                "judge_calls": sum(c.judge_calls for c in self.cells),
                "tokens": {"total": _count(t.mid), "low": _count(t.low), "high": _count(t.high)},
                "cost_usd": None if self.cost_usd is None else {
                    "low": round(self._cost("low") or 0.0, 6), "estimate": round(self.cost_usd, 6),
                    "high": round(self.cost_high_usd or 0.0, 6)},
                "unknown_cost_cells": self.unknown_cost}


def _rates(cell: Cell, table: Any) -> tuple[Any, str]:

    if cell.price_in is not None or cell.price_out is not None:
        return Rates(cell.price_in or 0.0, cell.price_out or 0.0), "sweep file"
    backend_cls = get_backend(cell.backend)
    if not backend_cls.priced or backend_cls.prompt_format == "raw":
        return Rates(0.0, 0.0), "engine without per-token price"
    model = split_method(cell.method)[1]
    hit = table.rates(cell.provider, model)
    if hit is None:
        return None, f"unknown: {cell.provider}/{model} is not in prompts/prices.yaml"
    return hit, f"prompts/prices.yaml ({hit.as_of or table.as_of})"


def run_cost(entries: int, calls_per_entry: float, cost_per_call: float) -> float:
    """Spec §10.1: ``run_cost = entries × calls per entry × cost per call`` (USD; ``cost_per_call`` in USD). The
    published cost tables (:mod:`mtboard.sweeps.costs`) use it with measured tokens; a sweep's cost is the sum of
    its runs' (§10.2, :attr:`SweepEstimate.cost_usd`)."""
    return entries * calls_per_entry * cost_per_call


def _judge_rates(model: str, table: Any) -> Any:
    return table.rates("openai", model)


def reasoning_tokens(effort: str | None, calls: int, max_tokens: int | None) -> Range:
    """Hidden reasoning tokens of ``calls`` calls at ``effort`` (:data:`REASONING_TOKENS`; zero without an effort),
    each call's count capped at ``max_tokens`` when given."""
    if not effort:
        return Range.zero()
    per_call = REASONING_TOKENS.get(effort, REASONING_TOKENS["medium"])
    if max_tokens is not None:
        per_call = tuple(min(v, max_tokens) for v in per_call)  # type: ignore[assignment]
    return Range(*per_call).scale(calls)


def _cost(rates: Any, prompt: Range, completion: Range, reasoning: Range) -> Range:
    """USD of the token ranges at ``rates`` (reasoning at the ``reasoning`` rate, else at ``output``)."""
    r_rate = rates.reasoning if rates.reasoning is not None else rates.output
    return Range(*((rates.input * p + rates.output * c + r_rate * r) / 1e6 for p, c, r in
                   ((prompt.low, completion.low, reasoning.low), (prompt.mid, completion.mid, reasoning.mid),
                    (prompt.high, completion.high, reasoning.high))))


def _translation_tokens(prompt: Any, entries: list[Any], ds: Any, counter: Any, cap: float) -> tuple[Range, Range]:
    """(prompt, completion) tokens of one replicate over ``entries`` (module docstring)."""
    prompt_r = completion_r = Range.zero()
    rendered = [prompt.render(e.source, ds.source_language, ds.target_language, history=list(e.history))
                for e in entries]
    if isinstance(counter, GGUFCounter):  # one sandboxed tokenizer run for the whole slice
        counter.prime([(r.prompt or "", True) for r in rendered if r.prompt is not None]
                      + [(m["content"], False) for r in rendered for m in (r.messages or [])]
                      + [(" " + e.reference, False) for e in entries])
    for e, r in zip(entries, rendered):
        if r.messages is not None:
            p = Range.zero()
            for m in r.messages:
                p = p + counter.count(m["content"])
            p = p + Range(1, 1, 1).scale(CHAT_OVERHEAD_PER_MESSAGE * len(r.messages) + CHAT_OVERHEAD_PER_REQUEST)
        else:
            p = counter.count(r.prompt or "", bos=True)
        out = counter.count(" " + e.reference) + Range(1, 1, 1)
        prompt_r = prompt_r + p
        completion_r = completion_r + Range(min(cap, out.low * OUTPUT_SPREAD[0]), min(cap, out.mid),
                                            min(cap, out.high * OUTPUT_SPREAD[1]))
    return prompt_r, completion_r


def estimate_cell(cell: Cell, corpus: Any, *, table: Any, use_tokenizers: bool = True,
                  cache: dict[tuple[Any, ...], Any] | None = None, root: Path | None = None) -> CellEstimate:
    """The estimate of one cell over ``corpus`` (the loaded corpus of ``cell.dataset_path``). See the module
    docstring for the method. ``cache`` (shared over a sweep's cells) keeps the token counts of a corpus slice ×
    prompt × tokenizer, which every temperature and every API model of the sweep share. ``root``: the sweep's root, under
which a local model file is looked for (:func:`counter_for`). Raises: ConfigError from the
    prompt or judge templates."""
    cache = {} if cache is None else cache
    entries = arm_view(corpus.segment(Segment(cell.segment)), cell.arm, cell.history)  # issue 40: lines or scenes
    entries = entries[: cell.limit] if cell.limit else entries
    ds = corpus.dataset
    calls = len(entries) * cell.runs
    prompt_r = completion_r = judge_p = judge_c = reasoning = judge_r = Range.zero()
    judge_calls = 0
    per_judge: list[tuple[str, Range, Range, Range]] = []
    counter: Any = RatioCounter()
    if cell.prompt is not None:
        counter = counter_for(cell, use_tokenizers=use_tokenizers, root=root)
        cap = float(cell.max_tokens or 512)
        key = ("translate", cell.dataset_path, cell.segment, cell.limit, cell.arm, cell.history, cell.prompt,
               counter.name, cap)
        if key not in cache:  # the same slice, prompt and tokenizer count the same (temperatures, API models)
            cache[key] = _translation_tokens(load_prompt(cell.prompt, named=True), entries, ds, counter, cap)
        prompt_r, completion_r = (r.scale(cell.runs) for r in cache[key])
        reasoning = reasoning_tokens(split_method(cell.method)[2], calls, cell.max_tokens)
        for spec_text in cell.judges:
            jkey = ("judge", cell.dataset_path, cell.segment, cell.limit, cell.arm, cell.history, spec_text)
            if jkey not in cache:
                cache[jkey] = _judge_tokens(spec_text, entries, ds)
            jp, jc = cache[jkey]
            jspec = parse_judge_spec(spec_text)
            jr = reasoning_tokens(jspec.effort, calls, None)
            per_judge.append((jspec.model, jp.scale(cell.runs), jc.scale(cell.runs), jr))
            judge_p, judge_c, judge_r = judge_p + jp.scale(cell.runs), judge_c + jc.scale(cell.runs), judge_r + jr
            judge_calls += calls
    rates, source = _rates(cell, table)
    cost: Range | None = None
    if rates is not None:
        cost = _cost(rates, prompt_r, completion_r, reasoning)
        for model, jp, jc, jr in per_judge:
            j_rates = _judge_rates(model, table)
            if j_rates is None:
                cost, source = None, f"unknown judge price: openai/{model} is not in prompts/prices.yaml"
                break
            cost = cost + _cost(j_rates, jp, jc, jr)
    return CellEstimate(cell=cell, calls=calls, judge_calls=judge_calls, prompt=prompt_r, completion=completion_r,
                        judge_prompt=judge_p, judge_completion=judge_c,
                        counter=counter.name if cell.prompt is not None else "none (raw engine)", cost=cost,
                        price_source=source, reasoning=reasoning, judge_reasoning=judge_r)


def _judge_tokens(spec_text: str, entries: list[Any], ds: Any) -> tuple[Range, Range]:
    """(prompt, completion) tokens of one judge over ``entries`` (one replicate)."""

    spec = parse_judge_spec(spec_text)
    cls = REGISTRY[spec.kind]
    judge = cls()
    counter = RatioCounter()
    if not hasattr(judge, "variables"):  # a document-level judge (checkpoints): one call per document
        return Range.zero(), Range.zero()
    jprompt = load_judge_prompt(cls.prompt_name)
    p = c = Range.zero()
    typical = float(JUDGE_OUTPUT_TOKENS.get(spec.kind, cls.default_max_tokens / 4))
    for e in entries:
        item = JudgeItem(entry_id=e.id, source=e.source, translation=e.reference, source_lang=ds.source_language,
                         target_lang=ds.target_language, history=list(e.history), reference=e.reference)
        for m in jprompt.render(**judge.variables(item)):
            p = p + counter.count(m["content"]) + Range(1, 1, 1).scale(CHAT_OVERHEAD_PER_MESSAGE)
        p = p + Range(1, 1, 1).scale(CHAT_OVERHEAD_PER_REQUEST)
        c = c + Range(typical / 2, typical, float(cls.default_max_tokens))
    return p, c


def estimate_sweep(sweep: Sweep, *, use_tokenizers: bool = True) -> SweepEstimate:
    """Estimate every cell of ``sweep`` (corpora loaded once; the price table read once)."""

    table = load_prices()
    corpora: dict[str, Any] = {}
    cache: dict[tuple[Any, ...], Any] = {}
    out = SweepEstimate()
    for cell in sweep.cells:
        if cell.dataset_path not in corpora:  # checked again: no path outside the root, no symbolic link
            raw = paths.read_inside(sweep.root, cell.dataset_path, max_bytes=MAX_CORPUS_BYTES, where=str(sweep.path),
                                    field="datasets", root_name=f"the repository root {sweep.root}")
            corpora[cell.dataset_path] = loads_corpus(raw, str(sweep.root / cell.dataset_path))[0]
        out.cells.append(estimate_cell(cell, corpora[cell.dataset_path], table=table, use_tokenizers=use_tokenizers,
                                       cache=cache, root=sweep.root))
    return out


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _view(cell: Any) -> str:
    """`` · scene-context, 6 lines of history`` for a cell of a context experiment (issue 40); "" otherwise."""
    if cell.arm is None:
        return ""
    return f" · {cell.arm}" + (f", {cell.history} lines of history" if cell.history is not None else "")


def plan_table(sweep: Sweep, est: SweepEstimate) -> str:
    """The plan as text: one line per cell (id, dataset, method, prompt/condition, temperature, entries × runs,
    calls, tokens estimate [low–high], cost, and the corpus view of a context experiment's cell), the cells not
    run because history cannot reach their method (``not run``), then the totals (spec §10.2)."""
    lines = [f"sweep {sweep.name}: {len(sweep.cells)} cell(s) from {sweep.path} (sha256 {sweep.sha256[:12]})",
             f"{'cell':12}  {'dataset':14} {'method':16} {'condition':22} {'temp':>4} {'entries':>9} {'calls':>6} "
             f"{'tokens (low–high)':>24} {'cost USD':>10}  counted with"]
    for c in est.cells:
        cell, t = c.cell, c.tokens
        temp = "-" if cell.temperature is None else f"{cell.temperature:g}"
        tok = f"{t.mid:,.0f} ({t.low:,.0f}–{t.high:,.0f})"
        lines.append(f"{cell.id:12}  {cell.dataset_id:14} {cell.label[:16]:16} {cell.condition[:22]:22} {temp:>4} "
                     f"{cell.entries:>5} × {cell.runs} {c.calls + c.judge_calls:>6} {tok:>24} "
                     f"{_usd(None if c.cost is None else c.cost.mid):>10}  {c.counter}" + _view(cell))
    for n in sweep.not_applicable:  # issue 40: history cells a method cannot take are listed, not run
        what = f"{n.history} lines of history" if n.experiment == "history" else f"the {n.arm} arm"
        lines.append(f"not run     {n.dataset_id:14} {n.label[:16]:16} {what}: {n.reason}")
    t = est.tokens
    tot = est.totals()
    lines.append(f"total       {len(est.cells)} cells, {tot['calls']} translation calls, {tot['judge_calls']} judge "
                 f"calls, {t.mid:,.0f} tokens ({t.low:,.0f}–{t.high:,.0f}); cost {_usd(est.cost_usd)} (up to "
                 f"{_usd(est.cost_high_usd)})" + (f"; unknown price for {len(est.unknown_cost)} cell(s)"
                                                  if est.unknown_cost else ""))
    return "\n".join(lines)


__all__ = ["run_cost", "CHARS_PER_TOKEN", "OUTPUT_SPREAD", "JUDGE_OUTPUT_TOKENS", "REASONING_TOKENS", "reasoning_tokens", "Range", "script_of", "RatioCounter",
           "GGUFCounter", "counter_for", "CellEstimate", "SweepEstimate", "estimate_cell", "estimate_sweep",
           "plan_table"]

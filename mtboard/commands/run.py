"""CLI command: ``mtboard run CORPUS --method SPEC …`` (issue 3).

Translates the corpus with the method, writes the append-only work directory, scores, writes the sealed run card and
``report.md``, and prints a one-screen summary. A rich progress bar (stderr) shows entries done, rate, ETA and
failures. Re-running the same command with the same ``--work-dir`` resumes: finished entries are never re-sent.

Environment: ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (openai backend; the key only from the environment),
``MTBOARD_STREAM=1`` (stream responses from OpenAI-compatible servers), ``MTBOARD_PROMPTS_DIR``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from mtboard.cli import app, guarded


class _RichProgress:
    """ProgressSink drawing a rich progress bar on stderr: done/total, rate, ETA, failures."""

    def __init__(self, label: str, enabled: bool = True):
        self.label = label
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None

    def start(self, total: int, already_done: int) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("elapsed"),
            TimeElapsedColumn(), TextColumn("[red]{task.fields[failures]} failed"),
            console=Console(stderr=True), transient=False, refresh_per_second=4)
        self._progress.start()
        self._task = self._progress.add_task(self.label, total=total, completed=already_done, rate="", failures=0)

    def advance(self, n: int, failures: int) -> None:
        if self._progress is None:
            return
        self._progress.advance(self._task, n)
        speed = self._progress.tasks[0].speed
        self._progress.update(self._task, failures=failures, rate=f"{speed:.1f}/s" if speed else "")

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _summary(outcome: Any) -> str:
    card = outcome.card
    sc, t = card.scores, card.totals
    tr = outcome.translated
    lines = [
        f"method      {card.method.spec}  ({card.method_class.value}; provider {card.method.api_provider or '-'};"
        f" model id {card.model_id or '-'})",
        f"dataset     {card.dataset.id} {card.dataset.version} {card.dataset.language_pair}, "
        f"{card.dataset.segment.value}, {card.dataset.entry_count} entries × {card.method.runs} run(s)",
        f"chrF++      {sc.chrf_plus_plus:.2f}   {sc.signatures.chrf}",
        f"composite   {sc.composite:.3f}   profile {sc.composite_profile}, tier {sc.quality_tier.value}",
    ]
    if sc.replicates:
        r = sc.replicates
        lines.append(f"replicates  chrF++ {r.chrf_mean:.2f} ± {r.chrf_stdev:.2f}; composite "
                     f"{r.composite_mean:.3f} ± {r.composite_stdev:.3f} (n={r.n})")
    kinds: dict[str, int] = {}
    for res in card.results:
        if res.error_kind is not None:
            kinds[res.error_kind.value] = kinds.get(res.error_kind.value, 0) + 1
    kind_text = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    untranslated = sc.mechanical.get("source_untranslated", 0)
    lines.append(f"errors      {sc.errors} of {sc.total}" + (f" ({kind_text})" if kind_text else "")
                 + (f"; source returned untranslated {untranslated}" if untranslated else "")
                 + (f"; retries {t.retries}" if t.retries else ""))
    gate = card.method.local
    if gate is not None:
        lat = ("" if gate.latency_median_s is None else
               f"; latency gate median {gate.latency_median_s:.2f} s / p90 {gate.latency_p90_s or 0:.2f} s "
               f"({'passed' if gate.latency_passed else 'FAILED' if gate.latency_passed is False else 'recorded'})")
        lines.append(f"local       canary {'passed' if gate.canary_passed else 'FAILED'}{lat}; "
                     f"{gate.server or '-'} on {gate.device or '-'}, n_ctx {gate.n_ctx}")
    cost = "unknown (pass --price-in/--price-out)" if t.total_cost_usd is None else (
        f"${t.total_cost_usd:.6f} (${t.cost_per_entry_usd:.8f}/entry)")
    lines.append(f"cost        {cost}; tokens {t.prompt_tokens} in / {t.completion_tokens} out"
                 + (f" ({t.reasoning_tokens} reasoning)" if t.reasoning_tokens else ""))
    lat = sc.median_latency_seconds
    lines.append(f"time        {card.elapsed_seconds:.1f} s" + (f"; median latency {lat:.3f} s" if lat is not None
                                                              else "")
                 + (f"; {sc.entries_per_minute:.1f} entries/min" if sc.entries_per_minute else "")
                 + f"; sent this session {tr.sent}"
                 + (f"; waited {tr.rate_limit_wait_s:.1f} s on rate limits ({tr.rate_limited_responses} rate-limited "
                    "answers)" if tr.rate_limited_responses or tr.rate_limit_wait_s else ""))
    if outcome.judge_note:
        lines.append(f"judges      {outcome.judge_note}")
    lines.append(f"card        {outcome.card_path}")
    lines.append(f"report      {outcome.report_path}")
    return "\n".join(lines)


@app.command("run")
@guarded
def run(
    corpus: Annotated[Path, typer.Argument(help="Corpus JSON file (spec §2).")],
    method: Annotated[str, typer.Option("--method", help="backend:model[:effort], e.g. apertium:eng-spa, "
                                        "openai:gpt-4o-mini, openai:qwen3:8b:medium, gguf:PATH, echo:, empty:.")],
    prompt: Annotated[Optional[str], typer.Option("--prompt", help="Prompt template name under prompts/ "
                                                  "(default: the backend's).")] = None,
    condition: Annotated[Optional[str], typer.Option("--condition", help="Experiment label (default: the prompt "
                                                     "name).")] = None,
    temperature: Annotated[Optional[float], typer.Option("--temperature", help="Sampling temperature "
                                                         "(default 0 for LLMs).")] = None,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Explicit generation cap sent with every "
                                            "request.")] = 512,
    concurrency: Annotated[Optional[int], typer.Option("--concurrency", min=1, help="Requests/batches in flight "
                                                       "(default: the backend's).")] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, help="Replicate runs, run concurrently (3 recommended for "
                                      "LLMs); the card reports mean and spread.")] = 1,
    judge: Annotated[Optional[list[str]], typer.Option(
        "--judge", help="Judge KIND=openai:MODEL[:EFFORT] (KIND: gemba-mqm, rubric, checkpoints); repeatable or "
        "comma-separated; none (default) = judge later with `mtboard judge WORKDIR`. Checked before anything is "
        "translated.")] = None,
    allow_self_judge: Annotated[bool, typer.Option(
        "--allow-self-judge", help="Accept a judge from the translator's model family (recorded in the card).")]
    = False,
    bench: Annotated[Optional[Path], typer.Option(
        "--bench", help="Checkpoint benchmark folder (bench.json + corpus + key); required by the checkpoints "
        "judge.")] = None,
    backend_opt: Annotated[Optional[list[str]], typer.Option(
        "--backend-opt", help="Backend setting KEY=VALUE, repeatable; `mtboard backends` lists each backend's "
        "settings with type, default and meaning. Unknown keys are refused.")] = None,
    segment: Annotated[str, typer.Option("--segment", help="Corpus segment to evaluate.")] = "development",
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="Only the first N entries of the "
                                                 "segment.")] = None,
    work_dir: Annotated[Optional[Path], typer.Option("--work-dir", help="Work directory (resumable; default "
                                                     "runs/DATASET/METHOD-CONDITION-SEGMENT).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Run card path (default WORKDIR/card.json).")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint (default "
                                                    "$OPENAI_BASE_URL, else https://api.openai.com/v1); the key "
                                                    "comes only from $OPENAI_API_KEY.")] = None,
    allow_incomplete: Annotated[bool, typer.Option("--allow-incomplete", help="Write a card even when entries "
                                                   "failed in transport (they score 0).")] = False,
    price_in: Annotated[Optional[float], typer.Option("--price-in", min=0.0, help="USD per 1M prompt tokens "
                                                      "(overrides prompts/prices.yaml).")] = None,
    price_out: Annotated[Optional[float], typer.Option("--price-out", min=0.0, help="USD per 1M completion "
                                                       "tokens.")] = None,
    notes: Annotated[Optional[str], typer.Option("--notes", help="Free-text note stored in the card.")] = None,
) -> None:
    """Translate a corpus with a method, score it and write a sealed run card (+ work dir and report.md)."""
    import sys

    from mtboard.runner import (RunSettings, finish, judge_specs, parse_backend_opts, preflight_judges, prepare,
                                translate_all)

    specs = judge_specs(judge)
    settings = RunSettings(corpus_path=corpus, method=method, prompt=prompt, condition=condition,
                           temperature=temperature, max_tokens=max_tokens, concurrency=concurrency, runs=runs,
                           segment=segment, limit=limit, work_dir=work_dir, out=out, base_url=base_url,
                           allow_incomplete=allow_incomplete, price_in=price_in, price_out=price_out, notes=notes,
                           judge=specs, allow_self_judge=allow_self_judge, bench=bench,
                           backend_extra=parse_backend_opts(backend_opt),
                           stream=os.environ.get("MTBOARD_STREAM", "") not in ("", "0"))
    plan = prepare(settings)
    preflight_judges(plan)  # before anything is sent: a refused judge or a bad spec costs no translation
    import asyncio

    progress = _RichProgress(f"{plan.spec.method.text}", enabled=sys.stderr.isatty() or bool(os.environ.get(
        "MTBOARD_PROGRESS")))
    typer.echo(f"work dir    {plan.work_dir}", err=True)
    translated = asyncio.run(translate_all(plan, progress))
    outcome = finish(translated, judge=specs)
    typer.echo(_summary(outcome))


__all__ = ["run"]

"""CLI command: ``mtboard run CORPUS --method SPEC …`` (issue 3).

Translates the corpus with the method, writes the append-only work directory, scores, writes the sealed run card and
``report.md``, and prints a one-screen summary. Progress goes to stderr: a rich progress bar (entries done, rate,
ETA, failures) on a terminal; elsewhere (nohup, CI logs) one line every ``MTBOARD_PROGRESS_INTERVAL`` seconds
(default 30). Re-running the same command (the same ``--work-dir``) resumes — it says ``resuming 17/30`` — and never
re-sends a finished entry; Ctrl-C (exit 130) and SIGTERM (exit 143) say how many entries finished and the command
that resumes.

Environment: ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (openai backend; the key only from the environment),
``JUDGE_BASE_URL`` / ``JUDGE_API_KEY`` (judges; else the run's ``--base-url``, else the OPENAI_ pair),
``MTBOARD_STREAM=1`` (stream responses from OpenAI-compatible servers), ``MTBOARD_PROMPTS_DIR``,
``MTBOARD_PROGRESS=1`` (the progress bar even without a terminal), ``MTBOARD_PROGRESS_INTERVAL`` (seconds).
"""

from __future__ import annotations

import shlex
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any, Callable, Optional
from urllib.parse import urlsplit

import typer

from mtboard.cli.app import app, fail, guarded

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


class _LineProgress:
    """ProgressSink for a stderr that is not a terminal (nohup, CI logs): one plain line every ``interval_s``
    seconds while translating (from a timer thread, so a slow entry does not hide the run), and one at the end."""

    def __init__(self, label: str, interval_s: float, echo: Callable[[str], None]):
        self.label = label
        self.interval_s = interval_s
        self.echo = echo
        self.total = self.done = self.failures = self.at_start = 0
        self._t0 = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self) -> str:
        el = time.monotonic() - self._t0
        new = self.done - self.at_start
        rate = new / el if el > 0 else 0.0
        eta = f"{(self.total - self.done) / rate:.0f} s" if rate > 0 else "?"
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f"progress    {self.label}: {self.done}/{self.total} entries ({pct:.0f}%), {self.failures} failed, "
                f"{rate:.2f}/s, elapsed {el:.0f} s, ETA {eta}")

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.echo(self.line())

    def start(self, total: int, already_done: int) -> None:
        self.total, self.done, self.at_start = total, already_done, already_done
        self._t0 = time.monotonic()
        if already_done < total:
            self._thread = threading.Thread(target=self._tick, name="mtboard-progress", daemon=True)
            self._thread.start()

    def advance(self, n: int, failures: int) -> None:
        self.done += n
        self.failures = failures

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self.echo(self.line())


class _Progress:
    """The run command's ProgressSink: says ``resuming 17/30`` when a work directory already holds finished entries,
    then draws through the bar (terminal) or the line printer (anything else)."""

    def __init__(self, inner: Any, work_dir: Path | None, echo: Callable[[str], None]):
        self.inner = inner
        self.work_dir = work_dir
        self.echo = echo

    def start(self, total: int, already_done: int) -> None:
        where = f" in {self.work_dir}" if self.work_dir is not None else ""
        if already_done and already_done < total:
            self.echo(f"resuming {already_done}/{total}: {total - already_done} entries left{where}")
        elif already_done and already_done >= total:
            self.echo(f"resuming {already_done}/{total}: every entry is finished{where}; scoring")
        self.inner.start(total, already_done)

    def advance(self, n: int, failures: int) -> None:
        self.inner.advance(n, failures)

    def stop(self) -> None:
        self.inner.stop()


def progress_sink(label: str, work_dir: Path | None) -> Any:
    """The progress a command shows on stderr: the bar on a terminal (or with ``MTBOARD_PROGRESS``), else a line
    every ``MTBOARD_PROGRESS_INTERVAL`` seconds (:func:`mtboard.cli.environment.environment`); says ``resuming N/M``
    when ``work_dir`` already holds entries."""
    from mtboard.cli.environment import environment

    def echo(line: str) -> None:
        typer.echo(line, err=True)

    env = environment()
    inner: Any = (_RichProgress(label) if sys.stderr.isatty() or env.progress
                  else _LineProgress(label, env.progress_interval, echo))
    return _Progress(inner, work_dir, echo)


def invoked_program(argv0: str) -> list[str]:
    """The program as it was invoked, so that a printed command works in the same shell: ``mtboard`` when that is
    what ``PATH`` finds (a console script run through ``PATH`` gets its full path as ``argv[0]``), else ``argv0`` as
    typed (``.venv/bin/mtboard`` without an activated venv); ``python -m mtboard`` (``argv0`` is the package's
    ``__main__.py``) gives ``[sys.executable, "-m", "mtboard"]``."""
    if Path(argv0).name == "__main__.py":
        return [sys.executable, "-m", "mtboard"]
    found = shutil.which("mtboard")
    if argv0 == "mtboard" or (found is not None and Path(found).resolve() == Path(argv0).resolve()):
        return ["mtboard"]
    return [argv0]


def resume_command(work_dir: Path, argv: list[str] | None = None) -> str:
    """The command that resumes this run: the command line as typed (``argv``, default ``sys.argv``) when it was
    ``mtboard run …`` (the program as invoked, :func:`invoked_program`), with ``--work-dir`` added when it was not
    given; else the shape of it. A ``--base-url`` that carries credentials or a query is replaced by a placeholder
    (the command is printed)."""
    argv = list(sys.argv if argv is None else argv)
    prog = Path(argv[0]).name if argv else ""
    if prog in ("mtboard", "__main__.py") and len(argv) > 1 and argv[1] == "run":
        args = argv[2:]
        for i, a in enumerate(args):
            url = args[i + 1] if a == "--base-url" and i + 1 < len(args) else (
                a.split("=", 1)[1] if a.startswith("--base-url=") else None)
            if url is not None:
                parts = urlsplit(url)
                if parts.username or parts.password or parts.query:
                    if a == "--base-url":
                        args[i + 1] = "YOUR_BASE_URL"
                    else:
                        args[i] = "--base-url=YOUR_BASE_URL"
        if "--work-dir" not in args and not any(a.startswith("--work-dir=") for a in args):
            args += ["--work-dir", str(work_dir)]
        return shlex.join([*invoked_program(argv[0]), "run", *args])
    return f"the same mtboard run command with --work-dir {shlex.quote(str(work_dir))}"


def _stop_on_sigterm(seen: list[int]) -> Any:
    """Make SIGTERM (``timeout``, a CI job cancelled, ``kill``) stop the run the way Ctrl-C does: the SIGINT
    handler in force is called (asyncio's, which cancels the run so finished entries are flushed), or
    KeyboardInterrupt is raised where SIGINT is ignored (a background job of a script). ``seen`` gets the signal
    number, so the caller can say which signal it was and exit 128 + 15. Returns the previous handler (None when not
    in the main thread, where handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def on_term(signum: int, frame: Any) -> None:
        seen.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, on_term)


def _summary(outcome: Any) -> str:
    from mtboard.inputs.prices import NO_USAGE, tokens_text

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
    tokens = tokens_text(t, card.results, language_model=card.method.prompt_format != "raw")
    if tokens == NO_USAGE and (card.method.price_in_per_mtok or card.method.price_out_per_mtok):
        # a price but no token counts: the cost is not known either (the card's total assumes 0 tokens)
        cost = NO_USAGE
    lines.append(f"cost        {cost}; tokens {tokens}"
                 + (f" ({t.reasoning_tokens} reasoning)" if t.reasoning_tokens else ""))
    lat = sc.median_latency_seconds
    lines.append(f"time        {card.elapsed_seconds:.1f} s" + (f"; median latency {lat:.3f} s" if lat is not None
                                                              else "")
                 + (f"; {sc.entries_per_minute:.1f} entries/min" if sc.entries_per_minute else "")
                 + f"; sent this session {tr.sent}"
                 + (f"; waited {tr.rate_limit_wait_s:.1f} s on rate limits ({tr.rate_limited_responses} rate-limited "
                    "answers)" if tr.rate_limited_responses or tr.rate_limit_wait_s else ""))
    if tr.description.identity_note:  # the card holds the declared name only: say why, not silently
        lines.append(f"identity    WARNING: {tr.description.identity_note}")
    if outcome.judge_note:
        first, *rest = outcome.judge_note.splitlines()
        lines.append(f"judges      {first}")
        lines += [f"            {line}" for line in rest]
    lines.append(f"card        {outcome.card_path}")
    lines.append(f"report      {outcome.report_path}")
    if card.method.limit is not None:
        lines.append(unranked_note(card.method.limit, card.dataset.entry_count))
    return "\n".join(lines)


def unranked_note(limit: int, covered: int) -> str:
    """The warning every command prints for a ``--limit`` card."""
    return (f"note        --limit {limit}: this card covers only the first {covered} entries of the segment; the "
            "leaderboard lists it as unranked (a full run is needed for a rank)")


@app.command("run")
@guarded
def run(
    corpus: Annotated[Path, typer.Argument(help="Corpus JSON file (spec §2).")],
    method: Annotated[str, typer.Option("--method", help="backend:model[:effort], e.g. apertium:eng-spa, "
                                        "openai:gpt-4o-mini, openai:qwen3:8b:medium, gguf:PATH, echo:, empty:.")],
    prompt: Annotated[Optional[str], typer.Option("--prompt", help="Prompt template name under prompts/ "
                                                  "(default: the backend's).")] = None,
    coaching: Annotated[Optional[Path], typer.Option("--coaching", help="Coaching data (glossary, grammar notes, "
                                                     "examples; UTF-8 text) the prompt receives as `coaching`: "
                                                     "hashed into coaching_data_sha256 and the fingerprint; the "
                                                     "method class becomes coached-llm (spec §3.2, §9.6).")] = None,
    tools: Annotated[Optional[list[str]], typer.Option("--tools", metavar="TOOL", help="Tools the method uses: fst-gate (check each "
                                                       "hypothesis with the target language's lttoolbox analyser "
                                                       "and ask again naming the rejected words). Needs a prompt "
                                                       "declaring fst_feedback (fst-gated-chat, "
                                                       "fst-gated-few-shot-completion); the class becomes pipeline "
                                                       "(spec §3.2, §9.6).")] = None,
    fst_retries: Annotated[Optional[int], typer.Option("--fst-retries", metavar="N", help="With --tools fst-gate: retries after "
                                                       "the first hypothesis when words are rejected, 0-5 "
                                                       "(default 2).")] = None,
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
    judge_max_tokens: Annotated[Optional[int], typer.Option(
        "--judge-max-tokens", min=1, help="Output-token cap per judge request (default per judge).")] = None,
    judge_max_attempts: Annotated[int, typer.Option(
        "--judge-max-attempts", min=1, help="Judge answers asked per entry before judge_failed (parse failures are "
        "re-asked).")] = 3,
    judge_concurrency: Annotated[int, typer.Option("--judge-concurrency", min=1, help="Judge requests in "
                                                   "flight.")] = 4,
    judge_price_in: Annotated[Optional[float], typer.Option(
        "--judge-price-in", min=0.0, help="USD per 1M judge prompt tokens (for judge cost).")] = None,
    judge_price_out: Annotated[Optional[float], typer.Option(
        "--judge-price-out", min=0.0, help="USD per 1M judge completion tokens.")] = None,
    judge_family: Annotated[Optional[str], typer.Option(
        "--judge-family", help="The judge model's family when neither its name nor its server tells it (e.g. "
        "qwen; docs/judges.md); an unknown family is refused for LLM translators.")] = None,
    translator_family: Annotated[Optional[str], typer.Option(
        "--translator-family", help="The translator model's family when neither its name nor its server tells it "
        "(e.g. qwen; docs/judges.md); checked against the judge like a found one and recorded in the card's "
        "judges.*.family_check.")] = None,
    no_early_gate: Annotated[bool, typer.Option(
        "--no-early-gate", help="Run on even when most of the first entries hit the token cap or echo chat-template "
        "markup (by default a prompted run stops there and suggests the completion prompt).")] = False,
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
    neural_metric: Annotated[Optional[list[str]], typer.Option(
        "--neural-metric", help="Neural metric comet22, cometkiwi or xcomet (repeatable or comma-separated), scored "
        "on the finished card in the COMET environment (docs/neural_metrics.md); later: `mtboard neural "
        "WORKDIR`.")] = None,
    neural_batch_size: Annotated[int, typer.Option("--neural-batch-size", min=1, help="COMET batch size "
                                                   "(recorded).")] = 16,
    neural_device: Annotated[str, typer.Option("--neural-device", help="cpu or cuda (recorded).")] = "cpu",
    neural_revision: Annotated[Optional[list[str]], typer.Option(
        "--neural-revision", help="KEY=COMMIT: a neural metric's model revision instead of the pinned one.")] = None,
) -> None:
    """Translate a corpus with a method, score it and write a sealed run card (+ work dir and report.md).

    Environment: OPENAI_BASE_URL / OPENAI_API_KEY (the key only from here); JUDGE_BASE_URL / JUDGE_API_KEY;
    MTBOARD_STREAM=1 streams responses from OpenAI-compatible servers (docs/providers.md); MTBOARD_PROMPTS_DIR;
    MTBOARD_PROGRESS=1 / MTBOARD_PROGRESS_INTERVAL (progress without a terminal). SIGTERM stops like Ctrl-C.
    """
    import asyncio

    from mtboard.cli.environment import environment
    from mtboard.run.plan import RunSettings
    from mtboard.run.runner import finish, judge_specs, parse_backend_opts, preflight_judges, prepare, translate_all
    from mtboard.run.workdir import WorkDir, lock_workdir

    specs = judge_specs(judge)
    neural_keys, neural_revs = [], {}
    if neural_metric:  # checked before anything is sent: a missing COMET environment costs no translation
        from mtboard.cli.neural import parse_revisions
        from mtboard.score.metrics.neural import comet_python, parse_metrics

        neural_keys, neural_revs = parse_metrics(neural_metric), parse_revisions(neural_revision)
        comet_python()
    settings = RunSettings(corpus_path=corpus, method=method, prompt=prompt, condition=condition,
                           temperature=temperature, max_tokens=max_tokens, concurrency=concurrency, runs=runs,
                           segment=segment, limit=limit, work_dir=work_dir, out=out, base_url=base_url,
                           allow_incomplete=allow_incomplete, price_in=price_in, price_out=price_out, notes=notes,
                           judge=specs, allow_self_judge=allow_self_judge, bench=bench,
                           judge_max_tokens=judge_max_tokens, judge_max_attempts=judge_max_attempts,
                           judge_concurrency=judge_concurrency, judge_price_in=judge_price_in,
                           judge_price_out=judge_price_out, judge_family=judge_family, translator_family=translator_family,
                           early_gate=not no_early_gate, coaching=coaching, tools=tools, fst_retries=fst_retries,
                           backend_extra=parse_backend_opts(backend_opt),
                           stream=environment().stream)
    plan = prepare(settings)
    preflight_judges(plan)  # before anything is sent: a refused judge or a bad spec costs no translation

    with lock_workdir(plan.work_dir):  # one process per work dir for the whole run (a second fails at once)
        def echo(line: str) -> None:
            typer.echo(line, err=True)

        progress = progress_sink(plan.spec.method.text, plan.work_dir)
        echo(f"work dir    {plan.work_dir}")
        if limit is not None:
            echo(unranked_note(limit, len(plan.entries)))
        terminated: list[int] = []
        previous = _stop_on_sigterm(terminated)
        try:
            translated = asyncio.run(translate_all(plan, progress, notice=echo))
        except KeyboardInterrupt:
            total = len(plan.entries) * plan.spec.runs
            selected = {(ri, e.id) for e in plan.entries for ri in range(plan.spec.runs)}
            finished = len(WorkDir(plan.work_dir).finished() & selected) if plan.work_dir.is_dir() else 0
            how, code = ("terminated (SIGTERM)", 143) if terminated else ("interrupted", 130)
            fail(f"{how}: {finished} of {total} entries finished and are kept in {plan.work_dir}; resume with: "
                 f"{resume_command(plan.work_dir)}", code)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        outcome = finish(translated, judge=specs)
        typer.echo(_summary(outcome))
        if neural_keys and outcome.card is not None and outcome.card_path is not None:
            from mtboard.cli.neural import write_scored
            from mtboard.score.neural_card import score_card

            scored = score_card(outcome.card, neural_keys, revisions=neural_revs, batch_size=neural_batch_size,
                                device=neural_device)
            write_scored(scored, outcome.card_path, plan.work_dir, outcome.card_path)


__all__ = ["run"]

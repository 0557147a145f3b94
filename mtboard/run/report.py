"""``report.md``: a human-readable summary of a run's work directory (markdown; untrusted text escaped with
:func:`mtboard.core.fmt.md_cell`: one line per cell whatever line boundary a model or server wrote, issue 33 item 6).

Written by :func:`mtboard.run.runner.finish` at the end of every run, also when the run is incomplete (then it lists the
failures and says there is no card) or stopped after translating (a refused or failed judge: the section says why);
``mtboard judge`` re-writes its judges section and card line (:func:`rejudge_report`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mtboard.core.documents import atomic_write
from mtboard.core.fmt import md_cell
from mtboard.inputs.prices import tokens_text
from mtboard.core.schema import RunCard

if TYPE_CHECKING:  # pragma: no cover
    from mtboard.run.plan import Translated

REPORT = "report.md"
"""File name of the report inside the work directory."""


def _md(text: Any, limit: int | None = 160) -> str:
    """Untrusted text in a table cell or list item: :func:`mtboard.core.fmt.md_cell` (every line boundary — CR, NEL,
    LS, PS as LF — one space; ``|`` escaped), cut at ``limit`` characters."""
    return md_cell(text, limit)


def _num(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


JUDGES_HEADING = "## Judges"
CARD_LINE_START = "Card: fingerprint "


def judge_section(card: RunCard, judge_note: str | None) -> list[str]:
    """The ``## Judges`` lines of report.md: every judge score with its failures (issue 22: a failed judge's mean
    is no judgement) and the note's other lines (endpoint, or why the judges did not run); [] when there is
    neither."""
    notes = [f"- {_md(line, None)}" for line in (judge_note or "").splitlines()
             if not any(line.startswith(k) for k in card.judges)]
    if not card.judges and not notes:
        return []
    from mtboard.judges import summary_line  # noqa: PLC0415 - a card without judges never imports them (issue 35)

    return [JUDGES_HEADING, "", *notes,
            *(f"- {_md(summary_line(kind, s), None)}" for kind, s in sorted(card.judges.items())), ""]


def card_line(card: RunCard) -> str:
    return f"{CARD_LINE_START}`{card.fingerprint.hash}`, run_card_hash `{card.run_card_hash}`"


def rejudge_report(path: Path, card: RunCard, judge_note: str | None = None) -> bool:
    """Bring an existing report.md in step with a card ``mtboard judge`` re-sealed: its ``## Judges`` section and
    card line are replaced (the rest — translation facts, failures, entries — did not change). Returns False (and
    writes nothing) when there is no report.md or it has no card line (an incomplete run's report)."""
    if not path.is_file():
        return False
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next((i for i, ln in enumerate(lines) if ln.startswith(CARD_LINE_START)), None)
    if at is None:
        return False
    start = next((i for i, ln in enumerate(lines[:at]) if ln == JUDGES_HEADING), at)
    lines[start: at + 1] = [*judge_section(card, judge_note), card_line(card)]
    atomic_write(path, "\n".join(lines).encode("utf-8"))
    return True


def write_report(path: Path, translated: Translated, card: RunCard | None, price_source: str,
                 judge_note: str | None = None) -> None:
    """A human-readable summary of the work directory (markdown, untrusted text escaped). ``translated`` is the
    runner's :class:`mtboard.run.plan.Translated`; ``card`` the sealed card, or None for an incomplete run."""
    plan = translated.plan
    ds = plan.corpus.dataset
    lines = [f"# mtboard run — {_md(plan.spec.method.text)} on {_md(ds.id)} {_md(ds.version)}", ""]
    lines += [f"- run id: `{translated.manifest['run_id']}`, started {translated.manifest['timestamp']}",
              f"- dataset: {_md(ds.language_pair)}, segment {plan.entries[0].segment.value if plan.entries else '?'},"
              f" {len(plan.entries)} entries × {plan.settings.runs} run(s)",
              f"- prompt: {_md(plan.spec.prompt_name) if plan.spec.uses_prompt else '(raw source)'}; condition "
              f"{_md(plan.spec.condition)}; temperature {plan.spec.temperature};"
              f" max_tokens {plan.spec.max_tokens if plan.spec.uses_prompt else '-'}",
              f"- api provider: {_md(translated.description.api_provider)}; model id: "
              f"{_md(translated.description.model_id)}",
              f"- translation time: {translated.elapsed_seconds:.1f} s; sent this session: {translated.sent}",
              f"- prices: {_md(price_source, None)}"]
    if translated.description.identity_note:
        lines.append(f"- identity: **WARNING** {_md(translated.description.identity_note, None)}")
    if translated.rate_limited_responses or translated.rate_limit_wait_s:
        lines.append(f"- rate limits: {translated.rate_limited_responses} rate-limited answers; requests waited "
                     f"{translated.rate_limit_wait_s:.1f} s (wall clock) for limits to reset")
    cut = Counter(r.stop_cut for r in translated.records.values() if r.stop_cut is not None)
    if cut:
        lines.append(f"- stop sequences: the server ran past the prompt's stop sequence in {sum(cut.values())} "
                     f"answers ({', '.join(f'{_md(repr(k))} ×{n}' for k, n in sorted(cut.items()))}); mtboard cut "
                     "them there (the server's text is in raw.jsonl)")
    lines.append("")
    if card is not None:
        sc, t = card.scores, card.totals
        lines += ["## Scores (run 0)", "",
                  f"- chrF++ **{sc.chrf_plus_plus:.2f}** (`{sc.signatures.chrf}`)",
                  f"- BLEU {_num(sc.bleu, 2)}; TER {_num(sc.ter, 2)}",
                  f"- composite **{sc.composite:.3f}** (profile {sc.composite_profile}, tier {sc.quality_tier.value})",
                  f"- errors {sc.errors} of {sc.total} (transport {sc.transport_errors})",
                  f"- cost: {_num(t.total_cost_usd, 6)} USD; tokens "
                  f"{tokens_text(t, card.results, language_model=card.method.prompt_format != 'raw')} ({t.reasoning_tokens} "
                  f"reasoning, {t.cached_tokens} cached); retries {t.retries}",
                  f"- latency avg/median/p95: {_num(sc.avg_latency_seconds)} / {_num(sc.median_latency_seconds)} / "
                  f"{_num(sc.p95_latency_seconds)} s; entries/min {_num(sc.entries_per_minute, 1)}; tokens/s "
                  f"{_num(sc.tokens_per_second, 1)}", ""]
        if sc.replicates:
            r = sc.replicates
            lines += [f"- replicates: chrF++ {r.chrf_mean:.2f} ± {r.chrf_stdev:.2f}, composite "
                      f"{r.composite_mean:.3f} ± {r.composite_stdev:.3f} over {r.n} runs", ""]
        lines += judge_section(card, judge_note)
        lines += [card_line(card), ""]
    else:
        lines += ["## No card", "", "The run is incomplete (see the failures below).", ""]
    failed = [r for r in translated.records.values() if r.error_kind is not None]
    kinds = Counter(r.error_kind.value for r in failed if r.error_kind)
    lines += ["## Failures", ""]
    if not failed:
        lines += ["None.", ""]
    else:
        lines += [", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())), "",
                  "| run | entry | kind | attempts | error |", "| --- | --- | --- | --- | --- |"]
        for r in sorted(failed, key=lambda r: (r.run_index, r.entry_id))[:200]:
            lines.append(f"| {r.run_index} | {r.entry_id} | {r.error_kind.value if r.error_kind else ''} | "
                         f"{r.attempts} | {_md(r.error)} |")
        lines.append("")
    if card is not None:
        lines += ["## Entries (run 0)", "", "| entry | chrF++ | latency s | output |", "| --- | --- | --- | --- |"]
        for res in card.results[:500]:
            lines.append(f"| {res.entry_id} | {'' if res.chrf_score is None else f'{res.chrf_score:.1f}'} | "
                         f"{'' if res.latency_s is None else f'{res.latency_s:.2f}'} | {_md(res.predicted)} |")
        lines.append("")
    atomic_write(path, "\n".join(lines).encode("utf-8"))


__all__ = ["REPORT", "write_report", "rejudge_report", "judge_section", "card_line"]

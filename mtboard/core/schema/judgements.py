"""The LLM judges' part of a run card: one judge's verdict on one entry (with its GEMBA-MQM errors) and one judge's
summary over the run (``judges``; filled by :mod:`mtboard.judges`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from mtboard.core.schema.common import Binding, Count, Hex64, NonNeg, Positive, Rate, Strict, Temperature


class MqmError(Strict):
    """One GEMBA-MQM error. The severity must agree with the verdict's score and the summary's severity counts;
    ``non-translation`` is always critical."""

    BINDING: ClassVar[dict[str, Binding]] = {"severity": "consistent", "category": "consistent", "span": "declared"}

    severity: Literal["critical", "major", "minor"]
    category: str
    span: str


class JudgeVerdict(Strict):
    """One judge's verdict on one entry."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "declared", "status": "consistent", "score": "consistent"}

    status: Literal["scored", "judge_failed", "not_sent"]
    """not_sent: no usable output or echoed source (scored the worst value: the translator failed); for the
    checkpoints judge also a paragraph no key point addresses (score None). judge_failed: the judge failed (no answer,
    or none that parsed): no score — the cell is excluded from the judge's mean and reported as missing coverage."""
    score: NonNeg | None = None
    """MQM: penalty (lower better; the sum of its errors' severity weights); rubric: 0–10 total (the sum of the
    subscores); checkpoints: 0–100. None for judge_failed."""
    errors: list[MqmError] = []
    context_behavior: str | None = None
    subscores: dict[str, NonNeg] = {}
    flags: list[str] = []
    justification: str | None = None
    attempts: Count = 0
    raw_answer: str | None = None
    """Kept for judge_failed verdicts (the answer that did not parse)."""


class JudgeSummary(Strict):
    """Aggregate of one judge over the run."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "kind": "consistent", "backend": "consistent", "family_check": "consistent",
        "n_scored": "consistent", "n_failed": "consistent", "n_not_sent": "consistent",
        "parse_failure_rate": "consistent", "mean": "consistent", "spread": "consistent", "breakdown": "consistent",
        "judge_families": "consistent", "translator_families": "consistent", "parser": "consistent",
        "higher_is_better": "consistent", "worst_score": "consistent", "temperature": "consistent",
        "runs": "consistent"}

    kind: Literal["gemba-mqm", "rubric", "checkpoints"]
    backend: str
    model: str
    prompt_sha256: Hex64
    family_check: str
    """'passed', 'passed (judge family declared: F)', 'overridden (--allow-self-judge)' or 'overridden
    (--allow-self-judge; family unknown)' (mtboard.judges.base.check_family; a refused judge leaves no summary)."""
    n_scored: Count
    n_failed: Count
    n_not_sent: Count
    parse_failure_rate: Rate
    mean: NonNeg | None
    """MQM mean penalty (lower better), rubric mean total, checkpoint mean score. Over the judged cells only (scored,
    and not_sent at the worst value); judge_failed cells are excluded (coverage = judged cells ÷ results)."""
    spread: NonNeg | None = None
    """Sample standard deviation of the run scores (checkpoints: one judged run per translation replicate)."""
    breakdown: dict[str, dict[str, NonNeg]] = {}
    """e.g. {'severity': {'major': 3}, 'class': {...}, 'context_behavior': {...}, 'area': {...}}."""
    # Optional judge provenance and accounting (issue 5; filled by mtboard.judges).
    effort: str | None = None
    """Reasoning effort from the judge spec (``KIND=openai:MODEL:EFFORT``)."""
    api_provider: str | None = None
    """Channel serving the judge (openai, openrouter, llama.cpp, local, …)."""
    endpoint_host_sha256: Hex64 | None = None
    """SHA-256 of the judge endpoint's host name (never the URL)."""
    judge_families: list[str] = []
    """Model families of the judge (mtboard.judges.base.FAMILIES)."""
    translator_families: list[str] = []
    """Model families of the translator; the judge is refused when they overlap, unless --allow-self-judge."""
    parser: str | None = None
    """Answer-format parser version (e.g. 'gemba-mqm-context/1 (uncapped)')."""
    higher_is_better: bool | None = None
    """Direction of ``mean`` (False for the MQM penalty)."""
    worst_score: NonNeg | None = None
    """Value given to entries not sent and to judge failures (MQM 25, rubric 0, checkpoints 0)."""
    temperature: Temperature | None = None
    max_tokens: Positive | None = None
    """Explicit output cap sent with every judge request."""
    max_attempts: Positive | None = None
    """Answers asked per entry (per checkpoint run) before judge_failed."""
    runs: Positive = 1
    """Judge replicates (checkpoints: default 3)."""
    run_scores: list[NonNeg] = []
    """Score of each replicate (checkpoints)."""
    n_answers: Count | None = None
    """Judge answers received (all attempts, cache hits included); the denominator of parse_failure_rate."""
    n_unparsed_answers: Count | None = None
    """Answers that did not match the format; the numerator of parse_failure_rate."""
    n_cached_answers: Count | None = None
    """Answers read from the work directory's judge cache instead of being asked again."""
    n_unanswered_calls: Count | None = None
    """Calls that got no answer (transport failure, request rejected)."""
    prompt_tokens: Count | None = None
    """Judge prompt tokens of the answers used (cache hits included)."""
    completion_tokens: Count | None = None
    cost_usd: NonNeg | None = None
    """Judge cost (None without a judge price); counted apart from translation cost."""
    bench: str | None = None
    """Checkpoint benchmark id and key hash prefix (checkpoints)."""
    failed_raw_answers: list[str] = []
    """Raw last answers of failed checkpoint runs (document-level judge)."""

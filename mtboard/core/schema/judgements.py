"""The LLM judges' part of a run card: one judge's verdict on one entry (with its GEMBA-MQM errors) and one judge's
summary over the run (``judges``; filled by :mod:`mtboard.judges`).

Judgements are bound to the judge's words (issue 32, item 4): a per-entry verdict keeps the answer it was decided
by (``raw_answer``), and the validator (:mod:`mtboard.validate.judging`) parses it again with the parser version the
summary records (:mod:`mtboard.judges.parsers`), so every field that follows from the answer is *recomputed* and
every count and aggregate *consistent*. What stays *declared* is listed with its reason in each model's
``DECLARED_WHY`` table (a test requires a reason for every declared judge field)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import SerializerFunctionWrapHandler, model_serializer

from mtboard.core.schema.common import Binding, Count, Hex64, NonNeg, Positive, Rate, Strict, Temperature


class MqmError(Strict):
    """One GEMBA-MQM error. The severity must agree with the verdict's score and the summary's severity counts;
    ``non-translation`` is always critical."""

    BINDING: ClassVar[dict[str, Binding]] = {"severity": "recomputed", "category": "recomputed", "span": "recomputed"}
    """Every field comes from the verdict's ``raw_answer`` parsed again (GEMBA-MQM parser of the recorded version)."""

    severity: Literal["critical", "major", "minor"]
    category: str
    span: str


class JudgeVerdict(Strict):
    """One judge's verdict on one entry.

    Binding (:mod:`mtboard.validate.judging`). For the per-entry judges (GEMBA-MQM, rubric) a ``scored`` verdict is
    its ``raw_answer`` parsed again: ``errors``, ``context_behavior``, ``subscores``, ``flags``, ``justification``
    and ``score`` must equal the parse; a ``judge_failed`` verdict's raw answer must not parse, and its
    justification names that parse's reason (or, after a transport failure, starts ``judge call failed (``); a
    ``not_sent`` verdict is exactly what :func:`mtboard.judges.calls.not_sent` writes for the entry's outcome. For
    the checkpoint judge the key is not in the card, so its answers are not parsed again: ``score`` is 100 × the
    share of ``subscores`` passed, every ``PID:fail`` flag is a failed subscore, ``errors``/``context_behavior``
    are empty, and the point ids, findings and reasons are declared (``CHECKPOINT_DECLARED``)."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "status": "consistent", "score": "consistent", "errors": "recomputed",
        "context_behavior": "recomputed", "subscores": "consistent", "flags": "consistent",
        "justification": "consistent", "attempts": "consistent", "raw_answer": "declared"}
    DECLARED_WHY: ClassVar[dict[str, str]] = {
        "raw_answer": "what the judge said: no check can tell the judge's words from a contributor's unless a judge "
                      "transcript is attested; every verdict field is re-derived from it, so an edited answer "
                      "that parses differently is refused unless the verdict is edited to match, and then the "
                      "edited text is this declared answer",
    }
    """Why each declared field cannot be bound by the validator."""
    CHECKPOINT_DECLARED: ClassVar[dict[str, str]] = {
        "subscores": "the checkpoint judge's point ids: which points address a paragraph is in the key, not in the "
                     "card (checked: each 0 or 1, the score 100 × their mean, the PID:fail flags the failed ones)",
        "flags": "ADDITION / UNTRANSLATED are the checkpoint judge's findings in its document-level answers, not in "
                 "the card (checked: the PID:fail flags are exactly the failed subscores, in order)",
        "justification": "the checkpoint judge's reasons for failed points, from answers the card does not keep",
    }
    """Parts of bound fields that stay declared for the checkpoint judge only, whose answers are parsed against the
    benchmark key, which the card does not hold (BookTrans keeps it out of the translation's reach); the per-entry
    judges' same fields are recomputed from their raw answers."""

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
    """The judge's answer that decided the verdict, verbatim: for ``scored`` the answer that parsed (required for
    the per-entry judges: the validator parses it again; issue 32), for ``judge_failed`` the last answer that did not
    parse (None when no answer arrived, or "" for an empty one); None for ``not_sent`` and for checkpoint verdicts
    that were scored (the checkpoint answers are document-level)."""


class JudgeAdmission(Strict):
    """A judge's admission check (BookTrans: a judge must pass known-answer items before its verdicts count; issue
    39): the fixed item set :mod:`mtboard.judges.admission` ships, each item judged once before the card. A judge
    that is not admitted keeps its verdicts in the card, but the leaderboard does not count them
    (:func:`mtboard.ledger.tables.counted_judges`)."""

    BINDING: ClassVar[dict[str, Binding]] = {"*": "consistent"}

    set_id: str
    """The item set's id (``judge-admission-en-es``)."""
    set_sha256: Hex64
    """SHA-256 of the item set file's bytes; the validator requires the committed one
    (:data:`mtboard.judges.admission.ADMISSION_SET_SHA256`)."""
    items: Count
    """Items in the set (each judged once)."""
    passed: Count
    """Items the judge answered as expected: no major or critical error (MQM) / adequacy at least 3 (rubric) on a
    correct translation; at least one major or critical error / adequacy at most 2 on a planted error."""
    threshold: Count
    """Items to pass for admission (the set's, fixed)."""
    admitted: bool
    """``passed ≥ threshold``."""
    failed_items: list[str] = []
    """Ids of the items not passed (``items − passed`` of them), in set order."""


class JudgeSummary(Strict):
    """Aggregate of one judge over the run."""

    BINDING: ClassVar[dict[str, Binding]] = {
        "*": "declared", "kind": "consistent", "backend": "consistent", "family_check": "consistent",
        "n_scored": "consistent", "n_failed": "consistent", "n_not_sent": "consistent",
        "parse_failure_rate": "consistent", "mean": "consistent", "spread": "consistent", "breakdown": "consistent",
        "judge_families": "consistent", "translator_families": "consistent", "parser": "consistent",
        "higher_is_better": "consistent", "worst_score": "consistent", "temperature": "consistent",
        "runs": "consistent", "n_answers": "consistent", "n_unparsed_answers": "consistent",
        "n_unanswered_calls": "consistent", "run_scores": "consistent", "admission": "consistent"}
    DECLARED_WHY: ClassVar[dict[str, str]] = {
        "model": "the judge model as typed; only its server knows what it served (its families are checked against "
                 "it, and it enters the fingerprint)",
        "prompt_sha256": "the judge prompt file's hash; a custom prompts folder (MTBOARD_PROMPTS_DIR) is allowed, "
                         "so the validator has no file to hash",
        "effort": "the reasoning effort typed in the judge spec; only a re-run shows what the server did with it",
        "api_provider": "the channel that served the judge, a fact of the judging machine",
        "endpoint_host_sha256": "the hash of the judge endpoint's host name, a fact of the judging machine",
        "max_tokens": "the output cap sent with each request; the answers do not show it",
        "max_attempts": "the attempt limit typed on the command line; a judge whose answers all parsed first time "
                        "never shows it (checked: no verdict took more, and one that failed because no answer "
                        "parsed took exactly this many)",
        "n_cached_answers": "which answers the work directory's cache already held is a fact of the judging "
                            "machine (checked: at most n_answers)",
        "prompt_tokens": "the judge server's usage report (the card's judge totals are their sums)",
        "completion_tokens": "the judge server's usage report (the card's judge totals are their sums)",
        "cost_usd": "usage × the judge prices given on the command line, which the card does not record",
        "bench": "the checkpoint benchmark's id and key hash: the key is not in the card (checked: None for the "
                 "per-entry judges)",
        "failed_raw_answers": "what the checkpoint judge said on failed runs; its answers are parsed against the "
                              "key, which is not in the card (checked: one per failed run, none for the per-entry "
                              "judges)",
    }
    """Why each declared field cannot be bound by the validator."""
    CHECKPOINT_DECLARED: ClassVar[dict[str, str]] = {
        "run_scores": "each replicate's score comes from the benchmark key and penalties, not in the card (checked: "
                      "mean, spread and breakdown.runs are theirs, and one failed raw answer per failed run)",
        "breakdown": "area, penalty and point rates come from the key (checked: breakdown.runs and breakdown.mean)",
        "n_answers": "the checkpoint judge's answers of every replicate are not in the card (checked: "
                     "parse_failure_rate = n_unparsed_answers / n_answers)",
        "n_unanswered_calls": "likewise: the calls of every replicate are not in the card",
    }
    """Parts of bound fields that stay declared for the checkpoint judge only (see
    :attr:`JudgeVerdict.CHECKPOINT_DECLARED`)."""

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
    """Answers asked per entry (per checkpoint run) before judge_failed. Declared, but checked: no verdict took
    more, and a verdict that failed because no answer parsed took exactly this many."""
    runs: Positive = 1
    """Judge replicates (checkpoints: default 3)."""
    run_scores: list[NonNeg] = []
    """Score of each replicate (checkpoints)."""
    n_answers: Count | None = None
    """Judge answers received (all attempts, cache hits included); the denominator of parse_failure_rate.
    Per-entry judges: the verdicts' attempts sum to ``n_answers + n_unanswered_calls``."""
    n_unparsed_answers: Count | None = None
    """Answers that did not match the format; the numerator of parse_failure_rate. Per-entry judges:
    ``n_answers − n_scored`` (each scored verdict rests on exactly one answer that parsed)."""
    n_cached_answers: Count | None = None
    """Answers read from the work directory's judge cache instead of being asked again."""
    n_unanswered_calls: Count | None = None
    """Calls that got no answer (transport failure, request rejected). Per-entry judges: the judge_failed verdicts
    whose justification says ``judge call failed`` (each such call ends its entry)."""
    prompt_tokens: Count | None = None
    """Judge prompt tokens of the answers used (cache hits included)."""
    completion_tokens: Count | None = None
    cost_usd: NonNeg | None = None
    """Judge cost (None without a judge price); counted apart from translation cost."""
    bench: str | None = None
    """Checkpoint benchmark id and key hash prefix (checkpoints)."""
    failed_raw_answers: list[str] = []
    """Raw last answers of failed checkpoint runs (document-level judge)."""
    admission: JudgeAdmission | None = None
    """The judge's admission check (per-entry judges; issue 39); absent on judges judged before it existed (and on
    the checkpoint judge, whose key is the card's own benchmark). A judge with ``admitted`` false is kept but not
    counted on the board."""

    @model_serializer(mode="wrap")
    def _omit_absent_admission(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)  # summaries written before the admission check keep their bytes
        if data.get("admission") is None:
            data.pop("admission", None)
        return data

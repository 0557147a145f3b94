"""The planned card (issue 33 item 4): every card rule a run can check before its first request is checked then.

A card rule broken by a value the command line, the corpus, the prompt or the backend's static facts decide (a
4,000-character ``--method`` model, a 101-character ``--condition``, an API key in ``--notes``, a corpus whose card
would exceed the card size limit) used to surface only when the finished card was assembled — after every request
was paid for — and then no card was written. :func:`check_planned_card` assembles the card the run will write
(:func:`mtboard.score.card.planned_card`: the same functions and pydantic models as the finished card, answers
replaced by placeholders in range), so a rule of the schema is checked by the schema itself (a new ``maxLength``
or ``pattern`` is checked with no change here), and runs the validator's checks whose inputs are all known now:
``names`` (:func:`mtboard.validate.naming.check_names`), ``method`` (:func:`mtboard.validate.structure.check_method`:
the method string, its model slug, prompt and prices) and ``secrets`` (:func:`mtboard.validate.hygiene
.check_secrets_value`), plus the size a card may have (:func:`mtboard.score.card.planned_card_bytes` against
:data:`mtboard.core.safejson.MAX_CARD_BYTES`). The first problem is one :class:`~mtboard.core.errors.ConfigError`
naming the option it comes from (:data:`SOURCES`), the rule and the fix; nothing has been sent.

What a server reports back (the model id it echoes, the weights it names) cannot be known before: the finished card
replaces a reported name it cannot hold by the name as typed (:func:`mtboard.score.card.fit_reported_names`), and a
finished card that still breaks a rule is refused with the work directory kept
(:func:`mtboard.run.runner.build_card`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mtboard.core.documents import card_json
from mtboard.core.errors import ConfigError
from mtboard.core.safejson import MAX_CARD_BYTES
from mtboard.core.schema import BackendFacts, Entry, RunCard
from mtboard.inputs.prices import PriceTable, resolve_rates
from mtboard.inputs.runspec import RunSpec
from mtboard.score.card import planned_card, planned_card_bytes

if TYPE_CHECKING:
    from mtboard.backends.base import Backend
    from mtboard.run.settings import RunSettings

SOURCES: tuple[tuple[str, str], ...] = (
    ("$.model_slug", "--method"), ("$.method_config.model", "--method"), ("$.method.spec", "--method"),
    ("$.method.backend", "--method"), ("$.method.model", "--method"), ("$.method.effort", "--method"),
    ("$.method_class", "--method"), ("$.batch_size", "--method"), ("$.method_config.batchSize", "--method"),
    ("$.condition", "--condition"), ("$.notes", "--notes"),
    ("$.temperature", "--temperature"), ("$.method_config.temperature", "--temperature"),
    ("$.method.sampling", "--temperature"), ("$.method.max_tokens", "--max-tokens"),
    ("$.method.concurrency", "--concurrency"), ("$.method.runs", "--runs"), ("$.replicate_runs", "--runs"),
    ("$.method.limit", "--limit"), ("$.method.fst_retries", "--fst-retries"), ("$.tools_enabled", "--tools"),
    ("$.method.format_attempts", "--format-attempts"), ("$.method.arm", "--arm"), ("$.method.history", "--history"),
    ("$.method.price_in_per_mtok", "--price-in"), ("$.method.price_out_per_mtok", "--price-out"),
    ("$.method.price", "prompts/prices.yaml"), ("$.method.prompt", "--prompt"), ("$.system_prompt", "--prompt"),
    ("$.method_config.promptContext", "--prompt"), ("$.coaching_data_sha256", "--coaching"),
    ("$.method_config.coaching", "--coaching"), ("$.max_retries", "max_retries"),
    ("$.method.plugin", "the backend's plugin"), ("$.method.local", "--backend-opt"),
    ("$.method.api_provider", "--base-url"), ("$.method.endpoint_host_sha256", "--base-url"),
    ("$.judges.*.max_tokens", "--judge-max-tokens"), ("$.judges.*.max_attempts", "--judge-max-attempts"),
    ("$.judges.*.cost_usd", "--judge-price-in"), ("$.totals.judge_cost_usd", "--judge-price-in"),
    ("$.judges.*.judge_families", "--judge-family"), ("$.judges.*.translator_families", "--translator-family"),
    ("$.judges.*.family_check", "--judge"), ("$.judges", "--judge"), ("$.results.judgements", "--judge"),
    ("$.dataset", "CORPUS"), ("$.results", "CORPUS"),
    ("$.fingerprint.components.model_slug", "--method"), ("$.fingerprint.components.condition", "--condition"),
    ("$.fingerprint.components.temperature", "--temperature"),
    ("$.fingerprint.components.max_tokens", "--max-tokens"), ("$.fingerprint.components.judge", "--judge"),
    ("$.fingerprint.components.prompt", "--prompt"), ("$.fingerprint.components.system_prompt", "--prompt"),
    ("$.fingerprint.components.coaching", "--coaching"), ("$.fingerprint.components.tools", "--tools"),
    ("$.fingerprint.components.fst_retries", "--fst-retries"),
    ("$.fingerprint.components.format_attempts", "--format-attempts"),
    ("$.fingerprint.components.arm", "--arm"), ("$.fingerprint.components.history", "--history"),
    ("$.fingerprint.components.dataset", "CORPUS"), ("$.fingerprint.components.entry_ids", "CORPUS"),
)
"""JSON path prefix of a card field → the option (or file) that decides its value, first match wins (``$.method.price``
covers the table's cached/reasoning rates and date, after the two command-line rates)."""

_MODELS = {"RunCard": "$", "JudgeSummary": "$.judges.*", "JudgeVerdict": "$.results[].judgements.*",
           "MethodRecord": "$.method", "MethodConfig": "$.method_config", "DatasetRef": "$.dataset",
           "PluginRecord": "$.method.plugin", "EntryResult": "$.results[]", "Scores": "$.scores",
           "Totals": "$.totals"}
"""Where the model a pydantic error names (its ``title``) sits in the card: :func:`planned_card` builds the
sub-models one by one, so an error's location is relative to the one that refused."""


def judge_specs(value: str | list[str] | None) -> list[str]:
    """Judge specs from ``--judge`` values: repeatable and/or comma-separated; ``none`` (alone) means no judge.

    ``["gemba-mqm=openai:a,rubric=openai:b"]`` → ``["gemba-mqm=openai:a", "rubric=openai:b"]``; ``"none"`` → ``[]``.
    Raises: ConfigError when ``none`` is mixed with judge specs.
    """
    items = [value] if isinstance(value, str) else list(value or [])
    specs = [part.strip() for item in items for part in item.split(",") if part.strip()]
    if "none" in specs:
        if len(specs) > 1:
            raise ConfigError("--judge none cannot be combined with judge specs", field="--judge",
                              fix="drop 'none', or drop the judge specs")
        return []
    return specs


class PlannedCardError(ConfigError):
    """A card rule the planned card breaks (:func:`check_planned_card`), found before anything was sent. A
    :class:`~mtboard.core.errors.ConfigError` (same one line, same exit code); its own class so that a caller checking
    many runs at once — ``mtboard sweep plan`` / ``sweep run`` (:func:`mtboard.sweeps.execute.check_cells`) — tells a
    card rule the sweep file breaks from an environment that cannot run a cell here (issue 33 item 4, second review
    finding 5)."""


PLANNED_JUDGEMENT = "planned: not judged yet"
"""The justification of a planned card's placeholder verdicts (:func:`with_planned_judges`)."""


def with_planned_judges(card: RunCard, spec: RunSpec, settings: RunSettings) -> RunCard:
    """The planned card with the judges ``--judge`` will add (issue 33 item 4, review finding 3): for each judge
    spec, the summary the judge hook (:func:`mtboard.judges.run.run_judges_async`) writes with every field the
    command line decides — kind, backend, model, effort, prompt hash (for ``checkpoints`` over the template and the
    ``--bench`` key), parser, max tokens and attempts, runs, temperature, the endpoint's provider and host hash, the
    families and ``family_check`` from the typed names, ``--judge-family`` and ``--translator-family``
    (:func:`mtboard.judges.base.check_family`) — and a ``judge_failed`` placeholder verdict per result; what only the
    judge's answers decide (scores, counts, tokens) is empty. Applied as the hook applies it
    (:func:`mtboard.judges.run.apply_judgements`: the fingerprint's ``judge_model``/``judge_prompt_sha256`` too).

    What the servers report (the translator's weights, the judge's served model) may add families later: the family
    status is planned as ``check_family`` records it with ``--allow-self-judge`` (a shared or unknown family is
    refused before the first request by :func:`mtboard.run.runner.preflight_judges` and
    :func:`mtboard.run.runner.check_judges_before_sending`, with what the servers say).
    A card without ``--judge`` is returned unchanged.

    Raises: ConfigError (``--judge``: a bad spec; ``--judge-family`` / ``--translator-family``: an unknown family),
    InputError (the ``--bench`` folder), pydantic ValidationError (title ``JudgeSummary``) for a value the schema
    refuses."""
    texts = judge_specs(settings.judge)
    if not texts:
        return card
    from mtboard.core.schema import JudgeSummary, JudgeVerdict
    from mtboard.judges import apply_judgements, judge_endpoint, load_bench
    from mtboard.judges.base import REGISTRY, check_family, load_judge_prompt, parse_judge_spec
    from mtboard.judges.calls import JUDGE_TEMPERATURE
    from mtboard.core.canonical import canonical_bytes, sha256_hex
    from mtboard.inputs.runspec import endpoint_host_sha256
    from mtboard.llm.transport import infer_provider

    try:
        url: str | None = judge_endpoint(settings.base_url)[0]
    except ConfigError:  # preflight_judges names the missing endpoint
        url = None
    endpoint = {"api_provider": infer_provider(url) if url else None, "endpoint_host_sha256": endpoint_host_sha256(url)}
    translator = [card.model_slug, card.method.model, card.model_id]
    summaries: dict[str, JudgeSummary] = {}
    verdicts: dict[str, list[JudgeVerdict]] = {}
    for js in (parse_judge_spec(t) for t in texts):
        cls = REGISTRY[js.kind]
        prompt_sha = load_judge_prompt(cls.prompt_name).sha256
        if js.kind == "checkpoints" and settings.bench is not None:
            key = load_bench(settings.bench).key_sha256
            prompt_sha = sha256_hex(canonical_bytes({"template": prompt_sha, "key": key}))
        fam = check_family(js.model, translator, allow_self_judge=True, judge_family=settings.judge_family,
                           translator_is_llm=spec.uses_prompt, translator_family=settings.translator_family)
        priced = settings.judge_price_in is not None and settings.judge_price_out is not None
        n = len(card.results)
        summaries[js.kind] = JudgeSummary.model_validate({
            "kind": js.kind, "backend": js.backend, "model": js.model, "effort": js.effort,
            "prompt_sha256": prompt_sha, "family_check": fam.status, "judge_families": list(fam.judge_families),
            "translator_families": list(fam.translator_families), "n_scored": 0, "n_failed": n, "n_not_sent": 0,
            "parse_failure_rate": 0.0, "n_answers": 0, "n_unparsed_answers": 0, "n_cached_answers": 0,
            "n_unanswered_calls": n, "mean": None, "spread": None, "breakdown": {},
            "higher_is_better": cls.higher_is_better, "worst_score": cls.worst_score, "parser": cls.parser_version,
            "max_attempts": settings.judge_max_attempts, "runs": card.method.runs if js.kind == "checkpoints" else 1,
            "temperature": JUDGE_TEMPERATURE, "max_tokens": settings.judge_max_tokens or cls.default_max_tokens,
            "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0 if priced else None, **endpoint})
        verdicts[js.kind] = [JudgeVerdict(status="judge_failed", score=None, attempts=settings.judge_max_attempts,
                                          justification=PLANNED_JUDGEMENT)] * n
    return apply_judgements(card, verdicts, summaries)


def source_of(path: str) -> str:
    """The option or file that decides the card field at JSON path ``path`` (:data:`SOURCES`); ``"the run"`` for a
    field no option decides. A list index (``[0]``, ``[]``) is ignored and a judge's key reads as ``*``:
    ``$.judges.rubric.max_tokens`` → ``--judge-max-tokens``, ``$.fingerprint.components.condition`` →
    ``--condition``."""
    bare = re.sub(r"^\$\.judges\.[^.]+", "$.judges.*", re.sub(r"\[\d*\]", "", path))
    for prefix, option in SOURCES:
        if bare == prefix or bare.startswith(prefix):
            return option
    return "the run"


def _fix(option: str, settings: RunSettings) -> str:
    if option == "CORPUS":
        return f"correct the corpus file {settings.corpus_path} (mtboard corpus check)"
    if option.startswith("--"):
        return f"change {option}"
    return f"correct {option}"


def _excerpt(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= 40 else text[:40] + "…")


def schema_error(exc: ValidationError, spec: RunSpec, settings: RunSettings) -> PlannedCardError:
    """The first problem of a planned card the schema refused, as one ConfigError naming the option, the card field,
    the rule and the fix (a model name too long says how many characters the model part may have)."""
    err = exc.errors(include_url=False)[0]
    path = _MODELS.get(exc.title, "$") + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
    path = path.replace("$.results[][0]", "$.results[0]")
    option = source_of(path)
    ctx, kind, value = err.get("ctx") or {}, err["type"], err.get("input")
    field = path.removeprefix("$.")
    fix = _fix(option, settings)
    if kind == "string_too_long":
        limit = int(ctx.get("max_length", 0))
        problem = (f"the run card's {field} would be {len(value)} characters ({_excerpt(value)}), over the "
                   f"{limit} the card allows")
        model = spec.public_method.model
        if option == "--method" and model and model in value:
            room = limit - (len(value) - len(model))
            fix = (f"give a model name of at most {room} characters (a server can serve the model under a shorter "
                   "alias: llama-server --alias, vLLM --served-model-name, an Ollama tag)")
        elif option.startswith("--"):
            fix = f"give {option} at most {limit} characters"
    elif kind == "string_too_short":
        problem = f"the run card's {field} would be empty"
        fix = f"give {option} a value" if option.startswith("--") else fix
    elif kind == "string_pattern_mismatch":
        problem = f"the run card's {field} {_excerpt(value)} does not match the pattern {ctx.get('pattern')}"
    elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        problem = f"the run card's {field} would be {value}: {err['msg'].lower()}"
    else:
        problem = f"the run card's {field}: {err['msg']}"
    return PlannedCardError(problem + "; nothing was sent", field=option, fix=fix)


def _validator_problems(card: RunCard) -> list[tuple[str | None, str, str]]:
    """``(JSON path, check, message)`` of the validator's checks whose inputs a planned card holds for real."""
    from mtboard.validate.hygiene import check_secrets_value
    from mtboard.validate.naming import check_names
    from mtboard.validate.report import CardRun
    from mtboard.validate.structure import check_method

    run = CardRun("planned card")
    check_names(run, card)
    check_method(run, card)
    check_secrets_value(run, card_json(card))
    if card.judges:  # the judge modules only for a run with --judge (issue 35 item 4)
        from mtboard.validate.judging import check_judge_declaration

        for kind, summary in sorted(card.judges.items()):
            check_judge_declaration(run, card, kind, summary)
    problems = [(p.field, p.check, p.message) for p in run.problems]
    # a value the fingerprint copies is reported where the option put it (condition, not fingerprint.components…)
    return sorted(problems, key=lambda p: (source_of(p[0] or "$") == "the run",
                                           (p[0] or "").startswith("$.fingerprint.")))


def check_planned_card(spec: RunSpec, settings: RunSettings, backend_cls: type[Backend], entries: list[Entry],
                       prices: PriceTable | None) -> RunCard:
    """Assemble the planned card (:func:`mtboard.score.card.planned_card`) and check every rule it can show before
    the first request (module docstring). Returns the planned card.

    Raises: :class:`PlannedCardError` (a ConfigError) naming the option (``--method``, ``--condition``, ``--notes``,
    ``CORPUS`` …), the card field, the rule and the fix — for a value the card's schema refuses, a problem of the
    validator's ``names``, ``method`` or ``secrets`` checks, or a card that would be larger than
    :data:`~mtboard.core.safejson.MAX_CARD_BYTES`."""
    m = spec.public_method
    facts = BackendFacts(endpoint_host_sha256=spec.endpoint_host_sha256,
                         model_slug=backend_cls.model_slug_for(m.model, m.effort))
    rates, _ = resolve_rates(spec, facts, priced=backend_cls.priced, price_in=settings.price_in,
                             price_out=settings.price_out, table=prices)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        card = planned_card(spec, facts, entries, rates=rates, strip_unknown_marks=backend_cls.strip_unknown_marks,
                            timestamp=now, notes=settings.notes)
        card = with_planned_judges(card, spec, settings)
    except ValidationError as exc:
        raise schema_error(exc, spec, settings) from None
    except ConfigError as exc:  # a --judge spec or family the command line gets wrong: a card rule too
        if isinstance(exc, PlannedCardError):
            raise
        raise PlannedCardError(exc.problem, where=exc.where, field=exc.field, fix=exc.fix) from None
    for path, check, message in _validator_problems(card):
        option = source_of(path or "$")
        if check == "secrets":
            message = message.replace("; remove it, rotate the key, and re-run", "")
            raise PlannedCardError(f"the run card's {(path or '$').removeprefix('$.')} would hold what {message}; "
                                   "nothing was sent", field=option,
                                   fix=f"remove it from {option} and rotate the key (a key is never written into a "
                                       "card)")
        raise PlannedCardError(f"the run card's {(path or '$').removeprefix('$.')} would fail the validator's {check} "
                               f"check: {message}; nothing was sent", field=option, fix=_fix(option, settings))
    size = planned_card_bytes(card, entries)
    if size > MAX_CARD_BYTES:
        raise PlannedCardError(f"the run card would be at least {size:,} bytes ({len(entries)} entries × {spec.runs} "
                               f"run(s)), over the {MAX_CARD_BYTES:,} a card may hold; nothing was sent",
                               field="--limit", fix="run fewer entries (--limit N), fewer --runs, or a smaller segment")
    return card


__all__ = ["SOURCES", "PLANNED_JUDGEMENT", "PlannedCardError", "check_planned_card", "judge_specs", "schema_error",
           "source_of", "with_planned_judges"]

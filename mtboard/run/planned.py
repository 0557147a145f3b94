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
    ("$.method.price_in_per_mtok", "--price-in"), ("$.method.price_out_per_mtok", "--price-out"),
    ("$.method.price", "prompts/prices.yaml"), ("$.method.prompt", "--prompt"), ("$.system_prompt", "--prompt"),
    ("$.method_config.promptContext", "--prompt"), ("$.coaching_data_sha256", "--coaching"),
    ("$.method_config.coaching", "--coaching"), ("$.max_retries", "max_retries"),
    ("$.method.plugin", "the backend's plugin"),
    ("$.dataset", "CORPUS"), ("$.results", "CORPUS"),
)
"""JSON path prefix of a card field → the option (or file) that decides its value, first match wins (``$.method.price``
covers the table's cached/reasoning rates and date, after the two command-line rates)."""

_MODELS = {"RunCard": "$", "MethodRecord": "$.method", "MethodConfig": "$.method_config", "DatasetRef": "$.dataset",
           "PluginRecord": "$.method.plugin", "EntryResult": "$.results[]", "Scores": "$.scores",
           "Totals": "$.totals"}
"""Where the model a pydantic error names (its ``title``) sits in the card: :func:`planned_card` builds the
sub-models one by one, so an error's location is relative to the one that refused."""


def source_of(path: str) -> str:
    """The option or file that decides the card field at JSON path ``path`` (:data:`SOURCES`); ``"the run"`` for a
    field no option decides."""
    bare = path.replace("[]", "")
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


def schema_error(exc: ValidationError, spec: RunSpec, settings: RunSettings) -> ConfigError:
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
    return ConfigError(problem + "; nothing was sent", field=option, fix=fix)


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
    return [(p.field, p.check, p.message) for p in run.problems]


def check_planned_card(spec: RunSpec, settings: RunSettings, backend_cls: type[Backend], entries: list[Entry],
                       prices: PriceTable | None) -> RunCard:
    """Assemble the planned card (:func:`mtboard.score.card.planned_card`) and check every rule it can show before
    the first request (module docstring). Returns the planned card.

    Raises: ConfigError naming the option (``--method``, ``--condition``, ``--notes``, ``CORPUS`` …), the card field,
    the rule and the fix — for a value the card's schema refuses, a problem of the validator's ``names``, ``method``
    or ``secrets`` checks, or a card that would be larger than :data:`~mtboard.core.safejson.MAX_CARD_BYTES`."""
    m = spec.public_method
    facts = BackendFacts(endpoint_host_sha256=spec.endpoint_host_sha256,
                         model_slug=backend_cls.model_slug_for(m.model, m.effort))
    rates, _ = resolve_rates(spec, facts, priced=backend_cls.priced, price_in=settings.price_in,
                             price_out=settings.price_out, table=prices)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        card = planned_card(spec, facts, entries, rates=rates, strip_unknown_marks=backend_cls.strip_unknown_marks,
                            timestamp=now, notes=settings.notes)
    except ValidationError as exc:
        raise schema_error(exc, spec, settings) from None
    for path, check, message in _validator_problems(card):
        option = source_of(path or "$")
        if check == "secrets":
            message = message.replace("; remove it, rotate the key, and re-run", "")
            raise ConfigError(f"the run card's {(path or '$').removeprefix('$.')} would hold what {message}; nothing "
                              "was sent", field=option, fix=f"remove it from {option} and rotate the key (a key is "
                                                            "never written into a card)")
        raise ConfigError(f"the run card's {(path or '$').removeprefix('$.')} would fail the validator's {check} "
                          f"check: {message}; nothing was sent", field=option, fix=_fix(option, settings))
    size = planned_card_bytes(card, entries)
    if size > MAX_CARD_BYTES:
        raise ConfigError(f"the run card would be at least {size:,} bytes ({len(entries)} entries × {spec.runs} "
                          f"run(s)), over the {MAX_CARD_BYTES:,} a card may hold; nothing was sent",
                          field="--limit", fix="run fewer entries (--limit N), fewer --runs, or a smaller segment")
    return card


__all__ = ["SOURCES", "check_planned_card", "schema_error", "source_of"]

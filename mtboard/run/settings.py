"""What ``mtboard run`` was asked to do: :class:`RunSettings`, one frozen, validated pydantic model (issue 30).

One path for a run's settings: the command line → :class:`RunSettings` → :func:`mtboard.run.runner.prepare` → the
frozen :class:`~mtboard.inputs.runspec.RunSpec` (HELM's split of what to run from the code that runs it). The model
drives ``mtboard run --help`` as simonw/llm's option models do: each field's ``description`` IS the help line of its
option, its range (``ge``/``le``/``gt``) is checked here and shown there, so adding a setting is one field.
:mod:`mtboard.cli.options` builds the typer options from the fields; ``json_schema_extra`` tells it how a field is
spelt on the command line:

* ``flag``: the option's name (default ``--`` + the field name with dashes: ``max_tokens`` → ``--max-tokens``);
* ``argument``: the field is the positional argument of that name (``CORPUS``);
* ``metavar``: what the help shows for the value (``N``, ``TOOL``);
* ``cli: False``: no option (set by the CLI from the environment, or by library callers only).

A bool field is a flag: ``--allow-incomplete``; one that defaults to True is turned off by ``--no-`` and its name
(``--no-early-gate``). A mapping field is given as repeatable ``KEY=VALUE`` strings
(:func:`parse_backend_opts`); a list field is repeatable.

Construction refuses a bad value with a :class:`~mtboard.core.errors.ConfigError` naming the option and the fix
(``--runs must be at least 1``), never a pydantic traceback (:func:`settings_error`). The model is frozen: a caller
that needs other settings makes a copy with ``settings.model_copy(update={...})`` (which does not re-validate: give
it values of the fields' types).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from mtboard.core.errors import ConfigError
from mtboard.core.names import NameRefused, codepoint, validate_name
from mtboard.core.safejson import MAX_SAFE_INT
from mtboard.inputs.tools import DEFAULT_FST_RETRIES, MAX_FST_RETRIES

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

    # imported when the first RunSettings is built (_complete): `mtboard --help` builds the run command's options from
    # this model, and importing every document model would cost it ~0.3 s
    from mtboard.core.schema import Segment


CARD_INT_MAX = MAX_SAFE_INT - 1
"""The largest integer a run card can hold: the card is written as RFC 8785 canonical JSON, whose numbers are
I-JSON's (RFC 7493 §2.2: integers within ±(2**53 − 1); the ``rfc8785`` library refuses 2**53 with "exceeds safe
integer domain"). Every integer option that reaches the card (``--max-tokens``, ``--runs``, ``--limit`` …) is
bounded by it (:meth:`RunSettings._card_can_hold`), so ``--max-tokens 99999999999999999999`` is one line naming
the option, before anything is sent (issue 33 review finding 10)."""

MAX_PRICE_PER_MTOK = 1e12
"""The largest float an option takes (a price per 1M tokens in USD, a temperature, a timeout): far above any real
one, and small enough that a cost (tokens × price, tokens below :data:`CARD_INT_MAX`) stays a finite number the card
can hold."""


def parse_backend_opts(items: list[str] | tuple[str, ...] | None) -> dict[str, str]:
    """``["n_ctx=4096", "server=llama-cpp-python"]`` → ``{"n_ctx": "4096", "server": "llama-cpp-python"}``.

    Values stay strings here; the backend's ``Options`` model (:meth:`Backend.parse_options`) checks and converts
    them in :func:`mtboard.run.runner.prepare`. Raises: ConfigError for an item without ``KEY=`` or a key given twice.
    """
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--backend-opt {item!r} is not KEY=VALUE", field="--backend-opt",
                              fix="write e.g. --backend-opt n_ctx=4096 (repeat the option for more settings)")
        if key in out:
            raise ConfigError(f"--backend-opt {key} given twice", field="--backend-opt", fix="give each key once")
        out[key] = value.strip()
    return out


class RunSettings(BaseModel):
    """Everything ``mtboard run`` was asked to do: one field per option, its description the option's help
    (module docstring). Keyword construction only; raises ConfigError for a value out of range or of the wrong type.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    corpus_path: Path = Field(description="Corpus JSON file (spec §2).", json_schema_extra={"argument": "CORPUS"})
    method: str = Field(description="backend:model[:effort], e.g. apertium:eng-spa, openai:gpt-4o-mini, "
                                    "openai:qwen3:8b:medium, gguf:PATH, echo:, empty:.")
    prompt: str | None = Field(None, description=(
        "Prompt template name under prompts/ (default: the native format of the served model's family where the "
        "backend can tell it — a self-hosted llama.cpp, llama-cpp-python, Ollama or vLLM server, a local GGUF file —, "
        "else the backend's; the card's method.prompt_choice says which and why)."))
    coaching: Path | None = Field(None, description=(
        "Coaching data (glossary, grammar notes, examples; UTF-8 text) the prompt receives as `coaching`: hashed into "
        "coaching_data_sha256 and the fingerprint; the method class becomes coached-llm (spec §3.2, §9.6)."))
    tools: tuple[str, ...] | list[str] | str | None = Field(None, json_schema_extra={"metavar": "TOOL"}, description=(
        "Tools the method uses: fst-gate (check each hypothesis with the target language's lttoolbox analyser and "
        "ask again naming the rejected words). Needs a prompt declaring fst_feedback (fst-gated-chat, "
        "fst-gated-few-shot-completion); the class becomes pipeline (spec §3.2, §9.6)."))
    fst_retries: int | None = Field(None, ge=0, le=MAX_FST_RETRIES, json_schema_extra={"metavar": "N"}, description=(
        f"With --tools fst-gate: retries after the first hypothesis when words are rejected (default "
        f"{DEFAULT_FST_RETRIES})."))
    format_attempts: int = Field(1, ge=1, le=5, json_schema_extra={"metavar": "N"}, description=(
        "Answers asked per entry when an answer fails the mechanical format rules (no usable output, format.* "
        "flags), 1-5; each extra one is penalised in the composite (docs/SCORING_SPEC.md §3.4). Default 1: ask once."))
    condition: str | None = Field(None, description="Experiment label (default: the prompt name).")
    temperature: float | None = Field(None, ge=0, description="Sampling temperature (default 0 for LLMs).")
    max_tokens: int = Field(512, ge=1,
                            description="Explicit generation cap sent with every request.")
    concurrency: int | None = Field(None, ge=1,
                                    description="Requests/batches in flight (default: the backend's).")
    runs: int = Field(1, ge=1, description="Replicate runs, run concurrently (3 recommended for "
                                                            "LLMs); the card reports mean and spread.")
    judge: str | list[str] | None = Field(None, description=(
        "Judge KIND=openai:MODEL[:EFFORT] (KIND: gemba-mqm, rubric, checkpoints); repeatable or comma-separated; "
        "none (default) = judge later with `mtboard judge WORKDIR`. Checked before anything is translated."))
    allow_self_judge: bool = Field(False, description="Accept a judge from the translator's model family (recorded "
                                                      "in the card).")
    bench: Path | None = Field(None, description="Checkpoint benchmark folder (bench.json + corpus + key); required "
                                                 "by the checkpoints judge.")
    judge_max_tokens: int | None = Field(None, ge=1, description=(
        "Output-token cap per judge request (default per judge)."))
    judge_max_attempts: int = Field(3, ge=1, description=(
        "Judge answers asked per entry before judge_failed (parse failures are re-asked)."))
    judge_concurrency: int = Field(4, ge=1, description="Judge requests in flight.")
    judge_price_in: float | None = Field(None, ge=0,
                                         description="USD per 1M judge prompt tokens (for judge cost).")
    judge_price_out: float | None = Field(None, ge=0,
                                          description="USD per 1M judge completion tokens.")
    judge_family: str | None = Field(None, description=(
        "The judge model's family when neither its name nor its server tells it (e.g. qwen; docs/judges.md); an "
        "unknown family is refused for LLM translators."))
    translator_family: str | None = Field(None, description=(
        "The translator model's family when neither its name nor its server tells it (e.g. qwen; docs/judges.md); "
        "checked against the judge like a found one and recorded in the card's judges.*.family_check."))
    early_gate: bool = Field(True, description=(
        "Early gate (on by default): stop a prompted run when most of its first entries hit the token cap or echo "
        "chat-template markup, and suggest the completion prompt; --no-early-gate runs on (e.g. to publish a "
        "mismatched prompt as a negative result)."))
    backend_extra: dict[str, Any] = Field(default_factory=dict, json_schema_extra={
        "flag": "--backend-opt", "metavar": "KEY=VALUE"}, description=(
        "Backend setting KEY=VALUE, repeatable; `mtboard backends` lists each backend's settings with type, default "
        "and meaning. Unknown keys are refused."))
    segment: Segment = Field("development", validate_default=True, description="Corpus segment to evaluate.")
    arm: str | None = Field(None, json_schema_extra={"metavar": "ARM"}, description=(
        "Corpus view of a dialogue corpus (docs/sweeps.md, issue 40): lines (every line alone, no history), "
        "scene-bare (each scene's last line alone), scene-context (that line with its scene's earlier lines as "
        "history), scene-full (the whole scene as one segment). Default: the entries as stored. Recorded on the "
        "card (method.arm) and in its fingerprint; the limit then counts lines or scenes."))
    history: int | None = Field(None, ge=0, le=1000, json_schema_extra={"metavar": "N"}, description=(
        "Keep only the last N lines of each entry's history (0: none); with no arm or the scene-context arm. "
        "Recorded on the card (method.history) and in its fingerprint."))
    limit: int | None = Field(None, ge=1, description="Only the first N entries of the segment.")
    work_dir: Path | None = Field(None, description="Work directory (resumable; default "
                                                    "runs/DATASET/METHOD-CONDITION-SEGMENT).")
    out: Path | None = Field(None, description="Run card path (default WORKDIR/card.json).")
    base_url: str | None = Field(None, description=(
        "OpenAI-compatible endpoint (default $OPENAI_BASE_URL, else https://api.openai.com/v1); the key comes only "
        "from $OPENAI_API_KEY."))
    allow_incomplete: bool = Field(False, description="Write a card even when entries failed in transport (they "
                                                      "score 0).")
    price_in: float | None = Field(None, ge=0,
                                   description="USD per 1M prompt tokens (overrides prompts/prices.yaml).")
    price_out: float | None = Field(None, ge=0,
                                    description="USD per 1M completion tokens.")
    notes: str | None = Field(None, description="Free-text note stored in the card.")
    neural_metric: tuple[str, ...] | list[str] | str | None = Field((), json_schema_extra={"metavar": "METRIC"},
                                                                   description=(
        "Neural metric comet22, cometkiwi or xcomet (repeatable or comma-separated), scored on the finished card in "
        "the COMET environment (docs/neural_metrics.md); later: `mtboard neural WORKDIR`."))
    neural_batch_size: int | None = Field(None, ge=1, json_schema_extra={"metavar": "N"}, description=(
        "COMET batch size (default 16; recorded); needs --neural-metric."))
    neural_device: str | None = Field(None, json_schema_extra={"metavar": "DEVICE"},
                                      description="cpu or cuda (default cpu; recorded); needs --neural-metric.")
    neural_revision: dict[str, str] = Field(default_factory=dict, json_schema_extra={"metavar": "KEY=COMMIT"},
                                            description=(
        "A neural metric's model revision instead of the pinned one (repeatable); needs --neural-metric."))
    stream: bool = Field(False, json_schema_extra={"cli": False}, description=(
        "Stream responses (server-sent events) from OpenAI-compatible servers; the run command sets it from "
        "MTBOARD_STREAM=1."))
    max_retries: int = Field(5, ge=0, json_schema_extra={"cli": False}, description=(
        "Transport-failure retries per request beyond the first attempt."))
    timeout_s: float = Field(120.0, gt=0, json_schema_extra={"cli": False}, description=(
        "Per-request read timeout, seconds."))

    def __init__(self, /, **data: Any) -> None:
        _complete()
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise settings_error(exc) from None

    @field_validator("method", "prompt", "condition", "judge_family", "translator_family")
    @classmethod
    def _names(cls, value: str | None) -> str | None:
        """Names the card and the site show: no bidirectional control, invisible or control character, no confusable
        script mix (:func:`mtboard.core.names.name_problem`; issue 32 item 5)."""
        return value if value is None else validate_name(value)

    @field_validator("max_tokens", "concurrency", "runs", "judge_max_tokens", "judge_max_attempts",
                     "judge_concurrency", "limit", "neural_batch_size", "max_retries", "fst_retries", "price_in",
                     "price_out", "judge_price_in", "judge_price_out", "temperature", "timeout_s")
    @classmethod
    def _card_can_hold(cls, value: float | None, info: ValidationInfo) -> float | None:
        """A number the run card records (or multiplies into one) fits the card: an integer at most
        :data:`CARD_INT_MAX`, a float at most :data:`MAX_PRICE_PER_MTOK` (:func:`card_limit`). Raises: ConfigError
        naming the option (``--max-tokens 99999999999999999999 is more than a run card can hold``)."""
        limit = card_limit(str(info.field_name))
        if value is not None and value > limit:
            opt = option_name(str(info.field_name))
            raise ConfigError(f"{opt} {value} is more than a run card can hold (at most {_num(limit)})", field=opt,
                              fix=f"give {opt} a number of at most {_num(limit)}")
        return value

    @field_validator("history")
    @classmethod
    def _history_with_arm(cls, value: int | None, info: ValidationInfo) -> int | None:
        """``--arm`` known and ``--history`` only where the arm carries history
        (:func:`mtboard.inputs.corpora.arms.check_arm`). Raises: ConfigError naming the option."""
        from mtboard.inputs.corpora.arms import check_arm

        check_arm(info.data.get("arm"), value)
        return value

    @field_validator("arm")
    @classmethod
    def _known_arm(cls, value: str | None) -> str | None:
        from mtboard.inputs.corpora.arms import check_arm

        check_arm(value, None)
        return value

    @field_validator("judge")
    @classmethod
    def _judge_names(cls, value: str | list[str] | None) -> str | list[str] | None:
        for spec in [value] if isinstance(value, str) else value or []:
            validate_name(spec)
        return value

    @field_validator("neural_metric", mode="before")
    @classmethod
    def _neural_keys(cls, value: Any) -> tuple[str, ...]:
        """``--neural-metric`` values (repeatable, comma-separated) → the metric keys in order, without repeats.
        Raises: ConfigError naming an unknown metric (:func:`mtboard.score.metrics.neural.parse_metrics`)."""
        from mtboard.score.metrics.neural import parse_metrics

        if value is None:
            return ()
        return tuple(parse_metrics([value] if isinstance(value, str) else list(value)))

    @field_validator("neural_revision", mode="before")
    @classmethod
    def _neural_revisions(cls, value: Any) -> Any:
        """``KEY=COMMIT`` strings → ``{key: commit}`` (a mapping passes as it is). Raises: ConfigError for a malformed
        one or an unknown key (:func:`mtboard.score.metrics.neural.parse_revisions`)."""
        from mtboard.score.metrics.neural import parse_revisions

        if value is None:
            return {}
        revisions = parse_revisions(list(value)) if isinstance(value, (list, tuple)) else value
        if isinstance(revisions, dict):
            _check_commits(revisions)
        return revisions

    @field_validator("neural_batch_size", "neural_device", "neural_revision")
    @classmethod
    def _needs_a_neural_metric(cls, value: Any, info: ValidationInfo) -> Any:
        """A neural setting without ``--neural-metric`` would be ignored: refused, before anything is translated;
        ``--neural-device`` is cpu or cuda."""
        from mtboard.score.metrics.neural import DEVICES

        opt = option_name(str(info.field_name))
        if value and not info.data.get("neural_metric"):
            raise ConfigError(f"{opt} has no effect without --neural-metric", field=opt,
                              fix=f"add --neural-metric METRIC, or drop {opt}")
        if info.field_name == "neural_device" and value is not None and value not in DEVICES:
            raise ConfigError(f"unknown device {value!r}", field=opt, fix=f"use {' or '.join(DEVICES)}")
        return value

    @field_validator("backend_extra", mode="before")
    @classmethod
    def _key_value_strings(cls, value: Any) -> Any:
        """``--backend-opt`` strings (a list) → a dict; a mapping passes as it is; None → no settings."""
        if value is None:
            return {}
        return parse_backend_opts(value) if isinstance(value, (list, tuple)) else value


def _check_commits(revisions: dict[str, Any]) -> None:
    """Every ``--neural-revision`` commit fits the card's ``neural_metrics.*.commit`` rule (its schema pattern, read
    from :class:`~mtboard.core.schema.NeuralMetric`: a 40-hex commit id), checked before anything is translated
    instead of after (issue 33 item 4). Raises: ConfigError naming the key."""
    import re

    from mtboard.core.schema import NeuralMetric

    pattern = next(m.pattern for m in NeuralMetric.model_fields["commit"].metadata if hasattr(m, "pattern"))
    for key, commit in revisions.items():
        if not isinstance(commit, str) or not re.fullmatch(pattern, commit):
            raise ConfigError(f"--neural-revision {key}={str(commit)[:60]!r} is not a commit id (the card's "
                              f"neural_metrics.{key}.commit must match {pattern})", field="--neural-revision",
                              fix="pass the model repository's 40-hex commit id (a branch or tag can move)")


def _complete() -> None:
    """Resolve the ``segment`` field's type on first use (the import is deferred: see the TYPE_CHECKING import)."""
    if not RunSettings.__pydantic_complete__:
        from mtboard.core.schema import Segment

        globals()["Segment"] = Segment
        RunSettings.model_rebuild()


def option_name(name: str) -> str:
    """How the command line spells the field ``name``: ``--max-tokens``, ``--backend-opt``, ``CORPUS``; a field
    without an option (``cli: False``) or not a field keeps its own name."""
    field = RunSettings.model_fields.get(name)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    if field is None or extra.get("cli") is False:
        return name
    return str(extra.get("argument") or extra.get("flag") or "--" + name.replace("_", "-"))


def card_limit(name: str) -> float:
    """The largest value of the number field ``name`` a run card can hold: :data:`CARD_INT_MAX` for an integer
    field, :data:`MAX_PRICE_PER_MTOK` for a float field (checked by :meth:`RunSettings._card_can_hold`). Raises:
    KeyError for a name that is not a field."""
    annotation = str(RunSettings.model_fields[name].annotation)
    return CARD_INT_MAX if "int" in annotation else MAX_PRICE_PER_MTOK


def bounds(name: str) -> tuple[float | None, float | None, float | None]:
    """The field's range as ``(ge, le, gt)`` (None where unbounded), from its ``Field(ge=…, le=…, gt=…)``."""
    meta = RunSettings.model_fields[name].metadata  # annotated_types' Ge, Le, Gt: one attribute each
    pick = [next((getattr(m, key) for m in meta if hasattr(m, key)), None) for key in ("ge", "le", "gt")]
    return pick[0], pick[1], pick[2]


def _num(x: float) -> str:
    """A bound as the help shows it: an integer in full (9007199254740991), a float in short (1e+12, 0.5)."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def _range_problem(name: str, opt: str, kind: str, value: Any) -> tuple[str, str] | None:
    ge, le, gt = bounds(name)
    if kind in ("greater_than_equal", "less_than_equal") and ge is not None and le is not None:
        return f"{opt} {value} is outside {_num(ge)}–{_num(le)}", f"give a number from {_num(ge)} to {_num(le)}"
    if kind == "greater_than_equal" and ge is not None:
        return f"{opt} must be at least {_num(ge)}", f"give {opt} a number of at least {_num(ge)}"
    if kind == "less_than_equal" and le is not None:
        return f"{opt} must be at most {_num(le)}", f"give {opt} a number of at most {_num(le)}"
    if kind == "greater_than" and gt is not None:
        return f"{opt} must be above {_num(gt)}", f"give {opt} a number above {_num(gt)}"
    return None


def _problem(err: ErrorDetails) -> tuple[str, str, str | None]:
    """One pydantic error → (option, problem, fix)."""
    name = str(err["loc"][0]) if err["loc"] else "settings"
    opt, kind, value = option_name(name), err["type"], err.get("input")
    if kind == "extra_forbidden":
        return name, f"unknown run setting {name!r}", "use the names of RunSettings' fields (mtboard.run.settings)"
    if name not in RunSettings.model_fields:  # not a field's error (the model has no whole-model validator today)
        return name, err["msg"], "see mtboard run --help"
    if kind == "missing":
        return opt, f"{opt} is required", f"give {opt}"
    ranged = _range_problem(name, opt, kind, value)
    if ranged is not None:
        return opt, *ranged
    annotation = RunSettings.model_fields[name].annotation
    if kind == "enum" and isinstance(annotation, type) and issubclass(annotation, Enum):
        return opt, f"unknown {name} {value!r}", f"use one of {', '.join(str(e.value) for e in annotation)}"
    refused = (err.get("ctx") or {}).get("error")
    if isinstance(refused, NameRefused):
        p = refused.problem
        at = f" {codepoint(p.char)} at character {p.index + 1}" if p.char is not None else ""
        return opt, f"{p.what}{at}", p.fix
    if kind == "finite_number":
        return opt, f"{opt} must be a finite number", f"give {opt} a number"
    return opt, f"{opt} {value!r}: {err['msg']}", "see mtboard run --help"


def settings_error(exc: ValidationError) -> ConfigError:
    """The first problem of a failed :class:`RunSettings` validation as the project's one-line ConfigError naming the
    option and the fix: ``--runs must be at least 1``, ``--fst-retries 6 is outside 0–5``, ``unknown segment 'x'``."""
    opt, problem, fix = _problem(exc.errors()[0])
    return ConfigError(problem, field=opt, fix=fix)


__all__ = ["CARD_INT_MAX", "MAX_PRICE_PER_MTOK", "RunSettings", "parse_backend_opts", "option_name", "bounds",
           "card_limit", "settings_error"]

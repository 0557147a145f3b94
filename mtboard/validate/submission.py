"""The ``submission`` check: the submission gate of spec §9.1 (what a submission carries), §9.2 (legitimacy) and §9.5
(which tier asks for what), as one table of named rules (issue 39 item 1).

Every rule has an id, the section it comes from, and a level per verification tier (spec §9.4):

* ``required`` — a card at that tier that misses it fails the ``submission`` check (one problem per missed rule,
  naming the rule and its section; ``run-card`` fails through the checks it reports, not twice);
* ``warning`` — a miss is a note of the report, never a failure;
* ``-`` — the tier does not ask for it (it is still evaluated, so a report says whether the card could be raised to
  a higher tier).

:data:`RULES` is that table (data, not code paths); :func:`rules_table_markdown` renders it for docs/submissions.md
(a test keeps the page equal to it) and :func:`mtboard.validate.report.gate_markdown` renders one card's outcome
for the pull-request body (``mtboard submit``) and ``mtboard validate --format markdown`` (the CI job summary).

The tier a card is held to (:func:`claimed_tier`) is the strongest its evidence in the repository claims: a
verification record beside it, naming it or a card it was re-scored from, that meets ``reproducible`` → GDS verified
(spec §9.4; whether that record's attestation verifies is decided by the ledger, :mod:`mtboard.ledger.standing`);
a gold_standard scores-only card for it under ``official/`` that meets ``governance`` (valid, linked, with
its Sigstore bundle) → community verified (the governance path, §8.2). Every
other card is a self-benchmarked development run. ``mtboard validate --tier`` checks a card against a tier it
does not claim yet.

Rules the validator cannot decide mechanically are not in the table: §9.2.4 (the method generalises beyond memorised
examples) is what the secret segments (§8) and corpus rotation (§9.3) measure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mtboard.backends.base import BUILTIN_BACKENDS
from mtboard.core import canonical, safejson
from mtboard.core.errors import MtboardError
from mtboard.core.schema import RunCard, Segment, VerificationRecord, VerificationTier
from mtboard.inputs.prompts import load_prompt, prompts_dir
from mtboard.validate.context import Context, backend_class, normalise_text
from mtboard.validate.report import CARD_CHECKS, TIER_NAMES, CardRun, GateOutcome, GateRule, safe_name
from mtboard.validate.structure import COACHING_DIR

SELF = VerificationTier.self_benchmarked.value
GDS = VerificationTier.gds_verified.value
GOLD = VerificationTier.community_verified.value
TIERS: tuple[str, ...] = (SELF, GDS, GOLD)
"""Verification tiers (spec §9.4), weakest first."""

Level = Literal["required", "warning", "-"]

REPRODUCE_TOLERANCE = 0.02
"""Spec §9.2.3: the governance organisation must reach the score within ±2 % (relative)."""
MIN_USED_TEXT = 16
"""A corpus text at least this long counts as used when it occurs inside prompt material; a shorter one only when a
whole example, prompt line or coaching line equals it (as :data:`mtboard.validate.context.SECRET_MIN_SUBSTRING`)."""
DECLARE_RE = re.compile(r"^#\s*development entries:\s*(.*)$", re.I | re.M)
"""A coaching file's declaration line: ``# development entries: id-1, id-2`` (or ``none``)."""
OFFICIAL_DIR = "official"
"""Committed gold_standard scores-only cards: ``official/<dataset id>/<card stem>.gold_standard.scores.json``
(:mod:`mtboard.verify.official`)."""


@dataclass(frozen=True)
class Rule:
    """One row of the gate: ``id``, the spec ``section``, what a submission must carry (``carries``), the JSON path a
    miss points at (``field``) and the level per tier."""

    id: str
    section: str
    carries: str
    field: str
    levels: dict[str, Level]

    def level(self, tier: str) -> Level:
        return self.levels[tier]


RULES: tuple[Rule, ...] = (
    Rule("run-card", "§9.1.1", "a complete run card: every other check of the validator passes", "$",
         {SELF: "required", GDS: "required", GOLD: "required"}),
    Rule("development-only", "§9.2.1", "only development entries: no gold_standard or held_out entry (the method "
         "never touched the evaluation data); a diagnostic card (public entries only, §8.2.1) is shown on the "
         "diagnostic board, never ranked", "$.dataset.segment",
         {SELF: "required", GDS: "required", GOLD: "required"}),
    Rule("development-use-declared", "§9.2.2", "every corpus entry whose text the prompt's examples, system prompt "
         "or coaching data hold is a development entry and is declared (the template's `development_entries`, or a "
         "`# development entries: …` line of the coaching data)", "$.method.prompt_name",
         {SELF: "required", GDS: "required", GOLD: "required"}),
    Rule("cost-report", "§9.1.4", "a cost report: `totals.total_cost_usd` and `totals.cost_per_entry_usd` priced "
         "(0 for a backend that charges nothing: a local engine, a local model, a baseline)", "$.totals",
         {SELF: "warning", GDS: "required", GOLD: "required"}),
    Rule("method-readme", "§9.1.5", "a description of the method and its limits: the card's `notes`, or a built-in "
         "backend documented by the harness whose prompt template (if any) has a `description`", "$.notes",
         {SELF: "warning", GDS: "required", GOLD: "required"}),
    Rule("installable", "§9.1.2, §9.5", "an installable method: a built-in backend, or a plugin distribution with "
         "name, version and files SHA-256 pinned and approved in `plugins/approved.yaml`", "$.method.plugin",
         {SELF: "-", GDS: "required", GOLD: "required"}),
    Rule("dependencies-pinned", "§9.1.3", "every dependency pinned: the prompt file under `prompts/` and the coaching "
         "data under `coaching/` with the card's SHA-256, the weights or engine (`model_file_sha256`, "
         "`model_revision` or `engine_version`), the analyser (`fst_version`) when the FST gate runs",
         "$.method", {SELF: "warning", GDS: "required", GOLD: "required"}),
    Rule("reproducible", "§9.2.3", "a maintainer's re-run reproduces it: a passed verification record beside the "
         "card (for it or a card it was re-scored from) whose re-run composite lies within ±2 % of the card's",
         "$.scores.composite", {SELF: "-", GDS: "required", GOLD: "-"}),
    Rule("governance", "§9.5, §8.2", "the governance path: the method was handed over and run on gold_standard — a "
         "gold_standard scores-only card for this card under `official/`, valid, linked to it, with its Sigstore "
         "bundle beside it", "$.run_card_hash", {SELF: "-", GDS: "-", GOLD: "required"}),
)
"""The gate, one row per rule (ids are unique)."""


# --------------------------------------------------------------------------------------------------------------------
# Evidence


@dataclass
class Evidence:
    """What the gate may consult besides the card: the status of every other check, the context, the card's folder
    (verification records), and the repository root (``official/``, ``coaching/``, ``plugins/``)."""

    run: CardRun
    ctx: Context
    folder: Path | None
    stem: str | None


Verdict = tuple[bool, str]
"""(met, one line saying why)."""


def _run_card(card: RunCard | None, ev: Evidence) -> Verdict:
    failed = [c for c in CARD_CHECKS if c != "submission" and ev.run.status.get(c) == "fail"]
    if failed:
        return False, f"the check(s) {', '.join(failed)} failed"
    skipped = [c for c in CARD_CHECKS if c != "submission" and ev.run.status.get(c) == "skip"]
    return True, "every check passed" + (f" ({', '.join(skipped)} skipped)" if skipped else "")


def _development_only(card: RunCard, ev: Evidence) -> Verdict:
    # the diagnostic segment is public too (spec §2.3, §8.2.1: developers iterate on it freely): a card run on it
    # alone passes; the ledger never ranks it (mtboard/ledger/diagnostic.py, issue 40 item 6)
    seg = card.dataset.segment
    if seg not in (Segment.development, Segment.diagnostic):
        return False, f"dataset.segment is {seg.value}, not development (or diagnostic)"
    other = sorted({r.segment.value for r in card.results if r.segment != seg})
    if other:
        return False, f"results from the {', '.join(other)} segment(s) in a {seg.value} card"
    return True, f"{len(card.results)} {seg.value} entries"


def _prompt_template(card: RunCard):
    """The card's prompt template when it is the file the card names (same SHA-256); None when the method has no
    prompt; raises LookupError when the file is missing or differs."""
    m = card.method
    if m.prompt_format == "raw" or not m.prompt_name:
        return None
    try:
        prompt = load_prompt(m.prompt_name, named=True, field="$.method.prompt_name")
    except MtboardError:
        raise LookupError(f"prompt {safe_name(m.prompt_name)} is not a prompt file of this harness") from None
    if prompt.template_sha256 != m.prompt_template_sha256:
        raise LookupError(f"prompts/{safe_name(m.prompt_name)}.j2 is not the file the card was run with "
                          "(SHA-256 differs)")
    return prompt


def prompt_material(card: RunCard) -> tuple[list[str], set[str]]:
    """The texts a method's prompt put before the model besides the entry (spec §9.2.2): the template's few-shot
    examples (both sides), the system prompt, and the coaching data's non-comment lines; and the entry ids declared as
    used (the template's ``development_entries`` and the coaching data's ``# development entries:`` lines).

    Raises: LookupError when the template is not the card's (then nothing can be said)."""
    texts: list[str] = []
    declared: set[str] = set()
    prompt = _prompt_template(card)
    if prompt is not None:
        for pairs in prompt.meta.examples.values():
            for pair in pairs:
                texts.extend(pair)
        declared.update(str(x) for x in prompt.meta.development_entries)
    texts.extend(line for line in card.system_prompt_used.splitlines())
    coaching = card.method_config.coachingPrompt or ""
    texts.extend(line for line in coaching.splitlines() if not line.lstrip().startswith("#"))
    for m in DECLARE_RE.finditer(coaching):
        ids = [x.strip() for x in m.group(1).split(",")]
        declared.update(x for x in ids if x and x.lower() != "none")
    return [t for t in (normalise_text(x) for x in texts) if t], declared


def used_entries(material: list[str], ctx: Context) -> dict[str, Segment]:
    """Entry id (as text) → segment of every entry of the known corpora whose source or reference is in
    ``material``: equal to a whole text, or (at least :data:`MIN_USED_TEXT` characters) inside one."""
    whole = set(material)
    blob = "\n".join(material)
    out: dict[str, Segment] = {}
    for known in ctx.corpora():
        for e in known.corpus.entries:
            for t in (e.source, e.reference):
                n = normalise_text(t)
                if n and (n in whole or (len(n) >= MIN_USED_TEXT and n in blob)):
                    out[str(e.id)] = e.segment
                    break
    return out


def _development_use(card: RunCard, ev: Evidence) -> Verdict:
    try:
        material, declared = prompt_material(card)
    except LookupError as exc:
        return False, f"{exc}: its examples cannot be checked"
    used = used_entries(material, ev.ctx)
    undeclared = sorted(set(used) - declared)
    if undeclared:
        return False, (f"the prompt or coaching data holds the text of {len(undeclared)} corpus entr"
                       f"{'y' if len(undeclared) == 1 else 'ies'} not declared ({', '.join(undeclared[:5])}"
                       f"{', …' if len(undeclared) > 5 else ''}): list them in the template's development_entries "
                       "or a '# development entries: …' line of the coaching data")
    bad = sorted(i for i in declared if used.get(i) not in (None, Segment.development))
    if bad:
        return False, f"entries from a segment other than development are used: {', '.join(bad[:5])}"
    if used:
        return True, f"{len(used)} development entr{'y' if len(used) == 1 else 'ies'} used and declared"
    return True, "no corpus entry's text in the prompt or coaching data" + (
        f" ({len(declared)} declared)" if declared else "")


def _cost(card: RunCard, ev: Evidence) -> Verdict:
    t = card.totals
    if t.total_cost_usd is None or t.cost_per_entry_usd is None:
        return False, ("totals.total_cost_usd / cost_per_entry_usd are null (not priced): run with a price-table "
                       "entry or --price-in/--price-out, and a provider that reports token usage")
    cls = backend_class(card.method.backend)
    if t.total_cost_usd == 0 and cls is not None and not cls.priced:
        return True, "no API cost (local engine, local model or baseline)"
    return True, (f"${t.total_cost_usd:.6g} in all, ${t.cost_per_entry_usd:.6g} per entry "
                  f"({t.prompt_tokens} prompt + {t.completion_tokens} completion tokens)")


def _readme(card: RunCard, ev: Evidence) -> Verdict:
    if card.notes and card.notes.strip():
        return True, "the card's notes describe the method"
    if card.method.backend not in BUILTIN_BACKENDS:
        return False, (f"backend {safe_name(card.method.backend)} is not built in and the card has no notes "
                       "describing it")
    cls = backend_class(card.method.backend)
    if cls is None or not (cls.__doc__ or "").strip():
        return False, f"the built-in backend {card.method.backend} is not documented here"
    try:
        prompt = _prompt_template(card)
    except LookupError as exc:
        return False, str(exc)
    if prompt is not None and not prompt.meta.description.strip():
        return False, f"prompt {prompt.name} has no description and the card has no notes"
    return True, f"built-in backend {card.method.backend}" + (
        f" with prompt {prompt.name}'s description" if prompt is not None else "")


def approved_plugins(root: Path) -> list[dict]:
    """The entries of ``plugins/approved.yaml`` (``[]`` when the file is absent or unreadable)."""
    path = root / "plugins" / "approved.yaml"
    try:
        data = safejson.loads_yaml(path.read_text(encoding="utf-8"), where=str(path))
    except (OSError, MtboardError):
        return []
    entries = data.get("approved") if isinstance(data, dict) else None
    return [e for e in entries or [] if isinstance(e, dict)]


def _installable(card: RunCard, ev: Evidence) -> Verdict:
    m = card.method
    if m.backend in BUILTIN_BACKENDS:
        return True, f"built-in backend {m.backend}"
    if m.plugin is None:
        return False, f"backend {safe_name(m.backend)} is not built in and the card records no plugin distribution"
    p = m.plugin
    for e in approved_plugins(ev.ctx.root):
        if (e.get("distribution"), str(e.get("version")), e.get("files_sha256")) == \
                (p.distribution, p.version, p.files_sha256):
            return True, f"plugin {safe_name(p.distribution)} {safe_name(p.version)}, approved"
    return False, (f"plugin {safe_name(p.distribution)} {safe_name(p.version)} (files {p.files_sha256[:12]}…) is "
                   "not approved in plugins/approved.yaml (a maintainer reads the release and pins it there)")


def _dependencies(card: RunCard, ev: Evidence) -> Verdict:
    m, missing, have = card.method, [], []
    try:
        prompt = _prompt_template(card)
        if prompt is not None:
            have.append(f"prompt {prompt.name}")
    except LookupError as exc:
        missing.append(str(exc))
    if card.coaching_data_sha256 is not None:
        name = card.method_config.coachingFile or ""
        path = ev.ctx.root / COACHING_DIR / name
        ok = bool(name) and path.is_file() and not path.is_symlink() and \
            canonical.sha256_hex(path.read_bytes()) == card.coaching_data_sha256
        what = f"coaching data {COACHING_DIR}/{safe_name(name)}"
        (have if ok else missing).append(what if ok else f"{what} with the card's SHA-256")
    cls = backend_class(m.backend)
    needs_model = not (cls is not None and cls.model_optional and not m.model)
    if needs_model:
        if m.model_file_sha256 or m.model_revision or m.engine_version:
            have.append("weights or engine pinned")
        else:
            missing.append("the weights or engine (model_file_sha256, model_revision or engine_version)")
    if card.tools_enabled and not card.fst_version:
        missing.append("the analyser version (fst_version) of the FST gate")
    if missing:
        return False, "not pinned: " + "; ".join(missing)
    return True, ", ".join(have) or "nothing to pin (a baseline)"


def _records(folder: Path | None) -> list[tuple[str, VerificationRecord]]:
    out: list[tuple[str, VerificationRecord]] = []
    if folder is None or not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.verification.json")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            rec = VerificationRecord.model_validate(safejson.loads(path.read_bytes(), where=path.name,
                                                                   max_bytes=4 * 1024 * 1024))
        except (MtboardError, ValueError, OSError):
            continue
        out.append((path.name, rec))
    return out


def _mine(card: RunCard, records: list[tuple[str, VerificationRecord]]) -> list[tuple[str, VerificationRecord]]:
    hashes = {card.run_card_hash, *(a.run_card_hash for a in card.rescored_from)}
    return [(n, r) for n, r in records if r.run_card_hash in hashes]


def _reproducible(card: RunCard, ev: Evidence) -> Verdict:
    mine = _mine(card, _records(ev.folder))
    if not mine:
        return False, "no verification record beside the card names it or a card it was re-scored from"
    why = []
    for name, rec in mine:
        comp = next((d for d in rec.deltas if d.metric == "composite"), None)
        if not rec.passed:
            why.append(f"{name}: the re-run did not pass")
        elif rec.tolerance > REPRODUCE_TOLERANCE:
            why.append(f"{name}: tolerance {rec.tolerance:g} is wider than ±{REPRODUCE_TOLERANCE:g}")
        elif comp is None or comp.rerun is None or comp.stored is None:
            why.append(f"{name}: no composite was compared")
        elif abs(comp.rerun - comp.stored) > REPRODUCE_TOLERANCE * abs(comp.stored):
            why.append(f"{name}: re-run composite {comp.rerun:.6g} is not within ±2 % of {comp.stored:.6g}")
        elif abs(card.scores.composite - comp.rerun) > REPRODUCE_TOLERANCE * abs(comp.rerun):
            why.append(f"{name}: the card's composite {card.scores.composite:.6g} is not within ±2 % of the "
                       f"re-run's {comp.rerun:.6g}")
        else:
            rel = abs(card.scores.composite - comp.rerun) / abs(comp.rerun) * 100 if comp.rerun else 0.0
            return True, f"{name}: re-run composite {comp.rerun:.6g}, {rel:.2f} % from the card's"
    return False, "; ".join(why)


def gold_card_path(card: RunCard, root: Path, stem: str | None) -> Path | None:
    """Where the governance path leaves this card's gold_standard scores-only card (None without a file stem)."""
    if stem is None:
        return None
    return root / OFFICIAL_DIR / card.dataset.id / f"{stem}.{Segment.gold_standard.value}.scores.json"


def _governance(card: RunCard, ev: Evidence) -> Verdict:
    from mtboard.validate.scores import dev_link_problems, validate_scores_card  # noqa: PLC0415 - only for gold

    path = gold_card_path(card, ev.ctx.root, ev.stem)
    if path is None or not path.is_file() or path.is_symlink():
        return False, (f"no gold_standard scores-only card for it under {OFFICIAL_DIR}/ (hand the method to the "
                       "governance organisation, spec §8.2)")
    rep = validate_scores_card(path, now=ev.ctx.now)
    if rep.card is None or not rep.ok:
        return False, f"{path.name} does not validate ({len(rep.problems)} problem(s); mtboard validate-scores)"
    link = dev_link_problems(rep.card, {card.run_card_hash: card}, path.name)
    if link:
        return False, f"{path.name} does not match this card: {link[0]}"
    if not path.with_name(path.name + ".sigstore").is_file():
        return False, f"{path.name} has no Sigstore bundle beside it (the verify workflow attests it)"
    return True, f"{path.name} with its bundle (the official board verifies the attestation)"


CHECKS: dict[str, Callable[[RunCard, Evidence], Verdict]] = {
    "run-card": _run_card, "development-only": _development_only, "development-use-declared": _development_use,
    "cost-report": _cost, "method-readme": _readme, "installable": _installable,
    "dependencies-pinned": _dependencies, "reproducible": _reproducible, "governance": _governance}
"""Rule id → the function deciding it."""


# --------------------------------------------------------------------------------------------------------------------
# The tier and the check


def claimed_tier(card: RunCard, ctx: Context, folder: Path | None, stem: str | None) -> str:
    """The tier the card's evidence claims (module docstring): community verified with a gold_standard scores-only
    card for it under ``official/`` that meets the ``governance`` rule (valid, linked, its Sigstore bundle beside it:
    a gold card still waiting for its attestation claims nothing yet, so the development card is not refused for it); GDS verified with a verification record beside it, for it or a card it was
    re-scored from, that meets the ``reproducible`` rule (a failed or inconsistent record claims nothing: the ledger
    keeps such a card self-benchmarked and the repository's ``verification`` check reports the record); otherwise
    self-benchmarked."""
    ev = Evidence(CardRun(""), ctx, folder, stem)
    gold = gold_card_path(card, ctx.root, stem)
    if gold is not None and gold.is_file() and _governance(card, ev)[0]:
        return GOLD
    if _reproducible(card, ev)[0]:
        return GDS
    return SELF


def check_submission(run: CardRun, card: RunCard | None, ctx: Context, *, folder: Path | None = None,
                     stem: str | None = None, tier: str | None = None) -> GateOutcome:
    """``submission``: every rule of :data:`RULES` decided for ``card``, checked at ``tier`` (default:
    :func:`claimed_tier`). A missed ``required`` rule is a problem of the check naming the rule and its section; a
    missed ``warning`` rule a note. ``run-card`` is the exception: its misses are the failed checks' own problems,
    so the gate lists it as missed (naming those checks) without repeating them as a ``submission`` problem. Must
    run after every other check (``run-card`` reads their statuses).

    ``card`` None (the schema refused it): only ``run-card`` is decided (missed); the rest are not evaluated.
    ``folder``/``stem``: where the card file lies and its name without ``.json`` (verification records beside it,
    its gold card under ``official/``); None for bytes that are not a file of the repository.

    Raises: ValueError for an unknown ``tier``."""
    if tier is not None and tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}: one of {', '.join(TIERS)}")
    ev = Evidence(run, ctx, folder, stem)
    at = tier or (claimed_tier(card, ctx, folder, stem) if card is not None else SELF)
    rules: list[GateRule] = []
    for rule in RULES:
        if card is None and rule.id != "run-card":
            met, why = None, "not evaluated: the card does not parse"
        else:
            met, why = CHECKS[rule.id](card, ev)  # type: ignore[arg-type]
        rules.append(GateRule(id=rule.id, section=rule.section, level=rule.level(at), met=met, detail=why,
                              levels=dict(rule.levels)))
        if met is False and rule.level(at) == "required" and rule.id != "run-card":
            run.fail("submission", f"{rule.id} ({rule.section}) is required for a {TIER_NAMES[at]} card: {why}",
                     rule.field)
        elif met is False and rule.level(at) == "warning":
            run.note(f"submission: {rule.id} ({rule.section}) missed (a warning for a {TIER_NAMES[at]} card): {why}")
    run.done("submission")
    eligible = {t: all(r.met is not False for r, spec in zip(rules, RULES) if spec.level(t) == "required")
                for t in TIERS}
    return GateOutcome(tier=at, rules=rules, eligible=eligible)


# --------------------------------------------------------------------------------------------------------------------
# Rendering


def rules_table_markdown() -> str:
    """:data:`RULES` as a Markdown table: rule, section, what a submission carries, level per tier (the table in
    docs/submissions.md §2a; a test keeps them equal)."""
    head = "| rule | section | a submission carries | " + " | ".join(TIER_NAMES[t] for t in TIERS) + " |"
    lines = [head, "| " + " | ".join(["---"] * (3 + len(TIERS))) + " |"]
    for r in RULES:
        lines.append(f"| `{r.id}` | {r.section} | {r.carries} | " + " | ".join(r.levels[t] for t in TIERS) + " |")
    return "\n".join(lines) + "\n"

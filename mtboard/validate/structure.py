"""Structure and integrity checks: ``file``, ``size``, ``schema``, ``harness_version``, ``file_name``,
``run_card_hash``, ``fingerprint``, ``method`` (spec §3.8, §3.9, §9.1).

``file``/``size`` refuse a path without opening it (``lstat`` first); the seal and the fingerprint are recomputed with
:mod:`mtboard.core.canonical` (RFC 8785 canonical JSON, fingerprint v3) and :func:`mtboard.score.card.card_fingerprint_components`.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mtboard.backends.base import BUILTIN_BACKENDS, plugin_record
from mtboard import __version__
from mtboard.core import canonical, paths, safejson
from mtboard.score import fst as fst_mod
from mtboard.score.card import card_fingerprint_components
from mtboard.core.errors import InputError, MtboardError
from mtboard.inputs import native
from mtboard.inputs.prices import load_prices
from mtboard.inputs.prompts import load_prompt, prompts_dir
from mtboard.core.schema import MethodClass, RunCard
from mtboard.validate.context import Context, backend_class
from mtboard.validate.naming import SUBMISSIONS_DIR, canonical_relpath
from mtboard.validate.report import CardRun, error_text, json_path, safe_name
from mtboard.validate.attempts import check_format_attempts
from mtboard.validate.tools import check_tools

MAX_CARD_BYTES = safejson.MAX_CARD_BYTES
"""Largest card accepted (bytes); checked with lstat before the file is opened."""
OLDEST_SUPPORTED_HARNESS = "0.4.0"
"""Oldest card format this validator reads. No migration exists yet: older cards are rejected with the reason."""
MAX_SCHEMA_PROBLEMS = 20
"""Schema errors reported one by one; the rest are counted in one problem."""


# --------------------------------------------------------------------------------------------------------------------
# file, size: before reading


def check_path(run: CardRun, path: Path, ctx: Context) -> os.stat_result | None:
    """``file`` and ``size``: refuse without opening. Returns the lstat result when the file may be read."""
    if any(part == ".." for part in path.parts):
        run.fail("file", "path has a '..' component; pass paths inside the repository (refused without reading)")
        return None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        run.fail("file", "file not found")
        return None
    except OSError as exc:
        run.fail("file", f"cannot stat the file ({exc.strerror})")
        return None
    if stat.S_ISLNK(st.st_mode):
        run.fail("file", "is a symbolic link; refused without reading it (commit the file itself)")
        return None
    if not stat.S_ISREG(st.st_mode):
        run.fail("file", "is not a regular file; refused without reading it")
        return None
    # Inside the repository, a parent folder must not be a link leading elsewhere.
    root = ctx.root.resolve()
    absolute = path if path.is_absolute() else Path.cwd() / path
    try:
        absolute.relative_to(ctx.root.absolute())
        inside = True
    except ValueError:
        inside = False
    if inside:
        try:
            Path(os.path.realpath(absolute.parent)).relative_to(root)
        except ValueError:
            run.fail("file", "a folder on the path is a link leading outside the repository; refused without reading")
            return None
    run.done("file")
    if st.st_size > MAX_CARD_BYTES:
        run.fail("size", f"file is {st.st_size} bytes, over the {MAX_CARD_BYTES}-byte limit; refused without "
                         "reading (split the run or drop unneeded raw responses)")
        return None
    run.done("size")
    return st


def read_card_bytes(run: CardRun, path: Path) -> bytes | None:
    """The file's bytes (capped at :data:`MAX_CARD_BYTES`), or None after reporting ``size`` / ``file``."""
    try:
        return safejson.read_bytes(path, max_bytes=MAX_CARD_BYTES)
    except InputError as exc:
        check = "size" if "limit" in exc.problem else "file"
        run.fail(check, error_text(exc))
        return None


# --------------------------------------------------------------------------------------------------------------------
# schema, harness_version, file_name


def parse_card(run: CardRun, raw: bytes) -> RunCard | None:
    """``schema``: the strict RunCard schema (JSON mode: no coercion). None after reporting every error."""
    try:
        card = RunCard.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        for err in errors[:MAX_SCHEMA_PROBLEMS]:
            msg = "unknown field (not in the schema)" if err["type"] == "extra_forbidden" else err["msg"]
            # custom validators may quote the offending value: keep messages short and escaped
            run.fail("schema", safe_name(msg, 160) + " (see `mtboard schema run-card`)",
                     field=safe_name(json_path(err["loc"]), 160))
        if len(errors) > MAX_SCHEMA_PROBLEMS:
            run.fail("schema", f"... and {len(errors) - MAX_SCHEMA_PROBLEMS} more schema problems")
        return None
    run.done("schema")
    return card


def _version_tuple(v: str) -> tuple[int, ...] | None:
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", v)
    if not m:
        return None
    return tuple(int(x) for x in m.groups())


def check_harness(run: CardRun, card: RunCard) -> None:
    """``harness_version``: a version this validator reads (same major.minor, not newer, not older than
    :data:`OLDEST_SUPPORTED_HARNESS`)."""
    got = _version_tuple(card.harness_version)
    here = _version_tuple(__version__)
    oldest = _version_tuple(OLDEST_SUPPORTED_HARNESS)
    if got is None:
        run.fail("harness_version", "harness_version is not a version number (expected e.g. 0.1.0)",
                 "$.harness_version")
    elif got < oldest:
        run.fail("harness_version",
                 f"card made by mtboard {card.harness_version}, older than the oldest card format this validator "
                 f"reads ({OLDEST_SUPPORTED_HARNESS}); no migration exists because the sealed hash and the scores "
                 f"depend on that format: re-run the method with mtboard >= {OLDEST_SUPPORTED_HARNESS}",
                 "$.harness_version")
    elif got[:2] != here[:2] or got > here:
        which = "newer" if got > here else "older"
        fix = ("update the validator (pip install -U mtboard)" if got > here
               else f"re-score it with mtboard {__version__}: `mtboard rescore CARD --out NEW.json` keeps the "
                    f"translations (scores from {card.harness_version} are not recomputable bit-for-bit by this "
                    "version)")
        run.fail("harness_version", f"card made by mtboard {card.harness_version}, {which} than this validator "
                                    f"({__version__}); {fix}", "$.harness_version")
    run.done("harness_version")


def check_file_name(run: CardRun, card: RunCard, relpath: str | None) -> None:
    """``file_name``: under ``submissions/``, the path is exactly :func:`canonical_relpath` of the content."""
    if relpath is None or not relpath.startswith(SUBMISSIONS_DIR + "/"):
        run.skip("file_name", "not under submissions/")
        return
    expected = canonical_relpath(card)
    if relpath != expected:
        run.fail("file_name", f"file should be at {expected} (derived from dataset.id, model_slug, condition and "
                              "run_card_hash); `mtboard submit CARD` copies it there")
    run.done("file_name")


# --------------------------------------------------------------------------------------------------------------------
# run_card_hash, fingerprint, method


def check_hash(run: CardRun, card: RunCard, data: dict[str, Any]) -> None:
    """``run_card_hash``: the spec §3.9 seal recomputed over the parsed card."""
    if not card.run_card_hash:
        run.fail("run_card_hash", "card is not sealed (run_card_hash is empty)", "$.run_card_hash")
        return
    # Hash the parsed input, not a re-dump of the model: a field the model normalises (e.g. 1.0 vs 1) must not
    # change the verdict; the schema already rejected unknown fields.
    actual = canonical.run_card_hash(data)
    if actual != card.run_card_hash:
        run.fail("run_card_hash", f"stored seal {card.run_card_hash[:12]}… does not match the content "
                                  f"({actual[:12]}…): the card was changed after it was sealed", "$.run_card_hash")
    run.done("run_card_hash")


def check_fingerprint(run: CardRun, card: RunCard) -> None:
    """``fingerprint``: components re-derived from the card's fields, hash recomputed from the components."""
    fp = card.fingerprint
    try:
        derived = card_fingerprint_components(card)
    except MtboardError as exc:  # pragma: no cover - components derive from schema-valid fields
        run.fail("fingerprint", exc.problem, "$.fingerprint")
        return
    for key in sorted(set(derived) | set(fp.components)):
        if key not in fp.components:
            run.fail("fingerprint", "component missing", f"$.fingerprint.components.{key}")
        elif key not in derived:
            run.fail("fingerprint", "unknown component", f"$.fingerprint.components.{key}")
        elif canonical.canonical_bytes(fp.components[key]) != canonical.canonical_bytes(derived[key]):
            run.fail("fingerprint", "component does not match the card's own fields (re-derived with "
                                    "mtboard.score.card.card_fingerprint_components)", f"$.fingerprint.components.{key}")
    try:
        h = canonical.fingerprint_hash(dict(fp.components), fp.version)
    except MtboardError:
        h = None
    if h is not None and h != fp.hash:
        run.fail("fingerprint", "fingerprint hash does not match its components", "$.fingerprint.hash")
    run.done("fingerprint")


def check_method(run: CardRun, card: RunCard) -> None:
    """``method``: every *consistent* field of the method block (issue 15 part 0): spec = backend:model[:effort];
    method_class, model_slug, batch_size and the raw prompt format as the registered backend says; the prompt file,
    its format and its rendered system prompt (:func:`_check_prompt`); system_prompt_sha256 = SHA-256
    (system_prompt_used); method_config mirrors the card, its register/coaching labels, coaching_data_sha256;
    tools, the FST gate's retry limit and per-entry tool calls (:func:`mtboard.validate.tools.check_tools`); format
    attempts and their kept answers (:func:`mtboard.validate.attempts.check_format_attempts`); sampling's temperature is the card's; ``method.local`` only for a local-model backend and
    consistent with itself; table rates equal the table's (:func:`_check_prices`); fst_version = installed analyser.
    """
    m = card.method
    expected_spec = f"{m.backend}:{m.model}" + (f":{m.effort}" if m.effort else "")
    if m.spec != expected_spec:
        run.fail("method", "method.spec does not equal backend:model[:effort] of the same record", "$.method.spec")
    if canonical.sha256_hex(card.system_prompt_used) != card.system_prompt_sha256:
        run.fail("method", "system_prompt_sha256 is not the SHA-256 of system_prompt_used", "$.system_prompt_sha256")
    plugin_ok = _check_plugin_class(run, card)
    cls = backend_class(m.backend)
    if cls is not None:
        declared = cls.method_class_for(coaching=card.coaching_data_sha256 is not None,
                                        tools=bool(card.tools_enabled))
        if card.method_class != declared and plugin_ok:
            run.fail("method", f"method_class {card.method_class.value} but a {m.backend} method "
                               f"{'with' if card.coaching_data_sha256 else 'without'} coaching data and "
                               f"{'with tools' if card.tools_enabled else 'without tools'} is "
                               f"{declared.value}", "$.method_class")
        if cls.prompt_format == "raw" and (
                m.prompt_format != "raw" or m.prompt_name is not None or card.system_prompt_used):
            run.fail("method", f"backend {m.backend} takes the raw source: prompt_format must be raw, with no prompt",
                     "$.method.prompt_format")
        try:  # e.g. an Apertium mode for another language pair than the dataset's
            cls.check_languages(m.model, card.dataset.source_language, card.dataset.target_language)
        except MtboardError as exc:
            run.fail("method", exc.problem, "$.method.model")
        _check_backend_bound(run, card, cls)
    _check_prompt(run, card, cls)
    _check_prices(run, card)
    mc = card.method_config
    if mc.register is not None:
        run.fail("method", "method_config.register must be null: the harness has no such option",
                 "$.method_config.register")
    _check_coaching(run, card)
    check_tools(run, card, cls)
    check_format_attempts(run, card, cls)
    if "temperature" in m.sampling and m.sampling["temperature"] != card.temperature:
        run.fail("method", "method.sampling.temperature differs from temperature", "$.method.sampling.temperature")
    pairs = (("model", mc.model, card.model_slug, "model_slug"), ("temperature", mc.temperature, card.temperature,
             "temperature"), ("batchSize", mc.batchSize, card.batch_size, "batch_size"),
             ("qualityTier", mc.qualityTier, card.scores.quality_tier.value, "scores.quality_tier"),
             ("promptContext", mc.promptContext, m.prompt_name, "method.prompt_name"))
    for name, got, want, src in pairs:
        if got != want:
            run.fail("method", f"method_config.{name} does not mirror {src}", f"$.method_config.{name}")
    if card.method.local is not None and (cls is None or not cls.local_gate):
        run.fail("method", f"method.local must be null: backend {m.backend} serves no local model", "$.method.local")
    if card.fst_version is not None:
        analyser = fst_mod.find_analyser(card.dataset.target_language)
        if analyser is None or analyser.version != card.fst_version:
            run.fail("method", "fst_version names an analyser this validator does not have (install the same "
                               "Apertium package version to recompute FST acceptance)", "$.fst_version")
    run.done("method")


def _check_coaching(run: CardRun, card: RunCard) -> None:
    """Coaching data (spec §3.2; issue 18): ``coaching_data_sha256``, ``method_config.coachingFile`` (a file name)
    and ``method_config.coachingPrompt`` (the text the prompt received) are all set or all null, and the hash is the
    SHA-256 of the text's UTF-8 bytes (the file's bytes: ``--coaching`` reads UTF-8 and keeps it as it is)."""
    mc = card.method_config
    present = [card.coaching_data_sha256 is not None, mc.coachingFile is not None, mc.coachingPrompt is not None]
    if any(present) and not all(present):
        run.fail("method", "coaching_data_sha256, method_config.coachingFile and method_config.coachingPrompt are "
                           "set together (a run with --coaching) or all null", "$.coaching_data_sha256")
        return
    if not all(present):
        return
    if canonical.sha256_hex(mc.coachingPrompt) != card.coaching_data_sha256:
        run.fail("method", "coaching_data_sha256 is not the SHA-256 of method_config.coachingPrompt",
                 "$.coaching_data_sha256")
    if not re.fullmatch(r"[^/\\\x00-\x1f]{1,200}", mc.coachingFile) or mc.coachingFile in (".", ".."):
        run.fail("method", "method_config.coachingFile must be a file name (no folder)", "$.method_config.coachingFile")


COACHING_DIR = "coaching"
"""The repository folder of committed coaching files (``method_config.coachingFile`` names one)."""


def check_coaching_file(run: CardRun, card: RunCard, root: Path) -> None:
    """Coaching data drift (issue 18 review): when ``<root>/coaching/<method_config.coachingFile>`` exists, its bytes
    must hash to the card's ``coaching_data_sha256``.

    A failure, not a warning: the card itself stays consistent (it carries the text it was run with and its hash, and
    ``mtboard verify`` re-runs that text), but the repository would then publish under the card's file name coaching
    data the card was not scored with — anyone re-running ``--coaching coaching/<file>`` gets another method and
    fingerprint, and nothing would say so. An edited coaching file is a new method: commit it under a new name and
    run it. A symlink or anything but a regular file at that path fails too (validator review): a symlink to an
    edited copy, or a directory, would otherwise skip the hash check; so does a symlinked ``coaching/`` folder (issue
    34 item 4: the path is read through :func:`mtboard.core.paths.read_inside`, no link at any level). An absent
    file is deliberately not a failure:
    the card embeds the coaching text it was run with (tests/test_coaching_files.py requires the committed cards'
    files to be present)."""
    name, want = card.method_config.coachingFile, card.coaching_data_sha256
    if name is None or want is None or not re.fullmatch(r"[^/\\\x00-\x1f]{1,200}", name) or name in (".", ".."):
        return  # no coaching, or a name _check_coaching refuses
    rel = f"{COACHING_DIR}/{name}"
    shown = f"{COACHING_DIR}/{safe_name(name, 80)}"
    fix = (f"commit the coaching data there as a regular file whose bytes hash to the card's coaching_data_sha256 "
           f"{want[:12]}…")
    try:  # no symbolic link at any level: not coaching/NAME, not coaching/ itself (mtboard.core.paths)
        data = paths.read_inside(root, rel, max_bytes=MAX_CARD_BYTES, field="$.method_config.coachingFile",
                                 root_name="the repository root")
    except paths.PathMissing:
        return  # absent: the card embeds the text (docstring)
    except paths.PathRefused as exc:
        if exc.at == rel and exc.reason in ("symlink", "kind"):
            kind = "a symlink, not a regular file" if exc.reason == "symlink" else "not a regular file"
            run.fail("method", f"{shown} is {kind} (fix: {fix})", "$.method_config.coachingFile")
        else:
            run.fail("method", f"{shown}: {exc.problem} (fix: {fix})", "$.method_config.coachingFile")
        return
    except (MtboardError, OSError):
        return
    got = canonical.sha256_hex(data)
    if got == want:
        return
    crlf = canonical.line_end_mismatch(data, want, shown)
    if crlf is not None:  # the checkout rewrote line ends: the file did not drift
        run.fail("method", f"{crlf}; fix: {canonical.CHECKOUT_FIX}", "$.method_config.coachingFile")
    else:
        run.fail("method", f"{shown} has changed since the card was sealed: its SHA-256 "
                           f"is {got[:12]}…, the card's coaching_data_sha256 {want[:12]}… (restore the file, or "
                           "commit the edited coaching data under a new file name and run it as a new method)",
                 "$.method_config.coachingFile")


def _check_plugin_class(run: CardRun, card: RunCard) -> bool:
    """The plugin rules that need nothing installed (issue 18 review; spec §9.6): CI validates a submission without
    ever installing contributor code, so these are decided from the card and the names of mtboard's own backends
    (:data:`mtboard.backends.base.BUILTIN_BACKENDS`) alone — nothing is imported. A card with ``method.plugin`` is
    ``custom-plugin`` and names a backend that is not a built-in; a card naming a backend that is not a built-in
    records its plugin; a built-in backend's card is not ``custom-plugin``. Returns False when a rule failed."""
    m, plugin = card.method, card.method.plugin
    builtin = m.backend in BUILTIN_BACKENDS
    problems = []
    if plugin is not None and builtin:
        problems.append((f"method.plugin must be absent: backend {m.backend} is built into mtboard, not a plugin",
                         "$.method.plugin"))
    if plugin is not None and card.method_class != MethodClass.custom_plugin:
        problems.append((f"method_class {card.method_class.value} but the card records a plugin (method.plugin): a "
                         "plugin method is custom-plugin (spec §9.6)", "$.method_class"))
    if plugin is None and not builtin:
        problems.append((f"backend {safe_name(m.backend, 40)} is not built into mtboard, so it comes from a plugin: "
                         "the card must record it in method.plugin (distribution, version, files hash)",
                         "$.method.plugin"))
    if builtin and card.method_class == MethodClass.custom_plugin:
        problems.append((f"method_class custom-plugin but backend {m.backend} is built into mtboard (spec §9.6: "
                         "custom-plugin is for third-party plugins)", "$.method_class"))
    for message, where in problems:
        run.fail("method", message, where)
    return not problems


def _check_plugin(run: CardRun, card: RunCard) -> None:
    """``method.plugin`` names exactly the installed distribution that provides the backend here — name, version,
    entry point and the SHA-256 over its installed files (:func:`mtboard.backends.base.plugin_record`) — and is
    absent for mtboard's own backends (issue 18)."""
    try:
        here = plugin_record(card.method.backend)
    except MtboardError as exc:
        run.fail("method", exc.problem, "$.method.plugin")
        return
    got = card.method.plugin
    if here is None and got is not None and card.method.backend not in BUILTIN_BACKENDS:  # built-in: see above
        run.fail("method", f"method.plugin must be absent: backend {card.method.backend} is not provided by a plugin "
                           "distribution here", "$.method.plugin")
    elif here is not None and got is not None and got != here:  # got None: _check_plugin_class said so
        field = next(k for k in ("distribution", "version", "entry_point", "files_sha256")
                     if getattr(got, k) != getattr(here, k))
        run.fail("method", f"method.plugin.{field} differs from the installed plugin {here.distribution} "
                           f"{here.version} (install the recorded release to validate this card)",
                 f"$.method.plugin.{field}")


def _check_backend_bound(run: CardRun, card: RunCard, cls: type) -> None:
    """What the registered backend fixes: the model slug, the batch size, the local-model gate record."""
    _check_plugin(run, card)
    m = card.method
    if not cls.accepts_model_slug(card.model_slug, m, card.model_id):
        run.fail("method", f"model_slug does not agree with {m.backend}:model (backend {m.backend} names it "
                           f"{safe_name(cls.model_slug_for(m.model, m.effort), 80)})", "$.model_slug")
    if card.batch_size != max(1, cls.preferred_batch_size):
        run.fail("method", f"batch_size {card.batch_size} but backend {m.backend} translates "
                           f"{max(1, cls.preferred_batch_size)} entries per call", "$.batch_size")
    if m.local is not None and cls.local_gate:
        sources = [r.source for r in card.results[:18]]  # the runner's sample lines (languages without fixed ones)
        for problem in cls.check_local_gate(m.local, card.dataset.source_language, sources):
            run.fail("method", problem, "$.method.local")
    if cls.prompt_format == "raw" and (card.temperature is not None or m.max_tokens is not None):
        run.fail("method", f"backend {m.backend} takes the raw source: temperature and max_tokens must be null",
                 "$.temperature" if card.temperature is not None else "$.method.max_tokens")


def _check_prompt(run: CardRun, card: RunCard, cls: type | None) -> None:
    """A prompted card names a prompt file of this harness (``prompts/NAME.j2``) with the recorded template SHA-256;
    its format and the system prompt it renders for the dataset's languages must be the card's (issue 15:
    ``prompt_format`` matches the prompt). A prompt this harness does not have cannot be checked or re-run: add the
    file to ``prompts/`` in the same pull request. A prompt chosen from the served model (``method.prompt_choice``,
    issue 40 item 4) names the card's template and a family of :data:`mtboard.inputs.native.FAMILIES`."""
    m = card.method
    if m.prompt_format == "raw" and cls is not None and cls.prompt_format != "raw":
        run.fail("method", f"backend {m.backend} sends a prompt: prompt_format cannot be raw (the runner always "
                           "renders a prompt file for it)", "$.method.prompt_format")
        return
    if m.prompt_format == "raw":
        if m.prompt_name is not None or m.prompt_template_sha256 is not None or card.system_prompt_used:
            run.fail("method", "prompt_format raw means no prompt: prompt_name, prompt_template_sha256 and "
                               "system_prompt_used must be empty", "$.method.prompt_format")
        return
    if cls is not None and cls.prompt_format == "raw":
        return  # reported by check_method
    if not m.prompt_name or not m.prompt_template_sha256:
        run.fail("method", "a prompted method must record prompt_name and prompt_template_sha256",
                 "$.method.prompt_name")
        return
    if m.prompt_choice is not None and m.prompt_choice.template != m.prompt_name:
        run.fail("method", f"method.prompt_choice says template {m.prompt_choice.template!r} was chosen, but the "
                           f"card's prompt is {m.prompt_name!r}", "$.method.prompt_choice.template")
    if m.prompt_choice is not None and m.prompt_choice.family is not None:
        if m.prompt_choice.family not in {r.family for r in native.FAMILIES}:
            run.fail("method", f"method.prompt_choice.family {m.prompt_choice.family!r} is not a family of the "
                               "native prompt table (mtboard/inputs/native.py)", "$.method.prompt_choice.family")
    path = prompts_dir() / f"{m.prompt_name}.j2"
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", m.prompt_name) or not path.is_file():
        run.fail("method", "prompt_name is not a prompt of this harness (prompts/); its format and system prompt "
                           "cannot be checked: add the prompt file to prompts/ in the same pull request",
                 "$.method.prompt_name")
        return
    try:
        prompt = load_prompt(m.prompt_name, named=True, field="$.method.prompt_name")
    except MtboardError as exc:
        run.fail("method", f"prompt {m.prompt_name} cannot be loaded here: {exc.problem}", "$.method.prompt_name")
        return
    if prompt.template_sha256 != m.prompt_template_sha256:
        run.fail("method", "prompt_template_sha256 is not the SHA-256 of prompts/<prompt_name>.j2 here (a changed "
                           "prompt is a new file)", "$.method.prompt_template_sha256")
        return
    if prompt.format != m.prompt_format:
        run.fail("method", f"prompt_format {m.prompt_format} but prompt {m.prompt_name} is a {prompt.format} prompt",
                 "$.method.prompt_format")
    if card.tools_enabled and not prompt.uses_fst_feedback:
        run.fail("method", f"tools_enabled is set but prompt {m.prompt_name} does not declare fst_feedback (the FST "
                           "gate's retries could not reach the model)", "$.method.prompt_name")
    try:
        if card.method_config.coachingPrompt is not None:
            if not prompt.uses_coaching:
                run.fail("method", f"the card records coaching data but prompt {m.prompt_name} does not use it",
                         "$.method_config.coachingPrompt")
                return
            prompt = prompt.with_coaching(card.method_config.coachingPrompt)
        system = prompt.system_prompt(card.dataset.source_language, card.dataset.target_language)
    except MtboardError as exc:
        run.fail("method", f"prompt {m.prompt_name} cannot render the system prompt: {exc.problem}",
                 "$.system_prompt_used")
        return
    if system != card.system_prompt_used:
        run.fail("method", f"system_prompt_used is not what prompt {m.prompt_name} renders for this language pair",
                 "$.system_prompt_used")


def _check_prices(run: CardRun, card: RunCard) -> None:
    """Rates that came from the price table (``method.price_table_sha256``) must be that table's rates for the
    card's provider and model when this harness has the same table; with another table they stay declared."""
    m = card.method
    if m.price_table_sha256 is None:
        if m.price_cached_in_per_mtok is not None or m.price_reasoning_per_mtok is not None or m.price_as_of:
            run.fail("method", "cached/reasoning rates and price_as_of come only from the price table "
                               "(price_table_sha256 is null)", "$.method.price_table_sha256")
        return
    try:
        table = load_prices()
    except MtboardError:
        return
    if table.sha256 != m.price_table_sha256:
        return
    rates = table.rates(m.api_provider, m.model)
    got = (m.price_in_per_mtok, m.price_out_per_mtok, m.price_cached_in_per_mtok, m.price_reasoning_per_mtok,
           m.price_as_of)
    want = None if rates is None else (rates.input, rates.output, rates.cached_input, rates.reasoning, rates.as_of)
    if got != want:
        run.fail("method", "the recorded rates are not the price table's rates for this provider and model "
                           "(price_table_sha256 names this harness's prompts/prices.yaml)",
                 "$.method.price_in_per_mtok")

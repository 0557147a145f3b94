"""CLI commands: ``mtboard corpus import | check | merge | rotate`` (spec §2; issue 2 item 4; ``rotate``: spec
§9.3.2, issue 39 item 2)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import corpus_app, fail, guarded
from mtboard.core.errors import ConfigError, MtboardError
from mtboard.inputs.corpora import minimums


def _info(**kw):
    from mtboard.core.documents import validate_model
    from mtboard.core.schema import DatasetInfo

    return validate_model(DatasetInfo, kw, "command line")


@corpus_app.command("import")
@guarded
def import_(
    inputs: Annotated[list[Path], typer.Argument(help="Input files: gettext .po/.mo, .tmx, .xlf/.xliff (1.2 or "
                                                 "2.x), .tsv (source<TAB>reference), .csv (source,reference; RFC "
                                                 "4180; a semicolon, tab or pipe delimiter is found, see "
                                                 "--delimiter), or plain parallel text as pairs of files (corpus.<src> "
                                                 "corpus.<tgt>: one segment per line).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Corpus JSON file to write.")],
    source_lang: Annotated[str, typer.Option("--source-lang", help="BCP 47 code of the source language, e.g. en.")],
    target_lang: Annotated[str, typer.Option("--target-lang", help="BCP 47 code of the target language, e.g. es.")],
    license: Annotated[str, typer.Option("--license", help="SPDX expression of the texts' licence.")],
    domain: Annotated[Optional[str], typer.Option("--domain", help="One of the 16 domain codes (spec §2.7).")] = None,
    register: Annotated[Optional[str], typer.Option("--register", help="Register for every entry (spec §2.6); "
                                                    "default: by domain rule.")] = None,
    provenance: Annotated[str, typer.Option("--provenance", help="Entry provenance label (spec §2.5).")] = "corpus",
    sample_n: Annotated[Optional[int], typer.Option("--sample", min=1, help="Keep N pairs, ranked by SHA-256 of "
                                                    "(seed, source, reference).")] = None,
    seed: Annotated[str, typer.Option("--seed", help="Sampling seed (any string).")] = "0",
    dataset_id: Annotated[Optional[str], typer.Option("--id", help="Dataset id (default "
                                                      "mtb-<src>-<tgt>-import).")] = None,
    version: Annotated[str, typer.Option("--version", help="Dataset semantic version.")] = "1.0.0",
    description: Annotated[Optional[str], typer.Option("--description", help="One-paragraph description.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="auto | po | mo | tmx | xliff | tsv | csv | parallel "
                                     "(auto: by file suffix; .<src>/.<tgt> file pairs are parallel text)")] = "auto",
    package: Annotated[Optional[str], typer.Option("--package", help="Upstream package name for entries' origin "
                                                   "(default: the input file name).")] = None,
    package_version: Annotated[Optional[str], typer.Option("--package-version",
                                                           help="Upstream package version.")] = None,
    reverse: Annotated[bool, typer.Option("--reverse", help="Swap the sides: read <target>→<source> files (e.g. an "
                                          "en→ja catalogue for a ja→en corpus); noted in every origin.")] = False,
    diagnostic_placeholders: Annotated[bool, typer.Option(
        "--diagnostic-placeholders", help="Put entries whose source has placeholders in the diagnostic segment.")] = False,
    created: Annotated[Optional[str], typer.Option("--created",
                                                   help="Creation date YYYY-MM-DD (default today).")] = None,
    delimiter: Annotated[str, typer.Option("--delimiter", help="The delimiter of CSV input: auto (from Excel's "
                                           "'sep=;' first line, else the one of comma, semicolon, tab, pipe with "
                                           "which every record has two fields; Excel writes semicolons where the "
                                           "decimal separator is a comma; when two fit, a header line naming the "
                                           "columns or a spacing rule that holds for every record decides, else the "
                                           "file is refused: corpora/SOURCES.md), ',', ';', 'tab' or '|'. Given, it "
                                           "wins over a 'sep=' line (the line is still dropped).")] = "auto",
    glossary: Annotated[Optional[Path], typer.Option("--glossary", help="TBX (.tbx) or CSV (.csv: term,rendering"
                                                     "[,rendering…]) glossary in the corpus direction: each entry "
                                                     "keeps the terms its source contains (terminology "
                                                     "adherence).")] = None,
) -> None:
    """Import human translations into a corpus file: read (each file's kept and skipped units are printed, with the
    reasons), filter (corpora/SOURCES.md 'Filters'), sample, label; with ``--glossary``, keep each entry's glossary
    terms."""
    from mtboard.inputs.corpora.assemble import sample

    dom, reg = _import_options(source_lang, target_lang, domain, register, fmt)
    delim = _delimiter(delimiter, fmt, inputs)
    kept = _read_and_filter(inputs, fmt, source_lang, target_lang, reverse=reverse, package=package, delimiter=delim)
    entries = _to_entries(sample(kept, sample_n, seed), source_lang, target_lang, dom, reg, provenance=provenance,
                          package_version=package_version, reverse=reverse,
                          diagnostic_placeholders=diagnostic_placeholders)
    if glossary is not None:
        entries = _attach_glossary(entries, glossary, source_lang, target_lang)
    info = _info(id=dataset_id or f"mtb-{source_lang.lower()}-{target_lang.lower()}-import", version=version,
                 language_pair=f"{source_lang.upper()}→{target_lang.upper()}", source_language=source_lang,
                 target_language=target_lang, created=created or date.today().isoformat(), license=license,
                 provenance=[provenance], **({"description": description} if description else {}))
    _write_imported(info, entries, output)


def _import_options(source_lang: str, target_lang: str, domain: str | None, register: str | None, fmt: str):
    """``corpus import``'s option checks, in order: both languages are BCP 47, ``--domain`` and ``--register`` are
    known values, ``--format`` is one of :data:`FORMATS`. Returns ``(Domain | None, Register | None)``.
    Raises: ConfigError naming the option."""
    from mtboard.core.schema import Domain, Register, _check_bcp47

    for name, value in (("--source-lang", source_lang), ("--target-lang", target_lang)):
        try:
            _check_bcp47(value)
        except ValueError as exc:
            raise ConfigError(str(exc), field=name) from None
    dom = _enum(Domain, domain, "--domain")
    reg = _enum(Register, register, "--register")
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}", field="--format", fix=f"use one of: {', '.join(FORMATS)}")
    return dom, reg


DELIMITER_CHOICES = {"auto": None, ",": ",", ";": ";", "tab": "\t", "\t": "\t", "|": "|"}
"""``--delimiter`` values and the delimiter each names (None: found from the file)."""


def _delimiter(value: str, fmt: str, inputs: list[Path]) -> str | None:
    """``--delimiter``: the delimiter character, or None for ``auto``.
    Raises: ConfigError naming the option for an unknown value, or a delimiter given for input not read as CSV."""
    if value not in DELIMITER_CHOICES:
        raise ConfigError(f"unknown delimiter {value!r}", field="--delimiter", fix="use one of: auto , ; tab |")
    chosen = DELIMITER_CHOICES[value]
    if chosen is not None:
        other = next((p for p in inputs if (fmt if fmt != "auto" else
                                             _SUFFIX_FORMAT.get(p.suffix.lower().lstrip("."))) != "csv"), None)
        if other is not None:
            raise ConfigError(f"{other.name} is not read as CSV; --delimiter applies to CSV input only",
                              field="--delimiter", fix="pass --format csv to read it as delimited text, or leave "
                                                      "--delimiter out")
    return chosen


def _read_and_filter(inputs: list[Path], fmt: str, source_lang: str, target_lang: str, *, reverse: bool,
                     package: str | None, delimiter: str | None = None) -> list:
    """Read every input (file or parallel pair; each one's kept and skipped units printed to stderr as it is read),
    name its pairs' file and package, swap the sides when ``reverse``, and keep the pairs the corpus filters pass
    (corpora/SOURCES.md 'Filters'; their summary printed). ``delimiter``: CSV input's (None: found per file).
    Returns the kept pairs in input order."""
    from mtboard.inputs.corpora.filters import FilterReport, filter_pairs
    from mtboard.inputs.corpora.importers import ImportReport

    # files are read in the catalogue's direction, then reversed when asked
    read_src, read_tgt = (target_lang, source_lang) if reverse else (source_lang, target_lang)
    report = FilterReport()
    kept = []
    for paths in _read_groups(inputs, fmt, read_src, read_tgt):
        imported = ImportReport()
        raw = _read(paths, fmt, read_src, read_tgt, imported, delimiter=delimiter)
        name = paths[0].name if len(paths) == 1 else f"{paths[0].name} + {paths[1].name}"
        typer.echo(f"read {name}: {imported.summary()}", err=True)
        raw = [replace(p, file=name, package=package or name) for p in raw]
        if reverse:
            raw = [replace(p, source=p.reference, reference=p.source) for p in raw]
        kept += filter_pairs(raw, source_lang, target_lang, report)
    typer.echo(f"filters: {report.summary()}", err=True)
    return kept


def _to_entries(chosen: list, source_lang: str, target_lang: str, dom, reg, *, provenance: str,
                package_version: str | None, reverse: bool, diagnostic_placeholders: bool) -> list:
    """The sampled pairs as labelled corpus entries: the diagnostic segment for a source with placeholders when
    ``diagnostic_placeholders`` (else development), each pair's origin (with a note on a reversed catalogue), the
    English side for the labels (the reference when ``reverse``)."""
    from mtboard.inputs.corpora import labels as L
    from mtboard.inputs.corpora.assemble import to_entry
    from mtboard.core.schema import Origin, Segment

    note = (f"reversed from a {target_lang}→{source_lang} catalogue: the {target_lang} text is the original and the "
            f"{source_lang} its human translation") if reverse else None
    english_side = (lambda p: p.reference) if reverse else (lambda p: p.source)
    entries = []
    for p in chosen:
        seg = Segment.diagnostic if diagnostic_placeholders and L.is_diagnostic(p.source) else Segment.development
        origin = Origin(package=p.package, package_version=package_version, file=p.file, locator=p.locator,
                        note="; ".join(n for n in (note, p.note) if n) or None)
        entries.append(to_entry(p, source_lang=source_lang, domain=dom, segment=seg, register=reg,
                                provenance=provenance, origin=origin, english=english_side(p)))
    return entries


def _attach_glossary(entries: list, glossary: Path, source_lang: str, target_lang: str) -> list:
    """Each entry with the glossary terms its source contains (``--glossary``: TBX or CSV); prints how many terms
    were read and how many entries contain one."""
    from mtboard.inputs.corpora.importers.glossary import attach_glossary, read_glossary

    terms = read_glossary(glossary, source_lang, target_lang)
    entries = attach_glossary(entries, terms)
    typer.echo(f"glossary {glossary.name}: {len(terms)} terms, found in the sources of "
               f"{sum(1 for e in entries if e.glossary)} of {len(entries)} entries", err=True)
    return entries


def _write_imported(info, entries: list, output: Path) -> None:
    """Build and write the corpus; print its path, entry count, SHA-256 and its counts by segment, domain and
    difficulty."""
    from mtboard.inputs.corpora.assemble import build_corpus, summarize
    from mtboard.core.documents import write_corpus

    corpus = build_corpus(info, entries)
    digest = write_corpus(corpus, output)
    counts = summarize(corpus)
    typer.echo(f"wrote {output}: {len(corpus.entries)} entries, sha256 {digest}")
    typer.echo(f"  segment     {_fmt(counts['segment'])}")
    typer.echo(f"  domain      {_fmt(counts['domain'])}")
    typer.echo(f"  difficulty  {_fmt(counts['difficulty'])}")


FORMATS = ("auto", "po", "mo", "tmx", "xliff", "tsv", "csv", "parallel")
_SUFFIX_FORMAT = {"po": "po", "pot": "po", "mo": "mo", "tmx": "tmx", "xlf": "xliff", "xliff": "xliff",
                  "sdlxliff": "xliff", "tsv": "tsv", "tab": "tsv", "txt": "tsv", "csv": "csv"}


def _read_groups(inputs: list[Path], fmt: str, read_src: str, read_tgt: str) -> list[tuple[Path, ...]]:
    """The input files grouped as the readers take them: one file, or a (source, target) pair of parallel text
    files (``--format parallel``: consecutive pairs; auto: two files named ``<stem>.<src>`` and ``<stem>.<tgt>``)."""
    from mtboard.core.languages import same_language

    def lang_suffix(path: Path, lang: str) -> bool:
        suffix = path.suffix.lstrip(".")
        try:
            return bool(suffix) and same_language(suffix, lang) and suffix.lower() in (lang.lower(),
                                                                                       lang.split("-")[0].lower())
        except MtboardError:
            return False

    if fmt == "parallel" or (fmt == "auto" and len(inputs) == 2 and lang_suffix(inputs[0], read_src)
                             and lang_suffix(inputs[1], read_tgt)):
        if len(inputs) % 2:
            raise ConfigError(f"{len(inputs)} files for parallel text", field="inputs",
                              fix="pass parallel text as pairs: SOURCE_FILE TARGET_FILE [SOURCE_FILE TARGET_FILE …]")
        return [(inputs[i], inputs[i + 1]) for i in range(0, len(inputs), 2)]
    return [(p,) for p in inputs]


def _read(paths: tuple[Path, ...], fmt: str, read_src: str, read_tgt: str, report, *, delimiter: str | None = None):
    from mtboard.inputs.corpora import importers as I

    if len(paths) == 2:
        return I.read_parallel(paths[0], paths[1], report)
    path = paths[0]
    kind = fmt if fmt != "auto" else _SUFFIX_FORMAT.get(path.suffix.lower().lstrip("."))
    if kind in ("po", "mo"):
        return I.read_catalog(path, report)
    if kind == "tsv":
        return I.read_tsv(path, report, source_lang=read_src, target_lang=read_tgt)
    if kind == "csv":
        return I.read_csv(path, report, source_lang=read_src, target_lang=read_tgt, delimiter=delimiter)
    if kind == "tmx":
        return I.read_tmx(path, read_src, read_tgt, report)
    if kind == "xliff":
        return I.read_xliff(path, read_src, read_tgt, report)
    raise ConfigError(f"cannot tell the format of {path.name}", field="--format",
                      fix="name files .po/.mo/.tmx/.xlf/.tsv/.csv, pass parallel text as <stem>.<src> <stem>.<tgt>, "
                          "or pass --format")


def _enum(enum, value: str | None, option: str):
    if value is None:
        return None
    try:
        return enum(value)
    except ValueError:
        choices = ", ".join(m.value for m in enum)
        raise ConfigError(f"unknown value {value!r}", field=option, fix=f"choose one of: {choices}") from None


def _fmt(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


@corpus_app.command("check")
@guarded
def check(
    files: Annotated[list[Path], typer.Argument(help="Corpus JSON files to validate.")],
    public: Annotated[bool, typer.Option("--public", help="Also fail when an entry is in a secret segment "
                                         "(gold_standard, held_out): use for files committed to a public repo.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail on flagged entries too (reference identical to the "
                                         "source, duplicate pairs, placeholders that differ).")] = False,
    new_language: Annotated[bool, typer.Option("--new-language", help="The corpus opens a language pair on the "
                                               "board: refuse it below spec §11.1's minimums (public: "
                                               f"{minimums.summary('public')}; with --private: the consent document "
                                               "too). The test suite checks every corpus in corpora/ with it.")]
    = False,
    private: Annotated[bool, typer.Option("--private", help="Maintainers: the files are the private (secret) "
                                          f"corpus; refuse it without {minimums.BY_KEY['gold_standard'].short} and, "
                                          "with --new-language, without its consent document <stem>.consent."
                                          f"{{{','.join(s.lstrip('.') for s in minimums.CONSENT_SUFFIXES)}}} "
                                          "beside the file. Prints counts only, never text.")] = False,
) -> None:
    """Validate corpus files (strict schema; blank sources or references are refused) and print counts by segment,
    domain and difficulty, then flag entries whose reference equals the source, duplicate source+reference pairs and
    placeholders that differ between source and reference (mtboard.inputs.corpora.audit).

    Malformed variants are errors (spec §9.3.1; mtboard.score.variants): a variant equal to the reference or to
    another variant, a variant in another script or left in the source language, a variant of ≥ 3 words whose
    function words are mostly a third language's (a heuristic: a single word in another language is not detected),
    variants without a variant_class, a variant_class without variants or a class label not like 'simple-ta-direct'.
    Each line names the file, the entry, the field and the fix.

    With --new-language (spec §11.1; mtboard.inputs.corpora.minimums) one line per unmet minimum names the file, the
    field, the count found against the count required, and the fix; --private checks the secret corpus's minimums.

    Exit 1 with one line per bad file (file, field, problem) when any file fails, any variant is malformed, any
    minimum is unmet, or any entry is flagged with --strict.
    """
    from mtboard.inputs.corpora.assemble import summarize
    from mtboard.inputs.corpora.audit import audit_corpus
    from mtboard.core.documents import load_corpus
    from mtboard.core.errors import MtboardError
    from mtboard.core.schema import SECRET_SEGMENTS
    from mtboard.score.variants import corpus_variant_problems

    if public and private:
        fail("--public and --private exclude each other: a public file must hold no secret segment, a private one "
             "holds them")
    errors: list[str] = []
    report: dict[str, object] = {}
    for path in files:
        try:
            corpus, digest = load_corpus(path)
        except MtboardError as exc:
            errors.append(exc.one_line())
            continue
        if public:
            bad = [i for i, e in enumerate(corpus.entries) if e.segment in SECRET_SEGMENTS]
            if bad:
                e = corpus.entries[bad[0]]
                errors.append(f"{path}: entries[{bad[0]}].segment: {e.segment} is secret and must not be public "
                              f"({len(bad)} such entries) (fix: move gold_standard/held_out entries to a private file)")
                continue
        unmet = _unmet_minimums(corpus, path, new_language=new_language, private=private)
        errors += unmet
        counts = summarize(corpus)
        findings = audit_corpus(corpus)
        if private:  # a finding's detail may quote placeholders of the secret text: rule and entry only
            findings = [replace(f, detail="(detail withheld: private corpus)") for f in findings]
        malformed = corpus_variant_problems(corpus)  # its lines name rules, fields and counts, never the text
        if malformed:  # spec §9.3.1: a malformed variant is an error, --strict or not
            errors += [p.line(str(path)) for p in malformed]
            continue
        with_variants = [e for e in corpus.entries if e.variants]
        classes = dict(sorted(Counter(e.variant_class for e in with_variants).items()))
        report[str(path)] = {"id": corpus.dataset.id, "version": corpus.dataset.version, "sha256": digest,
                             "entries": len(corpus.entries), **counts,
                             # what the text output's "variants" line prints: entries with variants, by class
                             "variants": {"entries": len(with_variants), "classes": classes},
                             "flags": [{"rule": f.rule, "entry_id": f.entry_id, "detail": f.detail}
                                       for f in findings],
                             **({"minimums_unmet": len(unmet)} if new_language or private else {})}
        for f in findings:
            typer.echo(f"{'error' if strict else 'flag'}: {f.line(str(path))}", err=True)
        if strict and findings:
            errors.append(f"{path}: {len(findings)} flagged entries (fix: correct them, or check without --strict)")
            continue
        if not as_json:
            d = corpus.dataset
            # --private alone checks only the gold_standard count (spec §2.3), not the new-language minimums
            below = ("below the new-language minimums" if new_language
                     else f"below the private corpus's minimum ({minimums.BY_KEY['gold_standard'].short}, spec §2.3)")
            typer.echo(f"{path}: {below if unmet else 'ok'} — {d.id} {d.version} {d.language_pair}, "
                       f"{len(corpus.entries)} entries, "
                       f"licence {d.license}, sha256 {digest}")
            for field in ("segment", "domain", "difficulty"):
                typer.echo(f"  {field:<11} {_fmt(counts[field])}")
            if with_variants:
                typer.echo(f"  variants    {len(with_variants)} entries with variants: {_fmt(classes)}")
            if not new_language and not private:
                _minimums_note(corpus)
    if as_json:
        typer.echo(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
    for line in errors:
        typer.echo(f"error: {line}", err=True)
    if errors:
        raise typer.Exit(1)


def _unmet_minimums(corpus, path: Path, *, new_language: bool, private: bool) -> list[str]:
    """The lines of the spec §11.1 minimums ``corpus`` (read from ``path``) misses: the public ones with
    ``new_language``; the private ones (gold_standard count; consent with ``new_language``) with ``private``."""
    from mtboard.inputs.corpora.minimums import check_private, check_public

    if private:
        return [u.line(str(path)) for u in check_private(corpus, path, new_language=new_language)]
    return [u.line(str(path)) for u in check_public(corpus)] if new_language else []


def _minimums_note(corpus) -> None:
    """Without --new-language: a note (stderr) naming the public §11.1 minimums the corpus misses."""
    from mtboard.inputs.corpora.minimums import check_public

    missed = [u.minimum.key for u in check_public(corpus)]
    if missed:
        typer.echo(f"  note: below spec §11.1's new-language minimums ({', '.join(missed)}); a corpus that opens a "
                   "language pair must meet them (corpus check --new-language)", err=True)


@corpus_app.command("merge")
@guarded
def merge(
    inputs: Annotated[list[Path], typer.Argument(help="Corpus files of one language pair, in merge order.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Merged corpus file to write.")],
    dataset_id: Annotated[str, typer.Option("--id", help="Id of the merged dataset.")],
    version: Annotated[str, typer.Option("--version", help="Semantic version of the merged dataset.")] = "1.0.0",
    license: Annotated[Optional[str], typer.Option("--license", help="SPDX expression (default: the inputs' "
                                                   "licences joined with AND).")] = None,
    description: Annotated[Optional[str], typer.Option("--description", help="One-paragraph description.")] = None,
    created: Annotated[Optional[str], typer.Option("--created", help="YYYY-MM-DD (default: latest input date).")] = None,
) -> None:
    """Merge corpora (e.g. one import per domain) into one multi-domain dataset with stable ids.

    Ids are renumbered 1..N in input order; duplicates (same source and reference) keep their first occurrence.
    """
    from mtboard.inputs.corpora.assemble import merge_corpora, summarize
    from mtboard.core.documents import load_corpus, write_corpus

    corpora = [load_corpus(p)[0] for p in inputs]
    first = corpora[0].dataset
    licences: list[str] = []
    for c in corpora:
        lic = c.dataset.license if " " not in c.dataset.license or c.dataset.license.startswith("(") \
            else f"({c.dataset.license})"
        if lic not in licences:
            licences.append(lic)
    lic_expr = license or (" AND ".join(licences) if len(licences) > 1 else corpora[0].dataset.license)
    info = _info(id=dataset_id, version=version, language_pair=first.language_pair,
                 source_language=first.source_language, target_language=first.target_language,
                 created=created or max(c.dataset.created for c in corpora), license=lic_expr,
                 provenance=list(first.provenance), **({"description": description} if description else {}))
    merged = merge_corpora(corpora, info)
    digest = write_corpus(merged, output)
    counts = summarize(merged)
    typer.echo(f"wrote {output}: {len(merged.entries)} entries from {len(inputs)} files, sha256 {digest}")
    typer.echo(f"  domain      {_fmt(counts['domain'])}")


@corpus_app.command("rotate")
@guarded
def rotate(
    corpus_path: Annotated[Path, typer.Argument(metavar="CORPUS", help="Corpus JSON file to rotate.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the new version (written "
                                         "atomically; may be CORPUS itself).")],
    # (0, 1] is refused in rotate() (typer has no open lower bound; min=0.0 would show [0.0<=x<=1.0])
    share: Annotated[float, typer.Option("--share", help="Share of the smaller side of each "
                                         "development ↔ segment pair that trades places, in (0, 1]; at least one "
                                         "pair per segment.")] = 0.1,
    seed: Annotated[Optional[str], typer.Option("--seed", help="Required: the rotation seed, a private random "
                                                "value (e.g. `openssl rand -hex 16`); it decides which entries move, "
                                                "so it stays private (never written in the file).")] = None,
    version: Annotated[Optional[str], typer.Option("--version", help="The new dataset version (default: the minor "
                                                   "number bumped, 1.0.0 → 1.1.0).")] = None,
    created: Annotated[Optional[str], typer.Option("--created", help="The new version's date YYYY-MM-DD (default "
                                                   "today).")] = None,
) -> None:
    """Rotate entries between segments (spec §9.3.2) into a new dataset version: for each segment other than
    development, the best-ranked entries by SHA-256(seed, dataset id, input version, entry id) trade places with as many development
    entries (share × the smaller side, at least one pair), so every segment keeps its size; texts, ids and labels stay
    unchanged. The version is bumped: cards scored on the old version stay on the old version's board and are never
    ranked with the new one's (docs/corpora.md "Rotation")."""
    from mtboard.core.documents import load_corpus, write_corpus
    from mtboard.inputs.corpora.assemble import summarize
    from mtboard.inputs.corpora.rotate import rotate as rotate_corpus

    from datetime import datetime, timezone

    from mtboard.core.errors import check_writable

    if seed is None:
        raise ConfigError("no seed given: the rotation seed decides which entries move", field="--seed",
                          fix='give a private random value, e.g. --seed "$(openssl rand -hex 16)", and keep it private')
    check_writable(output, "--output/-o")  # a folder → one line; a missing parent folder is made, as corpus import does
    corpus, _ = load_corpus(corpus_path)
    done = rotate_corpus(corpus, share=share, seed=seed, version=version,
                         created=created or datetime.now(timezone.utc).date().isoformat(), source=corpus_path.name)
    digest = write_corpus(done.corpus, output)
    d = done.corpus.dataset
    typer.echo(f"wrote {output}: {d.id} {corpus.dataset.version} → {d.version}, {done.count} entries changed "
               f"segment, sha256 {digest}")
    for seg, (into, out) in done.moved.items():
        typer.echo(f"  {seg:<13} {len(into)} to development (ids {', '.join(map(str, into))}); "
                   f"{len(out)} from development (ids {', '.join(map(str, out))})")
    typer.echo(f"  segment     {_fmt(summarize(done.corpus)['segment'])}")

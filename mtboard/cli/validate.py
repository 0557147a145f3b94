"""CLI commands: ``mtboard validate``, ``mtboard submit``, ``mtboard verify`` (issue 6; spec §9).

Exit codes: 0 all checks passed / verification passed; 1 any problem (one line per problem, never a traceback, never
file content).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, fail, guarded
from mtboard.core.errors import ConfigError

_FORMATS = ("text", "json", "markdown")


def validation_context(root: Path, corpora: Optional[Path], secret_env: Optional[str] = "MTBOARD_SECRET_SEGMENT"):
    """The validator's :class:`mtboard.validate.Context`, scanning for the text of the secret-segment corpus file
    that ``$secret_env`` names (none when ``secret_env`` is empty or the variable unset;
    :func:`mtboard.cli.environment.secret_segment_path`)."""
    from mtboard.cli.environment import secret_segment_path
    from mtboard.validate import make_context

    secret = secret_segment_path(secret_env)
    return make_context(root, corpora, secret_segment=secret, secret_source=f"${secret_env}" if secret else None)


@app.command("validate")
@guarded
def validate_cmd(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Card files or folders (default: submissions/).")] = None,
    root: Annotated[Path, typer.Option("--root", help="Repository root holding submissions/ and corpora/.")] = Path("."),
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Trusted corpora folder (default ROOT/corpora; "
                                                    "CI passes the base branch's).")] = None,
    changes: Annotated[Optional[Path], typer.Option("--changes", help="Output of `git diff --no-renames "
                                                    "--name-status -z BASE HEAD`: enforce the pull-request scope "
                                                    "and validate the changed submissions.")] = None,
    allow_outside: Annotated[bool, typer.Option("--allow-outside-submissions", help="Maintainer label present: accept "
                                                "changes outside submissions/.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text | json | markdown (markdown: per card the submission "
                                     "gate's rules met and missed, for a pull-request comment or the CI job "
                                     "summary)")] = "text",
    tier: Annotated[Optional[str], typer.Option("--tier", help="Hold every card to the submission gate of this "
                                                "verification tier: self-benchmarked | gds-verified | "
                                                "community-verified (default: the tier each card's evidence "
                                                "claims; spec §9.4-9.5, docs/submissions.md §2a).")] = None,
    secret_env: Annotated[str, typer.Option("--secret-segment-env", help="Environment variable that may name a "
                                            "secret-segment corpus file; its texts must appear nowhere.")]
    = "MTBOARD_SECRET_SEGMENT",
) -> None:
    """Run the named checks over run cards and the repository; per-check report; exit 1 on any failure."""
    from mtboard.core import safejson
    from mtboard.validate import parse_changes, render_json, render_text, validate_paths
    from mtboard.validate.report import render_markdown
    from mtboard.validate.submission import TIERS

    if fmt not in _FORMATS:
        fail(f"--format must be one of {', '.join(_FORMATS)}")
    if tier is not None and tier not in TIERS:
        fail(f"--tier must be one of {', '.join(TIERS)}")
    ctx = validation_context(root, corpora, secret_env)
    change_list = None
    if changes is not None:
        change_list = parse_changes(safejson.read_bytes(changes))
    report = validate_paths(paths or None, ctx, changes=change_list, allow_outside=allow_outside, tier=tier)
    render = {"json": render_json, "markdown": render_markdown}.get(fmt, render_text)
    typer.echo(render(report))
    if not report.ok:
        raise typer.Exit(1)


@app.command("submit")
@guarded
def submit_cmd(
    card: Annotated[Path, typer.Argument(help="The sealed run card to submit.")],
    root: Annotated[Path, typer.Option("--root", help="Repository root holding submissions/.")] = Path("."),
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Corpora folder (default ROOT/corpora).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and show the destination; copy nothing.")]
    = False,
) -> None:
    """Validate a card, copy it to submissions/<dataset>/<slug>__<condition>__<hash12>.json, print the PR commands."""
    from mtboard.run.submit import submit_card

    ctx = validation_context(root, corpora)
    sub = submit_card(card, ctx, dry_run=dry_run)
    verb = "would copy" if dry_run else "copied"
    typer.echo(f"validated: all {len(sub.report.checks)} checks passed")
    typer.echo(f"{verb} to {sub.relpath}")
    if sub.unranked:
        typer.echo(f"warning: {sub.unranked}")
    for w in sub.report.warnings:  # the variant-class lint (spec §9.3.1): a mark on the board, not a refusal
        typer.echo(f"warning: {w.check}: {w.message}")
    for other in sub.same_fingerprint:
        typer.echo(f"note: {other} has the same fingerprint (the same experiment); the board will show both rows")
    if sub.body_path is not None:
        typer.echo(f"pull-request body (the template filled from the card; review it): {sub.body_path}")
    typer.echo("open the pull request with:")
    for c in sub.commands:
        typer.echo(f"  {c}")


@app.command("verify")
@guarded
def verify_cmd(
    card: Annotated[Path, typer.Argument(help="Submitted run card to re-run (GDS verification, spec §9.4).")],
    tolerance: Annotated[float, typer.Option("--tolerance", min=0.0001, max=1.0,
                                             help="Relative tolerance per score (spec §1.3: 0.02 = ±2%).")] = 0.02,
    secret_env: Annotated[Optional[str], typer.Option("--secret-segment-env", help="Also run on the secret-segment "
                                                      "corpus file this environment variable names (scores "
                                                      "reported, not compared).")] = None,
    root: Annotated[Path, typer.Option("--root", help="Repository root holding submissions/.")] = Path("."),
    corpora: Annotated[Optional[Path], typer.Option("--corpora", help="Corpora folder (default ROOT/corpora).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for the record and the re-run card "
                                                "(default: next to the card).")] = None,
    commit: Annotated[Optional[str], typer.Option("--commit", help="Git commit (40 hex) the card was read at.")] = None,
    workdir: Annotated[Optional[Path], typer.Option("--workdir", help="Work folder for the re-run (default: a "
                                                    "temporary folder).")] = None,
    model_path: Annotated[Optional[Path], typer.Option("--model-path", help="Local GGUF file for a gguf card "
                                                       "made from a local path (its SHA-256 must match the "
                                                       "card's).")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint for the re-run "
                                                    "(default $OPENAI_BASE_URL), e.g. your own server with the "
                                                    "weights the card names; they must match the card's.")] = None,
    segment: Annotated[str, typer.Option("--segment", help="development (default: re-run the card's own segment and "
                                         "compare) | gold_standard | held_out (re-run on the secret corpus and "
                                         "write a scores-only card; issue 17).")] = "development",
    secret_corpus: Annotated[Optional[Path], typer.Option("--secret-corpus", help="Secret corpus file, or folder of "
                                                          "them, for --segment gold_standard/held_out.")] = None,
    official: Annotated[Optional[Path], typer.Option("--official", help="Committed official/ folder: a held_out "
                                                     "run is refused when it holds one for the card's "
                                                     "fingerprint.")] = None,
) -> None:
    """Re-run a card's method from its recorded configuration and compare every score within the tolerance; with
    --segment gold_standard/held_out, re-run it on the secret corpus and write only a scores-only card."""
    from mtboard.cli.environment import environment, secret_segment_path
    from mtboard.cli.run import progress_sink
    from mtboard.verify.rerun import verify_card

    if segment != "development":
        from mtboard.core.schema import Segment
        from mtboard.score.scores_card import parse_salt
        from mtboard.verify.secret import evaluate_secret

        if segment not in ("gold_standard", "held_out"):
            fail("--segment must be development, gold_standard or held_out")
        if secret_corpus is None:
            fail(f"--segment {segment} needs --secret-corpus PATH")
        salt = parse_salt(environment().salt_text(), "MTBOARD_HYPOTHESIS_SALT")
        res = evaluate_secret(card, secret_corpus, Segment(segment), salt=salt, out_dir=out, official_dir=official,
                              model_path=model_path, base_url=base_url,
                              progress=progress_sink(f"verify {card.name} ({segment})", workdir))
        sc = res.card.scores
        typer.echo(f"  {segment}: {res.card.dataset.entry_count} entries, composite {sc.composite:.6g}, chrF++ "
                   f"{sc.chrf_plus_plus:.6g}, BLEU {sc.bleu:.6g}, errors {sc.errors}")
        typer.echo(f"scores-only card: {res.path}")
        return

    secret = secret_segment_path(secret_env)
    if secret_env and secret is None:
        raise ConfigError(f"${secret_env} is not set", field="--secret-segment-env",
                          fix=f"export {secret_env}=/path/to/secret-segment.json")
    result = verify_card(card, root=root, corpora_dir=corpora, tolerance=tolerance, secret_segment_file=secret,
                         out_dir=out, commit=commit, workdir=workdir, model_path=model_path, base_url=base_url,
                         progress=progress_sink(f"verify {card.name}", workdir))
    rec = result.record
    for d in rec.deltas:
        rel = f"{d.relative * 100:.2f}%" if d.relative is not None else "n/a"
        delta = f"{d.delta:+.6g}" if d.delta is not None else "n/a"
        stored = "null" if d.stored is None else f"{d.stored:.6g}"
        rerun = "null" if d.rerun is None else f"{d.rerun:.6g}"
        typer.echo(f"  {'ok  ' if d.within else 'FAIL'} {d.metric}: stored {stored}, re-run {rerun}, "
                   f"delta {delta} ({rel})")
    for name, value in rec.secret_scores.items():
        if value is not None:
            typer.echo(f"  secret segment {rec.secret_segment}: {name} {value:.6g} (reported, not compared)")
    typer.echo(f"record: {result.record_path}")
    if rec.passed:
        typer.echo(f"verification passed within ±{rec.tolerance * 100:g}%: tier {rec.tier}")
    else:
        fail(f"verification failed: {rec.reason}")


@app.command("verify-record")
@guarded
def verify_record_cmd(
    record: Annotated[Path, typer.Argument(help="A verification record, <card stem>.verification.json.")],
    repository: Annotated[Optional[str], typer.Option("--repository", help="owner/name whose verify workflow must "
                                                      "have attested it (default $MTBOARD_ATTESTATION_REPOSITORY, "
                                                      "else $GITHUB_REPOSITORY).")] = None,
    workflow: Annotated[str, typer.Option("--workflow", help="Workflow file that must have signed.")]
    = ".github/workflows/verify.yml",
    ref: Annotated[str, typer.Option("--ref", help="Git ref that workflow must have run on.")] = "refs/heads/main",
    bundle: Annotated[Optional[Path], typer.Option("--bundle", help="Sigstore bundle (default: "
                                                   "<record>.sigstore beside the record).")] = None,
    card: Annotated[Optional[Path], typer.Option("--card", help="The verified card (default: the card beside the "
                                                 "record, when present); its run_card_hash must match.")] = None,
) -> None:
    """Check a verification record: its numbers agree with each other and with the card, and a GitHub artifact
    attestation by the verify workflow vouches for its exact bytes (offline, pinned Sigstore trusted root).
    Exit 0 when attested and consistent; 1 with one line per reason otherwise."""
    from mtboard.cli.environment import environment
    from mtboard.core.documents import load_card
    from mtboard.verify.record import RECORD_SUFFIX, check_record, expected_signer

    signer = expected_signer(repository or environment().attestation_repository, workflow=workflow, ref=ref)
    if card is None and record.name.endswith(RECORD_SUFFIX):
        beside = record.with_name(record.name[: -len(RECORD_SUFFIX)] + ".json")
        card = beside if beside.is_file() else None
    card_hash = load_card(card).run_card_hash if card is not None else None
    result = check_record(record, signer, bundle_path=bundle, card_run_card_hash=card_hash)
    for reason in result.reasons:
        typer.echo(f"{record.name}: {reason}")
    if not result.ok:
        raise typer.Exit(1)
    rec = result.record
    assert rec is not None and signer is not None
    outcome = "GDS verified (re-run reproduced the card)" if rec.passed else "attested, but the re-run failed"
    typer.echo(f"{record.name}: attested by {signer.repository} {signer.workflow} run {rec.run_id} attempt "
               f"{rec.run_attempt} at {rec.workflow_commit[:12] if rec.workflow_commit else '?'}: {outcome}")


@app.command("validate-scores")
@guarded
def validate_scores_cmd(
    paths: Annotated[list[Path], typer.Argument(help="Scores-only cards (*.scores.json) or folders of them.")],
    dev_card: Annotated[Optional[Path], typer.Option("--dev-card", help="The development run card the scores-only "
                                                     "cards re-ran: each must name it and match its method, model, "
                                                     "condition and fingerprint (default: the card each names, "
                                                     "found under --submissions).")] = None,
    submissions: Annotated[Path, typer.Option(help="Folder of development run cards (searched recursively): each "
                                                   "scores-only card must match the card it names there, as "
                                                   "`mtboard build` requires.")] = Path("submissions"),
    secret_corpus: Annotated[Optional[Path], typer.Option("--secret-corpus", help="The secret corpus file: cards "
                                                          "of it must list exactly its entries of their segment, "
                                                          "with its references' statistics (default: "
                                                          "$MTBOARD_SECRET_SEGMENT when set).")] = None,
) -> None:
    """Check scores-only cards (issue 17, issue 32): no text field, strict schema, seal, statistics internally
    consistent, no date in the future, every aggregate recomputed exactly from the per-segment statistics; that each
    is a re-run of the development card it names (the card under --submissions, or --dev-card), with the check the
    official board build runs (issue 34 item 6); with the secret corpus, that each lists exactly its entries. One line
    per problem; exit 1 on any."""
    from mtboard.cli.environment import secret_segment_path
    from mtboard.score.scores_card import SCORES_SUFFIX
    from mtboard.validate.scores import SecretCorpus, dev_link_problems, development_cards, validate_scores_card
    from mtboard.verify.rerun import load_sealed_card

    files: list[Path] = []
    for p in paths:
        files.extend(sorted(p.rglob(f"*{SCORES_SUFFIX}")) if p.is_dir() else [p])
    if not files:
        fail(f"no scores-only card (*{SCORES_SUFFIX}) in {', '.join(str(p) for p in paths)}")
    dev = load_sealed_card(dev_card) if dev_card is not None else None
    secret_path = secret_corpus if secret_corpus is not None else secret_segment_path("MTBOARD_SECRET_SEGMENT")
    secret = SecretCorpus.load(secret_path, "the secret corpus" if secret_corpus is not None
                               else "$MTBOARD_SECRET_SEGMENT") if secret_path is not None else None
    devs = development_cards(submissions) if dev is None else {}
    bad = 0
    for f in files:
        rep = validate_scores_card(f, secret=secret)
        if rep.card is not None:
            # --dev-card: the card every file must name; else the card each names, among the submissions
            named = {rep.card.card_run_card_hash: dev} if dev is not None else devs
            rep.problems.extend(dev_link_problems(rep.card, named, f.name))
            if rep.card.card_run_card_hash not in named:
                typer.echo(f"note {f}: its development card {rep.card.card_run_card_hash[:12]}… is not under "
                           f"{submissions}: method, model and fingerprint not compared (the board shows no "
                           "development row for it)")
        for line in rep.problems:
            typer.echo(f"FAIL {f}: {line}")
        bad += not rep.ok
    if bad:
        fail(f"scores-only validation failed: {bad} of {len(files)} file(s)")
    typer.echo(f"scores-only validation passed: {len(files)} file(s)")


@app.command("held-out-check")
@guarded
def held_out_check_cmd(
    card: Annotated[Path, typer.Argument(help="The development card about to be evaluated on held_out.")],
    official: Annotated[Path, typer.Option("--official", help="The committed official/ folder.")] = Path("official"),
) -> None:
    """Exit 1 when a held-out scores-only card for this card's method fingerprint already exists (spec §2.3:
    held_out is used sparingly — at most one evaluation per fingerprint; issue 17)."""
    from mtboard.verify.secret import held_out_used
    from mtboard.verify.rerun import load_sealed_card

    c = load_sealed_card(card)
    used = held_out_used(official, c.fingerprint.hash)
    if used:
        fail(f"held_out already used for fingerprint {c.fingerprint.hash[:12]}…: {used[0]}")
    typer.echo(f"held_out not used yet for fingerprint {c.fingerprint.hash[:12]}…")

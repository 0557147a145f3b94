#!/usr/bin/env python3
"""Mutation-test one module of the numbers on the board with its covering tests (issue 23; docs/TESTING.md).

    .venv/bin/python scripts/mutation.py MODULE [--max-children N] [--survivors | --report-only]
    .venv/bin/python scripts/mutation.py --list

MODULE is a key of :data:`MODULES` (checks, scoring, metrics, stats, validate, names, judging, ledger, ledger-load,
ledger-diff, ledger-document, ledger-methods, ledger-tables, scores, official). The run uses mutmut 3 (dev extra,
``[tool.mutmut]`` in pyproject.toml): it copies ``mtboard/`` and the tests into ``mutants/`` (git-ignored), mutates
only the module's files and runs, for each mutant, the covering tests that exercise the mutated function. This script
narrows mutmut's configuration to the module (``only_mutate`` and the pytest test selection) before mutmut reads
pyproject.toml, so one ``[tool.mutmut]`` table serves every module.

It then prints killed / timeout / survived / no tests / equivalent and the **score = (killed + timeout) ÷
non-equivalent**, where non-equivalent = every mutant mutmut generated for the module minus those listed as equivalent
in docs/TESTING.md (the lines ``- `mtboard.x.y__mutmut_N`: reason`` under "Equivalent mutants"). A timeout counts as
detected: the mutant made the covering tests run past mutmut's limit (e.g. an endless loop). "No tests" counts as
not detected. Exit status 0 when the score is ≥ :data:`TARGET`, 1 below it, 2 on a usage error.

Each issue that adds a number to the board adds its module (and its covering tests) to :data:`MODULES`.
Run it alone and niced on a shared machine: ``nice -n 15 .venv/bin/python scripts/mutation.py stats``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTING_DOC = ROOT / "docs" / "TESTING.md"
TARGET = 0.90
"""Acceptance threshold of issue 23: (killed + timeout) ÷ non-equivalent per module."""

MODULES: dict[str, tuple[list[str], list[str]]] = {
    # module: (files mutated, relative to the repository root; covering test files, and pytest options such as -k)
    # the reasoning formats (issue 33) are part of the policy; their end-to-end run (mtboard run + validate) is left out
    "checks": (["mtboard/score/checks.py", "mtboard/core/reasoning.py"],
               ["tests/test_checks_policy.py", "tests/test_scoring_spec.py", "tests/test_text_patterns.py",
                "tests/test_pinned_checks.py", "tests/test_reasoning_formats.py", "-k", "not end_to_end"]),
    # the per-corpus score_run tests (every committed corpus, 1–3 s each) are left out: every score_run mutant would
    # run them all; test_pinned_scoring.py pins the same functions on a hand-made corpus
    "scoring": (["mtboard/score/scoring.py", "mtboard/score/measure.py"],
                ["tests/test_scoring_run.py", "tests/test_scoring_spec.py", "tests/test_scoring_normalisation.py",
                 "tests/test_pinned_scoring.py", "-k", "not every_committed_corpus and not fluent_but_wrong"]),
    # test_semantic.py's two whole-corpus properties (every covered corpus scored twice; 60 pairs one call each: 40 s
    # together) are left out for time: every mutant of the embedding path would run them; the pinned similarities,
    # the disk cache and the encoder identity tests pin the same code
    "metrics": (["mtboard/score/metrics/composite.py", "mtboard/score/metrics/bootstrap.py", "mtboard/score/metrics/semantic.py"],
                ["tests/test_scoring_spec.py", "tests/test_scoring_metrics.py", "tests/test_pinned_scoring.py",
                 "tests/test_pinned_stats.py", "tests/test_semantic.py", "tests/test_pinned_semantic.py",
                 "-k", "not wrong_sentence_scores_clearly_lower_than_the_true and not batch_independence_on_a"]),
    "stats": (["mtboard/score/stats.py"],
              ["tests/test_stats_items.py", "tests/test_site_stats.py", "tests/test_pinned_stats.py"]),
    # the tamper and binding suites (hundreds of validations each) and the tests on the committed 355-entry card
    # (~1 s a validation) are left out for time: every mutant of the validator would run them all; the same
    # full-segment cases run on a full-segment card over a trimmed real corpus (the test_mini_* tests, ~0.1 s a
    # validation) and the other tests go through each check on small cards
    "validate": (["mtboard/validate/recompute.py", "mtboard/validate/binding.py"],
                 ["tests/test_pinned_validate.py",
                  "-k", "not full_card_covers and not priced_full_card and not priced_card_totals "
                        "and not test_results_out_of_corpus_order and not test_missing_repeated "
                        "and not test_a_result_bound and not test_limit_below_one_is"]),
    # issue 32 item 5: the display-name rule and its look-alike rules; test_names.py also covers the site's escaping
    # helpers (mtboard.core.fmt)
    "names": (["mtboard/core/names.py", "mtboard/core/lookalike.py"],
              ["tests/test_names.py", "tests/test_names_rule.py"]),
    # issue 32 item 4: each verdict re-derived from the judge's stored answer. The whole-card tamper suite
    # (test_validate_judged_tamper.py, ~50 s, hundreds of validations) is left out for time; test_judge_answers.py
    # pins every branch on hand-made verdicts and summaries
    "judging": (["mtboard/validate/judge_answers.py", "mtboard/judges/parsers.py"], ["tests/test_judge_answers.py"]),
    # issue 31: the one place a row's standing is decided. test_ledger.py (the whole ledger on the committed cards,
    # ~2 min) is left out for time; test_standing.py pins every decision on hand-made cards
    "ledger": (["mtboard/ledger/standing.py"], ["tests/test_standing.py"]),
    # issue 32: the scores-only validator and the rules it applies (bounds.py: statistics, references, dates); the
    # test that builds a site with the impossible cards is left out for time (test_official_units.py and the
    # official module's run cover the same path without a build)
    "scores": (["mtboard/validate/scores.py", "mtboard/validate/bounds.py"],
               ["tests/test_scores_rules.py", "tests/test_scores_card.py", "tests/test_bounds.py",
                "-k", "not reaches_the_official_page and not negative_zero"]),
    # issue 32: the official boards' data; the three tests that build a whole site (15–20 s each) are left out for
    # time: test_official_units.py calls every function of the module directly
    "official": (["mtboard/verify/official.py"],
                 ["tests/test_official_units.py", "tests/test_official.py", "tests/test_official_validity.py",
                  "-k", "not on_the_site and not borrow_another and not gold_and_gap"]),
    # issue 31/32: reading the ledger's inputs (the record check, the lineage rule, the card walk). test_ledger.py is
    # left out for time as above; test_ledger_load.py pins each function on the committed EN→CA card and small trees
    "ledger-load": (["mtboard/ledger/load.py"], ["tests/test_ledger_load.py"]),
    # issue 31 items 4 and 6: the changes between two ledgers and the dated snapshots, on hand-made rows and ledgers
    "ledger-diff": (["mtboard/ledger/diff.py", "mtboard/ledger/history.py"], ["tests/test_ledger_diff.py"]),
    # issue 31: the published document and the build feeding it, on the committed EN→CA folder alone (built once)
    "ledger-document": (["mtboard/ledger/document.py", "mtboard/ledger/build.py"], ["tests/test_ledger_document.py"]),
    # issue 12/31: one row per method, ordered, ranked and clustered, on hand-made views
    "ledger-methods": (["mtboard/ledger/methods.py"], ["tests/test_ledger_methods.py"]),
    # issue 12/15/31: views, cells, clusters, field statistics and chart points, on two small boards of committed
    # cards (EN→CA; the EN→ES --limit 20 cards) built inside each test, and hand-made judgements and struggle sets
    "ledger-tables": (["mtboard/ledger/tables.py"], ["tests/test_ledger_tables.py"]),
}

_EQUIVALENT = re.compile(r"^\s*[-*]\s+`(mtboard\.[\w.]+__mutmut_\d+)`")


def equivalents(doc: Path = TESTING_DOC) -> set[str]:
    """Mutant names listed as equivalent in docs/TESTING.md (``- `name`: reason`` lines); empty if no such file."""
    if not doc.is_file():
        return set()
    return {m.group(1) for line in doc.read_text("utf-8").splitlines() if (m := _EQUIVALENT.match(line))}


def _configure(files: list[str], tests: list[str]) -> None:
    """Load mutmut's configuration from pyproject.toml and narrow it to one module before mutmut first reads it."""
    from mutmut import configuration

    configuration.reset_config()
    cfg = configuration.config()
    cfg.only_mutate = list(files)
    cfg.pytest_add_cli_args_test_selection = [t for t in tests if not t.startswith("tests/")
                                              or (ROOT / t.split("::")[0]).is_file()]


def all_mutants(files: list[str]) -> list[str]:
    """Every mutant name mutmut generates for the files (without running anything), sorted."""
    from mutmut.mutation.file_mutation import mutate_file_contents

    out = []
    for f in files:
        mutated = mutate_file_contents(f, (ROOT / f).read_text("utf-8"))
        code = next(v for v in vars(mutated).values() if isinstance(v, str) and "__mutmut_" in v)
        module = f[:-3].replace("/", ".")
        out += [f"{module}.{m}" for m in re.findall(r"^def (x\w+__mutmut_\d+)\(", code, re.M)]
        out += [f"{module}.{m}" for m in re.findall(r"^    def (xǁ\w+ǁ\w+__mutmut_\d+)\(", code, re.M)]
    return sorted(out)


def results(files: list[str]) -> dict[str, str]:
    """Status per mutant name for the module's files, read from mutmut's ``mutants/<file>.meta``."""
    from mutmut.stats import status_by_exit_code

    out: dict[str, str] = {}
    for f in files:
        meta = ROOT / "mutants" / (f + ".meta")
        data = json.loads(meta.read_text("utf-8"))
        for name, code in data["exit_code_by_key"].items():
            out[name] = status_by_exit_code[code]
    return out


def score(statuses: dict[str, str], equivalent: set[str]) -> dict[str, float | int]:
    """Counts per status and the score (killed + timeout) ÷ (all − equivalent); 1.0 when nothing is left.

    Mutants a stopped run did not reach ("not checked") are counted apart and left out of the score, which is then
    the score of a partial run (printed as such)."""
    counts = {"killed": 0, "timeout": 0, "survived": 0, "no tests": 0, "not checked": 0, "other": 0, "equivalent": 0}
    for name, status in statuses.items():
        if name in equivalent:
            counts["equivalent"] += 1
        elif status in counts:
            counts[status] += 1
        else:
            counts["other"] += 1
    non_equivalent = len(statuses) - counts["equivalent"] - counts["not checked"]  # a partial run: the checked ones
    detected = counts["killed"] + counts["timeout"]
    return {**counts, "total": len(statuses), "non_equivalent": non_equivalent,
            "score": detected / non_equivalent if non_equivalent else 1.0}


RESULTS = ROOT / "mutants-results"
"""Last statuses per module (``<module>.json``: the module files' SHA-256 and every mutant's status), kept across
runs (git-ignored) so that ``--survivors`` can re-test only what survived."""


def _sources_sha256(files: list[str]) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(f.encode() + b"\0" + (ROOT / f).read_bytes() + b"\0")
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("module", nargs="?", choices=sorted(MODULES))
    ap.add_argument("--max-children", type=int, default=1, help="parallel mutant workers (default 1: shared CPUs)")
    ap.add_argument("--survivors", action="store_true",
                    help="re-test only the mutants that survived the last run of this module (after adding tests; "
                         "refused when the module's code changed since, as mutant numbers would not match)")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="test a seeded random sample of N mutants only (an estimate when a full run does not fit; "
                         "the rest are reported as not checked)")
    ap.add_argument("--report-only", action="store_true", help="print the score of the last run without running")
    ap.add_argument("--list", action="store_true", help="print the module table and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, (files, tests) in MODULES.items():
            print(f"{name}: {' '.join(files)}\n    tests: {' '.join(tests)}")
        return 0
    if not args.module:
        ap.print_usage(sys.stderr)
        return 2
    files, tests = MODULES[args.module]
    saved = RESULTS / f"{args.module}.json"
    sha = _sources_sha256(files)
    previous: dict[str, str] = {}
    if args.survivors or args.report_only:
        if not saved.is_file():
            print(f"mutation.py: no earlier run of {args.module} (run it without --survivors first)", file=sys.stderr)
            return 2
        data = json.loads(saved.read_text("utf-8"))
        if data["sources_sha256"] != sha and args.survivors:
            print(f"mutation.py: {', '.join(files)} changed since the last run: run the whole module again",
                  file=sys.stderr)
            return 2
        previous = data["statuses"]
    start = time.monotonic()
    if args.report_only:
        statuses = previous
    else:
        import os

        os.chdir(ROOT)
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
        _configure(files, tests)
        from mutmut.__main__ import cli

        names = sorted(n for n, st in previous.items() if st not in ("killed", "timeout")) if args.survivors else []
        if args.sample:
            import random

            names = sorted(random.Random(23).sample(all_mutants(files), args.sample))
        if args.survivors and not names:
            statuses = previous
        else:
            try:
                cli(["run", "--max-children", str(args.max_children), *names], standalone_mode=False)
            except SystemExit as e:  # mutmut exits 1 when the clean run fails
                if e.code:
                    print(f"mutation.py: mutmut stopped with status {e.code}", file=sys.stderr)
                    return 2
            fresh = results(files)
            statuses = {**previous, **{n: fresh[n] for n in names}} if args.survivors else fresh
            if args.sample:
                statuses = {n: (st if n in names else "not checked") for n, st in fresh.items()}
        RESULTS.mkdir(exist_ok=True)
        saved.write_text(json.dumps({"sources_sha256": sha, "statuses": statuses}, indent=1, sort_keys=True) + "\n",
                         "utf-8")
    equivalent = equivalents()
    s = score(statuses, equivalent)
    survivors = sorted(n for n, st in statuses.items()
                       if st not in ("killed", "timeout", "not checked") and n not in equivalent)
    for n in survivors:
        print(f"  {statuses[n]:9} {n}")
    print(f"{args.module}: {s['total']} mutants, killed {s['killed']}, timeout {s['timeout']}, survived "
          f"{s['survived']}, no tests {s['no tests']}, other {s['other']}, equivalent {s['equivalent']}"
          + (f", NOT CHECKED {s['not checked']} (partial run)" if s["not checked"] else "") + "; "
          f"score {s['killed'] + s['timeout']}/{s['non_equivalent']} = {s['score']:.1%}"
          + ("" if args.report_only else f" ({time.monotonic() - start:.0f} s)"))
    return 0 if s["score"] >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

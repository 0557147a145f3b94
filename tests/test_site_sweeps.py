"""Issue 16: the sweep page's numbers, recomputed independently from the committed cards of the real sweep
(sweeps/gemma-270m-temperature.yaml): the grid's chrF++ per cell, the heatmap means and the factor effects with
their paired-bootstrap intervals."""

from __future__ import annotations

import statistics
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mtboard.core.documents import load_card
from mtboard.score.metrics import bootstrap
from mtboard.site import render
from mtboard.site import sweeps as sp
from mtboard.ledger.load import LoadedCard
from mtboard.score.stats import view_seed
from mtboard.sweeps.spec import load_sweep

from test_workflows_sweep_job import committed_sweep_cards

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "sweeps" / "gemma-270m-temperature.yaml"


def _loaded(path: Path) -> LoadedCard:
    card = load_card(path)
    return LoadedCard(path=path.relative_to(ROOT / "submissions").as_posix(), card=card,
                      page_id=card.run_card_hash[:16], verification=None)


@pytest.fixture(scope="module")
def everything():
    """Every committed card (the sweep's and the others: the older Gemma few-shot-completion t=0.7 card of 20
    entries × 3 runs must not be placed in the sweep's cell)."""
    paths = [p for p in sorted((ROOT / "submissions").glob("*/*.json")) if not p.name.endswith(".verification.json")]
    return [_loaded(p) for p in paths]


@pytest.mark.slow  # 4.5 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_each_cell_shows_its_own_card(everything):
    sweep = load_sweep(SWEEP)
    placed = sp.place(sweep, everything)
    want = committed_sweep_cards()
    assert {p.cell.id: ROOT / "submissions" / p.lc.path for p in placed} == want
    for p in placed:
        assert p.chrf == p.lc.card.scores.chrf_plus_plus
        lo, hi = p.ci
        assert lo <= p.chrf <= hi or p.chrf == 0.0


def test_grid_heatmap_and_effects_recomputed(everything):
    sweep = load_sweep(SWEEP)
    placed = sp.place(sweep, everything)
    by = {(p.cell.dataset_id, p.cell.label, p.cell.prompt, p.cell.temperature): p for p in placed}
    by_id = {p.cell.id: p for p in placed}
    grids = sp.grids(placed, "sweeps/gemma-270m-temperature.md")
    es = grids[0]
    assert es["columns"] == ["zero-shot-completion · t=0", "zero-shot-completion · t=0.7",
                             "few-shot-completion · t=0", "few-shot-completion · t=0.7", "default", "baseline"]
    gemma_row = es["rows"][0]["cells"]
    assert [c["chrf"] for c in gemma_row[:4]] == [
        f"{by[('mtb-en-es-dev', 'gemma-3-270m', pr, t)].chrf:.1f}"
        for pr in ("zero-shot-completion", "few-shot-completion") for t in (0.0, 0.7)]
    best = max(range(4), key=lambda i: by[("mtb-en-es-dev", "gemma-3-270m",
                                          ("zero-shot-completion", "few-shot-completion")[i // 2],
                                          (0.0, 0.7)[i % 2])].chrf)
    assert [c["best"] for c in gemma_row[:4]] == [i == best for i in range(4)]

    heats = sp.heatmaps(placed)
    heat = next(h for h in heats if (h["rows_factor"], h["cols_factor"]) == ("prompt", "temperature"))
    assert heat["method"] == "gemma-3-270m"  # only Gemma has prompts and temperatures: Apertium and echo are not in it
    assert heat["columns"] == ["t=0", "t=0.7"]
    assert [r["level"] for r in heat["rows"]] == ["zero-shot-completion", "few-shot-completion"]
    means = {(pr, t): statistics.fmean(by[(ds, "gemma-3-270m", pr, t)].chrf for ds in ("mtb-en-es-dev", "mtb-en-fr-dev"))
             for pr in ("zero-shot-completion", "few-shot-completion") for t in (0.0, 0.7)}
    lo, hi = min(means.values()), max(means.values())
    assert (heat["lo"], heat["hi"]) == (pytest.approx(lo), pytest.approx(hi))
    few_07 = means[("few-shot-completion", 0.7)]
    row = next(r for r in heat["rows"] if r["level"] == "few-shot-completion")
    # the shade is the value's fifth of this table's range (not an absolute scale on which all of Gemma is "low")
    assert {k: row["cells"][1][k] for k in ("value", "shade", "n")} == {
        "value": f"{few_07:.1f}", "shade": f"mtb-s{min(4, int(5 * (few_07 - lo) / (hi - lo)))}", "n": 2}
    shades = {c["shade"] for r in heat["rows"] for c in r["cells"]}
    assert "mtb-s0" in shades and "mtb-s4" in shades  # the table's lowest and highest cells are the scale's ends
    assert heat["legend"][0][0] == "mtb-s0" and heat["legend"][-1][0] == "mtb-s4"
    assert heat["legend"][0][1] == f"{lo:.1f}–{lo + (hi - lo) / 5:.1f}"
    # no heatmap cell ever averages two methods (the reviewer's "—" row averaged Apertium with echo)
    labels = {p.cell.id: p.cell.label for p in placed}
    for h in heats:
        for r in h["rows"]:
            assert r["level"] != "—"
            for c in r["cells"]:
                assert len({labels[i] for i in c["cells"]}) <= 1, (h["rows_factor"], h["cols_factor"], r["level"])
                if c["n"]:
                    assert c["value"] == f"{statistics.fmean(by_id[i].chrf for i in c['cells']):.1f}"
    method_ds = next(h for h in heats if (h["rows_factor"], h["cols_factor"]) == ("method", "dataset"))
    assert [r["level"] for r in method_ds["rows"]] == ["gemma-3-270m", "apertium", "echo"]
    echo_es = method_ds["rows"][2]["cells"][0]
    assert echo_es["n"] == 1 and echo_es["value"] == f"{by[('mtb-en-es-dev', 'echo', None, None)].chrf:.1f}"

    effects = {(e.factor, e.level): e for e in sp.factor_effects(placed, resamples=400)}
    assert set(effects) == {("prompt", "few-shot-completion"), ("temperature", 0.7)}
    t = effects[("temperature", 0.7)]
    pairs = [(by[(ds, "gemma-3-270m", pr, 0.0)], by[(ds, "gemma-3-270m", pr, 0.7)])
             for ds in ("mtb-en-es-dev", "mtb-en-fr-dev") for pr in ("zero-shot-completion", "few-shot-completion")]
    assert t.pairs == 4 and t.baseline == 0.0
    assert t.diff == pytest.approx(statistics.fmean(b.chrf - a.chrf for a, b in pairs))
    # the interval, recomputed: per dataset one draw of its 20 segments shared by every card (paired), the effect's
    # resamples the mean over the 4 pairs of the differences
    boots = {}
    for ds in ("mtb-en-es-dev", "mtb-en-fr-dev"):
        counts = bootstrap.resample_counts(20, 400, view_seed(ds, "sweep"))
        for p in placed:
            if p.cell.dataset_id == ds and p.lc is not None:
                boots[p.cell.id] = bootstrap.chrf_resamples([r.stats.chrf for r in p.lc.card.results], counts)
    lo, hi = bootstrap.percentile_interval(np.mean([boots[b.cell.id] - boots[a.cell.id] for a, b in pairs], axis=0))
    assert (t.lo, t.hi) == (pytest.approx(lo), pytest.approx(hi))
    assert t.lo <= t.diff <= t.hi
    assert effects[("prompt", "few-shot-completion")].pairs == 4


def test_pages_nav_and_a_broken_sweep_file_is_a_warning(tmp_path, everything):
    boards = [SimpleNamespace(cards=everything)]
    pages, nav, warnings = sp.build_pages(ROOT / "sweeps", ROOT, boards, resamples=200)
    assert list(pages) == ["sweeps/dialogue-history.md", "sweeps/gemma-270m-temperature.md"] and warnings == []
    assert nav == [{"Sweep dialogue-history": "sweeps/dialogue-history.md"},
                   {"Sweep gemma-270m-temperature": "sweeps/gemma-270m-temperature.md"}]
    text = pages["sweeps/gemma-270m-temperature.md"]
    assert "11 of 11 cells have a card" in text and text.count('<a href="../runs/') == 11
    # the grid says its runs are 20-entry subsets of the 355-entry development segments (sweep file: limit 20)
    assert "Every cell covers the first 20 of the 355 development entries of its dataset (`limit: 20`)" in text
    assert text.count("20 of 355 entries") == 2  # each grid's caption (EN-ES, EN-FR)
    assert "relative to this table's range" in text and 'class="mtb-legend"' in text
    assert "mtb-h" not in text  # the absolute red-to-blue scale is gone
    # the sweeps sit in the Leaderboards section, before the hard items; no sweeps, no entry
    section = next(item["Leaderboards"] for item in render.nav([], None, nav) if "Leaderboards" in item)
    assert section == [{"All language pairs": "leaderboards/index.md"}, {"Sweeps": nav}, {"Hard items": "hard/index.md"}]
    section = next(item["Leaderboards"] for item in render.nav([], None, []) if "Leaderboards" in item)
    assert section == [{"All language pairs": "leaderboards/index.md"}, {"Hard items": "hard/index.md"}]
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "bad.yaml").write_text("name: bad\n", encoding="utf-8")
    pages, nav, warnings = sp.build_pages(tmp_path / "sweeps", tmp_path, boards)
    assert pages == {} and nav == [] and len(warnings) == 1 and warnings[0].startswith("sweep bad.yaml not shown")


def test_committed_dialogue_history_page_reads_its_cards(everything):
    """Issue 40 item 2: the committed sweeps/dialogue-history.yaml — every cell finds its card; the history table,
    the latency gate at 6 lines and the arms table show the cards' own numbers; Apertium's history cells are listed
    as not applicable."""
    from mtboard.core.runtime import Runtime, use_runtime
    from mtboard.score.scoring import percentile_nearest_rank

    with use_runtime(Runtime(prompts_dir=ROOT / "prompts")):  # the branch's context-completion template
        sweep = load_sweep(ROOT / "sweeps" / "dialogue-history.yaml")
    placed = sp.place(sweep, everything)
    assert len(placed) == 13 and all(p.lc is not None for p in placed)
    assert [(n.label, n.history, n.arm) for n in sweep.not_applicable] == [
        ("apertium", 3, "scene-context"), ("apertium", 6, "scene-context"), ("apertium", 12, "scene-context"),
        ("apertium", 24, "scene-context"), ("apertium", None, "scene-context")]
    hist = sp.history_sections(placed, sweep.not_applicable, "sweeps/dialogue-history.md")[0]
    gemma = hist["series"][0]
    assert [q["history"] for q in gemma["points"]] == [0, 3, 6, 12, 24]
    six = next(p.lc.card for p in placed if p.cell.label == "gemma-3-270m" and p.cell.history == 6)
    lat = [r.latency_s for r in six.results]
    assert len(lat) == 12 and six.method.history == 6 and six.method.arm == "scene-context"
    assert gemma["gate"]["median"] == six.scores.median_latency_seconds == statistics.median(lat)
    assert gemma["gate"]["p90"] == percentile_nearest_rank(lat, 90) == sorted(lat)[10]  # ⌈0.9 × 12⌉ = 11th
    assert gemma["gate"]["verdict"] == sp.gate_verdict(statistics.median(lat), sorted(lat)[10])
    for q, p in zip(gemma["points"], [p for p in placed if p.cell.experiment == "history"][:5]):
        assert (q["chrf"], q["composite"], q["n"]) == (p.lc.card.scores.chrf_plus_plus, p.lc.card.scores.composite,
                                                       12)
    arms = sp.arms_tables(placed, sweep.not_applicable, "sweeps/dialogue-history.md")[0]
    assert arms["arms"] == ["lines", "scene-bare", "scene-context", "scene-full"]
    apertium = arms["rows"][1]
    assert apertium["cells"][2]["state"] == "not-applicable"
    full = next(p.lc.card for p in placed if p.cell.label == "apertium" and p.cell.arm == "scene-full")
    assert (apertium["cells"][3]["chrf"], apertium["cells"][3]["n"]) == (full.scores.chrf_plus_plus, 12)
    assert "\n" in full.results[0].source  # a whole scene, joined
    # the lines actually sent (issue 40 review): a 24-line cell sends a scene's last line only the earlier lines its
    # scene has: 14, 15, 18, 19, 24, 15, 15, 15, 24, 20, 18, 24 → mean 221 / 12 = 18.41…
    assert [q["sent"] for q in gemma["points"]] == [0.0, 3.0, 6.0, 12.0, 221 / 12]


def test_a_joined_scene_run_gets_its_own_corpus_file():
    """Issue 40 review: a scene-full run's items are scenes joined under their last line's id, so its run page must
    show the joined texts its card holds, not the corpus entry of that id (a single line)."""
    import gzip
    import json

    from mtboard.site import rundata

    full = next(lc for lc in (_loaded(p) for p in sorted((ROOT / "submissions" / "mtb-en-es-dialogue").glob("*.json")))
                if lc.card.method.arm == "scene-full" and lc.card.model_id.startswith("gemma"))
    plain = next(lc for lc in (_loaded(p) for p in sorted((ROOT / "submissions" / "mtb-en-es-dialogue").glob("*.json")))
                 if lc.card.method.arm == "lines")
    assert rundata.corpus_url(full) == rundata.corpus_url(plain)[:-len(".json.gz")] + "--scene-full.json.gz"
    board = SimpleNamespace(cards=[full, plain])
    files = rundata.corpus_files(SimpleNamespace(corpora=[]), [board])
    joined = json.loads(gzip.decompress(files[rundata.corpus_url(full)]))
    rows = {r[0]: r for r in joined["entries"]}
    first = full.card.results[0]
    assert "\n" in first.source and rows[first.entry_id][1:3] == [first.source, first.expected]
    assert len(rows) == 12 and all("\n" in r[1] for r in rows.values())

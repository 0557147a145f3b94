"""The official board's pages (issue 17 item 3; spec §6.4): one page per secret gold corpus (language pair), ranked
like the development boards, each row linking to its development run and showing the dev–gold gap; an index page
that also lists rejected scores-only cards. The development boards' method cells link back
(:attr:`mtboard.site.boards.MethodRow.gold`).

Data: :mod:`mtboard.verify.official`. Pages are Markdown with HTML tables (rendered escaped, like the other board pages).
"""

from __future__ import annotations

import json
from typing import Any

from mtboard.verify.official import UNATTESTED_GOLD_LABEL, OfficialBoard, OfficialInputs, gold_rows_by_card
from mtboard.core import fmt
from mtboard.ledger.load import Inputs, LoadedCard
from mtboard.site.render import rel_link
from mtboard.ledger.tables import Leaderboard, method_name, run_page
from mtboard.ledger.tries import official_tries
from mtboard.site.boards import tries_html

INDEX = "official/index.md"
BANNER = ('<div class="admonition info mtb-official-banner"><p class="admonition-title">Official · secret '
          "gold_standard segment · run by the maintainers' verify workflow</p><p>These scores come from entries no "
          "method developer has seen; only numbers are published. The development boards are informal.</p></div>")
UNRANKED_NOTE = ("Not ranked: re-runs whose scores carry no verifying attestation of the verify workflow. Anyone can "
                 "write and seal a scores-only card; only an attested one is an official score.")
GAP_NOTE = ("Dev–gold gap = development composite − gold composite. A large positive gap means the method does much "
            "better on the public development segment than on the secret gold standard: the overfitting signal.")


def _e(value: object) -> str:
    return fmt.html_text(value)


def _num(x: float | None, digits: int) -> str:
    return fmt.DASH if x is None else f"{x:.{digits}f}"


def gap_text(dev: float | None, gold: float) -> str:
    """``+0.051`` (dev − gold, 3 decimals) or a dash without a development composite."""
    return fmt.DASH if dev is None else f"{dev - gold:+.3f}"


def _dev_cards(inputs: Inputs) -> dict[str, LoadedCard]:
    return {lc.card.run_card_hash: lc for lc in inputs.cards if lc.card.run_card_hash}


def board_title(b: OfficialBoard) -> str:
    return f"Official board: {b.language_pair} (secret gold standard)"


def _table(b: OfficialBoard, dev: dict[str, LoadedCard], here: str, tries: dict | None = None) -> str:
    head = ("<table class=\"mtb-plain mtb-official\" id=\"official-board\" tabindex=\"0\"><caption>Methods ranked by "
            "composite on the secret gold standard</caption><thead><tr>"
            + "".join(f'<th scope="col">{_e(h)}</th>' for h in (
                "Rank", "Method", "Composite (95% CI)", "chrF++", "BLEU", "TER", "Errors", "Development composite",
                "Dev–gold gap", "Verification")) + "</tr></thead><tbody>")
    rows = []
    for r in b.rows:
        if not r.attested and r is b.unranked[0]:
            rows.append(f'<tr class="mtb-unranked-head"><th scope="rowgroup" colspan="10">{_e(UNRANKED_NOTE)}</th>'
                        "</tr>")
        sc = r.card.scores
        lc = dev.get(r.card.card_run_card_hash)
        if lc is not None:
            method = f'<a href="{_e(rel_link(here, run_page(lc)))}">{fmt.name_html(method_name(lc.card))}</a>'
            dev_comp = lc.card.scores.composite
        else:
            method = f"{_e(r.card.method_spec)} · {_e(r.card.condition)} (development card not on the site)"
            dev_comp = None
        method += str(tries_html((tries or {}).get(r.card.card_fingerprint), lambda t: t))
        ci = (f" [{r.composite_ci[0]:.3f}, {r.composite_ci[1]:.3f}]" if r.composite_ci else "")
        rows.append(
            f'<tr id="{_e(r.anchor)}"><td>{_e(r.rank)}</td><th scope="row">{method}</th>'
            f"<td>{_e(f'{sc.composite:.3f}' + ci)}</td><td>{_e(_num(sc.chrf_plus_plus, 1))}</td>"
            f"<td>{_e(_num(sc.bleu, 1))}</td><td>{_e(_num(sc.ter, 1))}</td><td>{_e(sc.errors)}</td>"
            f"<td>{_e(_num(dev_comp, 3))}</td><td>{_e(gap_text(dev_comp, sc.composite))}</td>"
            f"<td>{_e(r.label)}</td></tr>")
    return head + "".join(rows) + "</tbody></table>"


def render_official_pages(inputs: Inputs, official: OfficialInputs, boards: list[OfficialBoard]) -> dict[str, str]:
    """Docs-relative path → Markdown for the official pages (:data:`INDEX` and one per board)."""
    dev = _dev_cards(inputs)
    pages: dict[str, str] = {}
    lines = ["---", "title: Official boards", "---", "", "# Official boards", "", BANNER, "",
             "Official leaderboard scores come only from the secret gold_standard segments (spec §6.4): the "
             "maintainers' verify workflow re-runs a submitted method on them and publishes only scores — per-segment "
             "statistics, mechanical outcome counts and salted hashes of the outputs, never a source, reference or "
             "translation. A row says **GDS verified** when the workflow's attestation of its scores verifies; only "
             f"those rows are ranked. Any other row is listed below them as **{UNATTESTED_GOLD_LABEL}**.", ""]
    if boards:
        for b in boards:
            lines.append(f"- [{fmt.safe_title(b.language_pair)}]({b.page[len('official/'):]}) — "
                         f"{len(b.ranked)} ranked method(s) on {b.n_entries} secret entries"
                         + (f", {len(b.unranked)} unattested (not ranked)" if b.unranked else ""))
    else:
        lines.append("No gold-standard evaluation has been published yet. To get a method here: submit its "
                     "development card, then ask the maintainers for a gold-standard run (the method must be "
                     "re-runnable by the harness: a registered backend or an installable plugin, spec §9.5).")
    if official.rejected:
        lines += ["", "## Rejected scores-only cards", ""]
        for path, problems in official.rejected:
            lines.append(f"- `{path}`: {fmt.html_text(problems[0])}" + (f" (+{len(problems) - 1} more)"
                                                                      if len(problems) > 1 else ""))
    pages[INDEX] = "\n".join(lines) + "\n"
    for b in boards:
        here = b.page
        text = "\n".join([
            "---", f"title: {json.dumps(fmt.safe_title(board_title(b), 120), ensure_ascii=False)}", "hide:",
            "  - navigation", "  - toc", "---", "",
            f"# {fmt.html_text(board_title(b))}", "", BANNER, "",
            f"{len(b.ranked)} attested method(s) scored on {b.n_entries} secret gold_standard entries (corpus "
            f"`{b.dataset_id}` {b.dataset_version}, SHA-256 `{b.sha256[:12]}…`), ranked by composite; ranks are "
            "clusters from a paired bootstrap of the composite, as on the development boards"
            + (f" (smallest detectable difference {b.mdd:.3f})" if b.mdd is not None else "") + "."
            + (f" {len(b.unranked)} unattested re-run(s) are listed below them, not ranked." if b.unranked else "")
            + f' <a class="mtb-contribute" href="{rel_link(here, "contribute.md")}">Add your method</a> (its '
            "development card first).",
            "", GAP_NOTE, "", _table(b, dev, here, official_tries(b.rows, dev, inputs.models)), ""])
        pages[here] = text
    return pages


def nav_items(boards: list[OfficialBoard]) -> list[dict[str, str]]:
    return [{"Overview": INDEX}] + [{fmt.safe_title(b.language_pair): b.page} for b in boards]


def attach_gold_links(boards: list[Leaderboard], official_boards: list[OfficialBoard]) -> None:
    """Set :attr:`MethodRow.gold` on every development method one of whose cards has an *attested* gold row.

    An unattested row (anyone can write and seal a scores-only card) puts no gold number or gap on the development
    board: it is listed only on the official page, not ranked (validator review; spec §9.4)."""
    by_card = gold_rows_by_card(official_boards, attested_only=True)
    for lb in boards:
        for view in lb.views:
            for m in view.methods:
                match = next((r for r in [m.rep, *m.members] if r.lc.card.run_card_hash in by_card), None)
                if match is None:
                    continue
                ob, row = by_card[match.lc.card.run_card_hash]
                dev = match.lc.card.scores.composite  # the gap of the card that was re-run, not the row's representative
                m.gold = (f"{ob.page[:-3]}.html#{row.anchor}",
                          f"gold {row.card.scores.composite:.3f} · gap {gap_text(dev, row.card.scores.composite)}")


def official_json(boards: list[OfficialBoard]) -> dict[str, Any]:
    """Machine-readable official boards (``data/official.json``)."""
    return {"schema": "mtboard.official/1", "boards": [
        {"pair": b.language_pair, "dataset": {"id": b.dataset_id, "version": b.dataset_version, "sha256": b.sha256},
         "n_entries": b.n_entries, "page": b.page[:-3] + ".html",
         "rows": [{"rank": r.rank, "card_run_card_hash": r.card.card_run_card_hash, "method_spec": r.card.method_spec,
                   "condition": r.card.condition, "composite": r.card.scores.composite,
                   "composite_ci95": list(r.composite_ci) if r.composite_ci else None,
                   "chrf_plus_plus": r.card.scores.chrf_plus_plus, "bleu": r.card.scores.bleu,
                   "scores_card_hash": r.card.scores_card_hash, "attested": r.attested,
                   "ranked": r.attested} for r in b.rows]}
        for b in boards]}


__all__ = ["BANNER", "GAP_NOTE", "INDEX", "UNRANKED_NOTE",
           "attach_gold_links", "board_title", "gap_text", "nav_items", "official_json",
           "render_official_pages"]

"""The run pages' data files (issue 35 item 1): corpus texts published once per dataset, each run's per-entry
results as one small compressed file, fetched by the run page and the compare page when opened.

* ``data/corpora/<dataset id>-v<version>-<sha12>.json.gz`` (:func:`corpus_data`): ``{"schema": "mtboard.corpus/1",
  "dataset", "version", "sha256", "source_language", "target_language", "entries": [[id, source, reference, domain,
  segment, difficulty, provenance], …]}`` (corpus order; only entries a published card holds; domain, difficulty,
  provenance null when the corpus has none).
* ``data/runs/<page id>.json.gz`` (:func:`run_data`): ``{"schema": "mtboard.rundata/1", "id": page id, "corpus": its
  corpus file (relative to the site root), "rows": [[id, output, outcome, sentence chrF++ (2 decimals, failures 0),
  failed, Δ vs field median (1 decimal, null without a field), flags, raw output (null unless it differs), error or
  null, sentence chrF++ as the page shows it (1 decimal, rounded once from the exact value), semantic verdict
  tokens (:func:`mtboard.site.runpage.semantic_tags`: "meaning-mismatch", "hallucination"; issue 36), and only for
  an entry asked again (``--format-attempts``; issue 39) its failed answers ``[[format rule, raw answer], …]``], …]
  (card order),
  "groups": {"failures": ids, "losses": ids, "dom:<domain>": ids, "diagnostic": ids}, "review": the review sample
  (:func:`review_data`; absent for reference baselines), "details": {"identity": [[label, value], …], "method": …}
  (the run page's detail tables, :func:`mtboard.site.runpage.details_data`)}``. The first five columns are what
  ``runs/<id>.segments.json`` held before (the compare page reads them).

Both are gzip (RFC 1952) with the header's mtime 0 and no file name, so two builds of the same cards write the same
bytes; browsers decompress them with ``DecompressionStream("gzip")`` (``site/assets/rundata.js``), where Parquet would
need a JavaScript decoder. Measured on the 34 committed cards (pyarrow 26): the run files take 8.3 KB per run as gzip
JSON against 14.3 KB as Parquet (zstd; 13.7 KB gzip, 18.4 KB snappy), the six corpus files 178 KB against 219 KB
(zstd) — small files, where Parquet's footer and page headers outweigh its columnar encoding. Every file is written
through :func:`mtboard.core.names.json_visible` (contributor text: refused characters as ``\\uXXXX``) before
compression.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any
from urllib.parse import quote

from mtboard.core import names
from mtboard.core.errors import ConfigError
from mtboard.core.schema import EntryResult
from mtboard.ledger.load import CorpusInfo, Inputs, LoadedCard
from mtboard.ledger.summary import summary
from mtboard.ledger.tables import Leaderboard, failed, method_name, sentence_chrf
from mtboard.review.community import REVIEWS_DIR
from mtboard.site import runpage

RUN_SCHEMA = "mtboard.rundata/1"
CORPUS_SCHEMA = "mtboard.corpus/1"
RUN_URL = "data/runs/{id}.json.gz"
"""A run's data file, relative to the site root (``pairs.json``'s ``seg``, the run page's link)."""
CORPUS_URL = "data/corpora/{name}.json.gz"
GZIP_LEVEL = 9
_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


def gzip_text(text: str) -> bytes:
    """``text`` as UTF-8, gzip level :data:`GZIP_LEVEL`, mtime 0 and no file name: the same text gives the same bytes
    in every build (every gzip file the site publishes: run and corpus data, ledger snapshots)."""
    return gzip.compress(text.encode("utf-8"), compresslevel=GZIP_LEVEL, mtime=0)


def gz(value: Any) -> bytes:
    """Compact, key-sorted JSON (refused characters escaped, :func:`mtboard.core.names.json_visible`), gzipped by
    :func:`gzip_text`: the same value gives the same bytes in every build."""
    return gzip_text(names.json_visible(json.dumps(value, ensure_ascii=False, sort_keys=True,
                                                   separators=(",", ":")) + "\n"))


def corpus_name(card_dataset: Any) -> str:
    """The corpus file's name for a card's dataset reference (``id``, ``version``, ``sha256``):
    :func:`corpus_file_name`."""
    return corpus_file_name(card_dataset.id, card_dataset.version, card_dataset.sha256)


def corpus_file_name(dataset_id: str, version: str, sha256: str) -> str:
    """``<dataset id>-v<version>-<first 12 hex of the corpus SHA-256>``: the id matches ``DATASET_ID_RE``; a
    version's characters other than letters, digits, ``.`` and ``-`` become ``_`` so the name is one safe path
    component. The hash makes two texts published under one id and version two files (as they are two boards);
    :func:`corpus_files` refuses the remaining collisions (two references whose names still coincide)."""
    return f"{dataset_id}-v{re.sub(r'[^A-Za-z0-9.-]', '_', version)}-{sha256[:12]}"


def corpus_file(dataset_id: str, version: str, sha256: str) -> str:
    """A dataset text's corpus file relative to the site root: ``data/corpora/<corpus_file_name>.json.gz``."""
    return CORPUS_URL.format(name=corpus_file_name(dataset_id, version, sha256))


JOINED_VIEW = "scene-full"
"""The corpus view whose items are not the corpus's entries (:mod:`mtboard.inputs.corpora.arms`: each scene's lines
joined under its last line's id): its runs get their own corpus file, from the texts their cards hold."""


def _view_suffix(lc: LoadedCard) -> str:
    """``"--scene-full"`` for a run of the joined-scene view (:data:`JOINED_VIEW`), else ``""``."""
    return f"--{JOINED_VIEW}" if getattr(getattr(lc.card, "method", None), "arm", None) == JOINED_VIEW else ""


def corpus_url(lc: LoadedCard) -> str:
    """The run's corpus file relative to the site root (a joined-scene run's own file: :data:`JOINED_VIEW`)."""
    return CORPUS_URL.format(name=corpus_name(lc.card.dataset) + _view_suffix(lc))


def run_url(lc: LoadedCard) -> str:
    """The run's data file relative to the site root."""
    return RUN_URL.format(id=lc.page_id)


def corpus_data(name: str, info: CorpusInfo | None, cards: list[LoadedCard]) -> dict[str, Any]:
    """The corpus file's value: only the entries some published card of the dataset holds (``cards``), so the site
    publishes no text its run cards did not already carry (a corpus's secret or unused entries never); their texts
    from the loaded corpus ``info`` when the site has it, else from the cards' own copies (first card first)."""
    held = {i for lc in cards for i in summary(lc).ids}
    if info is not None:
        ds = info.corpus.dataset
        rows = [[e.id, e.source, e.reference, e.domain.value if e.domain else None, e.segment.value, e.difficulty,
                 e.provenance] for e in info.corpus.entries if e.id in held]
        return {"schema": CORPUS_SCHEMA, "dataset": ds.id, "version": ds.version, "sha256": info.sha256,
                "source_language": ds.source_language, "target_language": ds.target_language, "entries": rows}
    seen: dict[int, list[Any]] = {}
    for lc in cards:
        for r in lc.card.results:
            seen.setdefault(r.entry_id, [r.entry_id, r.source, r.expected, r.domain.value if r.domain else None,
                                         getattr(r.segment, "value", r.segment), r.difficulty, r.provenance])
    ref = cards[0].card.dataset
    return {"schema": CORPUS_SCHEMA, "dataset": ref.id, "version": ref.version, "sha256": ref.sha256,
            "source_language": ref.source_language, "target_language": ref.target_language,
            "entries": [seen[k] for k in sorted(seen)]}


def _row(r: EntryResult, field_median: float | None) -> list[Any]:
    s = sentence_chrf(r)
    raw = r.raw_predicted if r.raw_predicted is not None and r.raw_predicted != r.predicted else None
    return [r.entry_id, r.predicted, r.checks.outcome.value, round(s, 2), failed(r),
            None if field_median is None else round(s - field_median, 1),
            sorted({f.rule for f in r.checks.flags}), raw, r.error, round(s, 1), runpage.semantic_tags(r)] + (
        [[[a.rule, a.raw_predicted] for a in r.failed_attempts]] if r.failed_attempts else [])


def review_data(lc: LoadedCard, sheet: dict[str, Any], run_page: str) -> dict[str, Any]:
    """The run's review sample for the one review page (``review.html?run=<page id>``, issue 35; spec §7.3), from
    ``sheet`` (:func:`mtboard.review.community.sheet`) without its texts (the page joins the run's rows and the corpus
    file by entry id): ``heading`` (the method name with refused characters marked, :func:`mtboard.core.names.mark`,
    and the language pair), ``run_page`` (site-root relative), the record fields a download carries (``card``,
    ``hash``, ``seed``, ``size``), ``drawn``, ``note`` (or null), ``sl``/``tl``, ``file`` (the download's name),
    ``record`` (its path in the repository), ``ids`` (the entries to rate, in sample order), ``ratings`` (the scale)."""
    card = lc.card
    return {"heading": f"Review run {lc.page_id[:8]} \u00b7 {names.mark(method_name(card))} \u00b7 "
                       f"{names.mark(sheet['language_pair'])}",
            "run_page": run_page, "card": sheet["card"], "hash": sheet["run_card_hash"], "seed": sheet["sample_seed"],
            "size": sheet["sample_size"], "drawn": sheet["entries_drawn"], "note": sheet["note"],
            "sl": card.dataset.source_language, "tl": sheet["target_language"],
            "file": lc.path.rsplit("/", 1)[-1][:-5] + ".yaml", "record": f"{REVIEWS_DIR}/{lc.path[:-5]}.yaml",
            "ids": [e["entry_id"] for e in sheet["entries"]], "ratings": sheet["ratings"]}


def run_data(lc: LoadedCard, lb: Leaderboard, groups: dict[str, list[int]],
             review: dict[str, Any] | None = None, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run data file's value (module docstring): one row per entry of the card, in card order, the entry
    groups of the run page (``groups``: from :func:`mtboard.site.runpage.context`), for a run people may
    review ``review`` (:func:`review_data`; the key is absent otherwise) and the run page's detail tables
    ``details`` (:func:`mtboard.site.runpage.details_data`; absent when None)."""
    med = lb.field_entry_median
    dev = {r.entry_id for r in lc.card.results if r.segment == "development"}
    out = {"schema": RUN_SCHEMA, "id": lc.page_id, "corpus": corpus_url(lc), "groups": groups,
           "rows": [_row(r, med.get(r.entry_id) if r.entry_id in dev else None) for r in lc.card.results]}
    if review is not None:
        out["review"] = review
    if details is not None:
        out["details"] = details
    return out


def corpus_files(inputs: Inputs, boards: list[Leaderboard]) -> dict[str, bytes]:
    """``{data/corpora/<name>.json.gz: bytes}``: one per dataset text (id, version, SHA-256) a published run was
    scored on.

    Raises: ConfigError when two different texts would share one file name (:func:`corpus_file_name`), which would
    show one run's entries against another text's sources."""
    by_text: dict[tuple[str, str, str, str], list[LoadedCard]] = {}
    for lb in boards:
        for lc in lb.cards:
            ds = lc.card.dataset
            by_text.setdefault((ds.id, ds.version, ds.sha256, _view_suffix(lc)), []).append(lc)
    loaded = {(c.corpus.dataset.id, c.corpus.dataset.version, c.sha256): c for c in inputs.corpora}
    out: dict[str, bytes] = {}
    owner: dict[str, tuple[str, str, str, str]] = {}
    for text, cards in sorted(by_text.items()):
        name = corpus_file_name(*text[:3]) + text[3]
        if name in owner:
            raise ConfigError(f"two dataset texts share the corpus data file {name}: {owner[name][:3]} and "
                              f"{text[:3]}", field="dataset", fix="give one of the datasets another id or version")
        owner[name] = text
        # a joined-scene run's texts are its view's (the scene's lines joined), held by its cards: never the corpus's
        info = None if text[3] else loaded.get(text[:3])
        out[CORPUS_URL.format(name=name)] = gz(corpus_data(name, info, cards))
    return out


def card_link(lc: LoadedCard, repository: str | None) -> str | None:
    """The card's file in the repository as a GitHub blob URL on the default branch
    (``https://github.com/<owner/name>/blob/HEAD/submissions/<path>``) when ``repository`` (the build's
    ``attestation_repository``: ``--attestation-repository``, ``$MTBOARD_ATTESTATION_REPOSITORY``, else
    ``$GITHUB_REPOSITORY``) is an owner/name; None otherwise (the page shows the path as text)."""
    if not repository or not _REPO.fullmatch(repository):
        return None
    return f"https://github.com/{repository}/blob/HEAD/submissions/{quote(lc.path)}"


__all__ = ["RUN_SCHEMA", "CORPUS_SCHEMA", "RUN_URL", "gz", "gzip_text", "corpus_name", "corpus_file_name", "corpus_file", "corpus_url", "run_url", "corpus_data",
           "review_data", "run_data", "corpus_files", "card_link"]

"""Corpus tooling (spec §2, issue 2 items 4–5): importers, quality filters, sampling, labels, merging.

Modules: :mod:`~mtboard.corpora.text` (script, word and sentence helpers), :mod:`~mtboard.corpora.filters` (the
documented quality filters), :mod:`~mtboard.corpora.labels` (difficulty, register, context, diagnostic rules),
:mod:`~mtboard.corpora.importers` (PO/MO, TMX, XLIFF, TSV, CSV, parallel text, aligned HTML, UDHR),
:mod:`~mtboard.corpora.audit` (what ``corpus check`` flags), :mod:`~mtboard.corpora.assemble` (sampling, entries, ids,
merge, summaries). Loading and writing corpus files is :mod:`mtboard.documents` (``load_corpus``, ``write_corpus``,
``corpus_bytes``).
"""

from mtboard.corpora.assemble import build_corpus, merge_corpora, rank_key, sample, summarize, to_entry
from mtboard.corpora.filters import FilterReport, Pair, check_pair, filter_pairs
from mtboard.corpora.importers import (ImportReport, align_html, align_udhr, read_catalog, read_csv, read_parallel,
                                       read_tmx, read_tsv, read_xliff)

__all__ = [
    "FilterReport", "ImportReport", "Pair", "align_html", "align_udhr", "build_corpus", "check_pair", "filter_pairs",
    "merge_corpora", "rank_key", "read_catalog", "read_csv", "read_parallel", "read_tmx", "read_tsv", "read_xliff",
    "sample", "summarize", "to_entry",
]

"""Corpus tooling (spec §2, issue 2 items 4–5): importers, quality filters, sampling, labels, merging.

Modules: :mod:`~mtboard.inputs.corpora.text` (script, word and sentence helpers), :mod:`~mtboard.inputs.corpora.filters` (the
documented quality filters), :mod:`~mtboard.inputs.corpora.labels` (difficulty, register, context, diagnostic rules),
:mod:`~mtboard.inputs.corpora.importers` (PO/MO, TMX, XLIFF, TSV, CSV, parallel text, aligned HTML, UDHR),
:mod:`~mtboard.inputs.corpora.audit` (what ``corpus check`` flags), :mod:`~mtboard.inputs.corpora.assemble` (sampling, entries, ids,
merge, summaries). Loading and writing corpus files is :mod:`mtboard.core.documents` (``load_corpus``, ``write_corpus``,
``corpus_bytes``).
"""

from mtboard.inputs.corpora.assemble import build_corpus, merge_corpora, rank_key, sample, summarize, to_entry
from mtboard.inputs.corpora.filters import FilterReport, Pair, check_pair, filter_pairs
from mtboard.inputs.corpora.importers import (ImportReport, align_html, align_udhr, read_catalog, read_csv, read_parallel,
                                       read_tmx, read_tsv, read_xliff)

__all__ = [
    "FilterReport", "ImportReport", "Pair", "align_html", "align_udhr", "build_corpus", "check_pair", "filter_pairs",
    "merge_corpora", "rank_key", "read_catalog", "read_csv", "read_parallel", "read_tmx", "read_tsv", "read_xliff",
    "sample", "summarize", "to_entry",
]

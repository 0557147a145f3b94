"""Corpus tooling (spec §2, issue 2 items 4–5): importers, quality filters, sampling, labels, merging.

Modules: :mod:`~mtboard.inputs.corpora.text` (script, word and sentence helpers), :mod:`~mtboard.inputs.corpora.filters` (the
documented quality filters), :mod:`~mtboard.inputs.corpora.labels` (difficulty, register, context, diagnostic rules),
:mod:`~mtboard.inputs.corpora.importers` (PO/MO, TMX, XLIFF, TSV, CSV, parallel text, aligned HTML, UDHR),
:mod:`~mtboard.inputs.corpora.audit` (what ``corpus check`` flags), :mod:`~mtboard.inputs.corpora.assemble` (sampling, entries, ids,
merge, summaries). Loading and writing corpus files is :mod:`mtboard.core.documents` (``load_corpus``, ``write_corpus``,
``corpus_bytes``).
"""

from typing import TYPE_CHECKING, Any

from mtboard.core.lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (__getattr__ below), named here for type checkers
    from mtboard.inputs.corpora.assemble import (build_corpus, merge_corpora, rank_key, sample, summarize,
                                                 to_entry)
    from mtboard.inputs.corpora.filters import FilterReport, Pair, check_pair, filter_pairs
    from mtboard.inputs.corpora.importers import (ImportReport, align_html, align_udhr, read_catalog, read_csv,
                                                  read_parallel, read_tmx, read_tsv, read_xliff)

_EXPORTS = {
    "assemble": ("build_corpus", "merge_corpora", "rank_key", "sample", "summarize", "to_entry"),
    "filters": ("FilterReport", "Pair", "check_pair", "filter_pairs"),
    "importers": ("ImportReport", "align_html", "align_udhr", "read_catalog", "read_csv", "read_parallel", "read_tmx",
                  "read_tsv", "read_xliff"),
}
"""The package's public names by the module that defines them, imported on first use (PEP 562 ``__getattr__``; issue
35 item 4, "modules a run does not use are not imported"): ``mtboard run`` reads only
:mod:`~mtboard.inputs.corpora.arms`, and importing the package used to load every importer, filter and label rule
(~15 ms of the run's start)."""
_LAZY = LazyNames(__name__, globals(), _EXPORTS)

__all__ = sorted(_LAZY.where)


def __getattr__(name: str) -> Any:
    """A public name of :data:`_EXPORTS`, imported from its module on first use and kept in the package
    (:class:`mtboard.core.lazy.LazyNames`); raises AttributeError for any other name."""
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(__all__)

"""Readers that turn the files translators ship into candidate :class:`~mtboard.inputs.corpora.filters.Pair` lists (issue 14
part 1), one module per format family:

* :mod:`~mtboard.inputs.corpora.importers.catalog` — gettext ``.po``/``.mo`` via polib: header charset honoured, plural
  forms and ``msgctxt`` kept as context, fuzzy and obsolete entries skipped and counted (:func:`read_catalog`);
* :mod:`~mtboard.inputs.corpora.importers.interchange` — TMX 1.4 (:func:`read_tmx`) and XLIFF 1.2 / 2.x
  (:func:`read_xliff`) via defusedxml, inline codes turned into text or placeholders and recorded;
* :mod:`~mtboard.inputs.corpora.importers.tabular` — TSV (:func:`read_tsv`), CSV per RFC 4180 via the csv module
  (:func:`read_csv`), plain parallel text, one segment per line (:func:`read_parallel`);
* :mod:`~mtboard.inputs.corpora.importers.html` — po4a-translated HTML aligned block by block and the UDHR (the corpus
  build's sources);
* :mod:`~mtboard.inputs.corpora.importers.glossary` — TBX and CSV glossaries (:func:`read_glossary`) and the terms each
  entry's source contains (:func:`attach_glossary`), for terminology adherence;
* :mod:`~mtboard.inputs.corpora.importers.report` — :class:`ImportReport`, what each reader kept and skipped, and why.

Readers only extract; the quality filters live in :mod:`mtboard.inputs.corpora.filters`. Every reader raises
:class:`~mtboard.core.errors.InputError` (one line naming the file, the unit or line, and the fix) on unreadable input.
Input files go through :func:`mtboard.core.safejson.read_bytes` (size cap, no symlinks). Line-based formats split records
on ``\\n`` / ``\\r\\n`` only (:func:`mtboard.core.text.split_records`).
"""

from mtboard.inputs.corpora.importers.catalog import plural_indices, read_catalog, split_context
from mtboard.inputs.corpora.importers.glossary import attach_glossary, read_glossary
from mtboard.inputs.corpora.importers.html import align_html, align_udhr, html_blocks
from mtboard.inputs.corpora.importers.interchange import read_tmx, read_xliff
from mtboard.inputs.corpora.importers.report import ImportReport
from mtboard.inputs.corpora.importers.tabular import read_csv, read_parallel, read_tsv

__all__ = ["ImportReport", "align_html", "align_udhr", "attach_glossary", "html_blocks", "plural_indices",
           "read_catalog", "read_csv", "read_glossary", "read_parallel", "read_tmx", "read_tsv", "read_xliff",
           "split_context"]

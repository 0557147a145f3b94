"""What a run is made from (issue 30, docs/ARCHITECTURE.md): corpora and their importers
(:mod:`~mtboard.inputs.corpora`), prompt templates (:mod:`~mtboard.inputs.prompts`), the price table
(:mod:`~mtboard.inputs.prices`), the frozen run identity (:mod:`~mtboard.inputs.runspec`) and the tools a method may
enable (:mod:`~mtboard.inputs.tools`). Imports only :mod:`mtboard.core`.
"""

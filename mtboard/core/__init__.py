"""The bottom layer (issue 30, docs/ARCHITECTURE.md): what every other stage stands on — errors
(:mod:`~mtboard.core.errors`), RFC 8785 canonical JSON and hashes (:mod:`~mtboard.core.canonical`), size-limited safe
loaders (:mod:`~mtboard.core.safejson`), reading and atomically writing documents (:mod:`~mtboard.core.documents`),
text normalisation and patterns (:mod:`~mtboard.core.text`), BCP 47 languages (:mod:`~mtboard.core.languages`) and
the schema of every document (:mod:`~mtboard.core.schema`). Imports nothing else of mtboard.
"""

"""The run orchestrator (issue 30, docs/ARCHITECTURE.md): the typed objects handed from step to step
(:mod:`~mtboard.run.plan`), the run loop (:mod:`~mtboard.run.runner`), the append-only work directory
(:mod:`~mtboard.run.workdir`), ``report.md`` (:mod:`~mtboard.run.report`), the early gate (:mod:`~mtboard.run.gate`),
the FST-gate tool pipeline (:mod:`~mtboard.run.fst_gate`), re-scoring stored outputs (:mod:`~mtboard.run.rescore`) and
placing a card under ``submissions/`` (:mod:`~mtboard.run.submit`).
"""

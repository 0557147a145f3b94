"""Sweeps: the benchmark matrix of spec §6 (models × temperatures × prompts × conditions, §6.2) with an upfront cost
estimate (spec §10: run cost = entries × calls per entry × cost per call; sweep cost = Σ run costs).

* :mod:`mtboard.sweeps.spec` — the sweep file (``sweeps/NAME.yaml``) loaded, and a cell's run settings;
* :mod:`mtboard.sweeps.cells` — the sweep's deterministic expansion into cells, each with a stable id derived from
  its planned fingerprint components;
* :mod:`mtboard.sweeps.estimate` — token and cost estimate per cell (the local model's tokenizer where available,
  else a chars-per-token range per script) and in total;
* :mod:`mtboard.sweeps.matrix` — the GitHub Actions matrix (chunked under GitHub's 256-job limit);
* :mod:`mtboard.sweeps.execute` — ``mtboard sweep run``: the cells run locally through the runner's library code;
* :mod:`mtboard.sweeps.collect` — the workflow's collect step: validate downloaded cards and file them.

Data flows one way: sweep file → cells → (estimate | matrix | runner) → cards; nothing here is imported by the
runner, the scorer or the validator.
"""

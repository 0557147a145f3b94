"""CLI command modules. Each registers its commands on :data:`mtboard.cliapp.app` (the CLI layer: the only code that
prints); :mod:`mtboard.cli` imports them all.

One module per area so that areas evolve independently: corpus, run, judge, validate (validate/submit/verify),
site (build), doctor.
"""

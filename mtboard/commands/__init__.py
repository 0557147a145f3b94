"""CLI command modules. Each registers its commands on ``mtboard.cli.app`` (the CLI layer: the only code that prints).

One module per area so that areas evolve independently: corpus, run, judge, validate (validate/submit/verify),
site (build), doctor.
"""

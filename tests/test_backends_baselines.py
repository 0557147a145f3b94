"""The echo and empty reference baselines: what they return and how they are labelled (never raw-llm)."""

from __future__ import annotations

import asyncio

import pytest

from mtboard.backends.base import TranslateRequest, load_backends, parse_method

REGISTRY = load_backends()
from mtboard.core.schema import MethodClass

SOURCES = ["Hello world.", "", "  two\n\nparagraphs  ", "日本語のテキスト"]


@pytest.mark.parametrize("name, expected", [
    ("echo", SOURCES),
    ("empty", ["", "", "", ""]),
])
def test_baseline_outputs(name, expected):
    spec = parse_method(name)  # the model part is optional: "echo" and "echo:" both parse
    assert spec.backend == name and spec.model == ""
    b = REGISTRY[name](spec)
    b.start()
    reqs = [TranslateRequest(entry_id=10 + i, source=s, run_index=2) for i, s in enumerate(SOURCES)]
    recs = asyncio.run(b.translate(reqs))
    b.close()
    assert [r.raw_predicted for r in recs] == expected
    assert [r.entry_id for r in recs] == [10, 11, 12, 13]
    assert all(r.run_index == 2 and r.error is None and r.usage.prompt_tokens == 0 for r in recs)


@pytest.mark.parametrize("name", ["echo", "empty"])
def test_baselines_are_labelled_baseline(name):
    cls = REGISTRY[name]
    assert cls.method_class == MethodClass.baseline != MethodClass.raw_llm
    assert cls.label.startswith("baseline: ")
    assert cls.prompt_format == "raw" and cls.model_optional
    d = cls(parse_method(f"{name}:")).describe()
    assert d.api_provider == "baseline" and d.model_slug == f"baseline/{name}"

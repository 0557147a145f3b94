"""A plugin card's class is enforced where the plugin is not installed (issue 18 review, item 4): CI validates a
submission without installing contributor code, so the plugin rules are decided from the card and the names of
mtboard's built-in backends alone (:func:`mtboard.validate.structure._check_plugin_class`) — nothing is imported.

The cards are committed ones, edited the way a cheater would and re-sealed with a re-derived fingerprint
(tests/validate_support.py). The backend ``upper`` is the test plugin's (tests/fixtures/mtboard-plugin-upper), which
is not installed in this venv.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import validate_support as vs
from mtboard import validate as V
from mtboard.backends.base import BUILTIN_BACKENDS, load_backends

ROOT = Path(__file__).resolve().parents[1]
ES = ROOT / "submissions" / "mtb-en-es-dev"
ECHO = ES / "baseline-echo__baseline__32e6f8fa41bf.json"
GEMMA = next(ES.glob("gemma-3-270m-q4-k-m.gguf__few-shot__*.json"))
PLUGIN = {"distribution": "mtboard-plugin-upper", "version": "0.1.0",
          "entry_point": "mtboard_plugin_upper:UpperBackend", "files_sha256": "1" * 64}


def _method_problems(data: dict) -> list[tuple[str | None, str]]:
    raw = json.dumps(vs.refingerprint_and_reseal(data)).encode("utf-8")
    ctx = V.Context(root=ROOT, corpora_dir=ROOT / "corpora", recompute=False)
    rep = V.validate_bytes(raw, "card.json", ctx)
    return [(p.field, p.message) for p in rep.problems if p.check == "method"]


def _edit(path: Path, **changes) -> dict:
    data = json.loads(path.read_bytes())
    for key, value in changes.items():
        if key in ("backend", "spec", "plugin"):
            data["method"][key] = value
        else:
            data[key] = value
    return data


def test_upper_is_not_installed_here():
    assert "upper" not in load_backends() and "upper" not in BUILTIN_BACKENDS
    assert _method_problems(json.loads(GEMMA.read_bytes())) == []


def test_plugin_card_with_another_class_is_refused_without_the_plugin():
    data = _edit(ECHO, backend="upper", spec="upper:", plugin=PLUGIN)  # class stays "baseline"
    assert _method_problems(data) == [
        ("$.method_class", "method_class baseline but the card records a plugin (method.plugin): a plugin method is "
                           "custom-plugin (spec §9.6)")]
    data["method_class"] = "custom-plugin"
    assert _method_problems(data) == []


def test_unknown_backend_without_plugin_record_is_refused():
    data = _edit(ECHO, backend="upper", spec="upper:", method_class="custom-plugin")
    assert _method_problems(data) == [
        ("$.method.plugin", "backend upper is not built into mtboard, so it comes from a plugin: the card must record "
                            "it in method.plugin (distribution, version, files hash)")]


@pytest.mark.parametrize("case", ["class", "record"])
def test_builtin_backend_cannot_claim_to_be_a_plugin(case):
    if case == "class":
        data = _edit(GEMMA, method_class="custom-plugin")
        want = [("$.method_class", "method_class custom-plugin but backend gguf is built into mtboard (spec §9.6: "
                                   "custom-plugin is for third-party plugins)")]
    else:
        data = _edit(GEMMA, method_class="custom-plugin", plugin=PLUGIN)
        want = [("$.method.plugin", "method.plugin must be absent: backend gguf is built into mtboard, not a plugin"),
                ("$.method_class", "method_class custom-plugin but backend gguf is built into mtboard (spec §9.6: "
                                   "custom-plugin is for third-party plugins)")]
    assert _method_problems(data) == want

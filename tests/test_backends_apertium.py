"""The Apertium backend against the real engine (/usr/bin/apertium with apertium-eng-spa and apertium-eng-cat).

Expected translations were checked by hand against what Apertium produces for these inputs: they are the engine's
real output, quirks included ("Hola Mundo." with a capital M; "es" where Spanish wants "está"; "*" before words it
does not know, "#" before words it cannot generate), not ideal translations.
"""

from __future__ import annotations

import asyncio
import glob
import os
import re
import socket
import time

import pytest

from mtboard.backends.apertium import ApertiumBackend, ApertiumOptions, engine_version, installed_modes, split_units
from mtboard.core.canonical import sha256_hex
from mtboard.backends.base import TranslateRequest, load_backends, parse_method
from mtboard.core.errors import ConfigError
from mtboard.core.schema import ErrorKind, MethodClass

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/bin/apertium"), reason="Apertium is not installed")


def translate(mode: str, sources: list[str], **kw):
    b = ApertiumBackend(parse_method(f"apertium:{mode}"), apy_url="", **kw)
    b.start()
    recs = asyncio.run(b.translate([TranslateRequest(entry_id=i, source=s) for i, s in enumerate(sources)]))
    b.close()
    return b, recs


def test_registered_with_pipeline_class_and_raw_source():
    cls = load_backends()["apertium"]
    assert cls is ApertiumBackend
    assert cls.method_class == MethodClass.pipeline
    assert cls.prompt_format == "raw"
    assert cls.strip_unknown_marks is True


def test_installed_modes_match_the_mode_files():
    # independent listing: the .mode files apertium -l reads
    files = sorted(os.path.basename(p)[: -len(".mode")] for p in glob.glob("/usr/share/apertium/modes/*.mode"))
    assert installed_modes() == files
    assert {"eng-spa", "spa-eng", "eng-cat", "cat-eng"} <= set(files)


def test_engine_version_names_engine_and_pair_packages():
    v = engine_version("eng-spa")
    assert re.fullmatch(r"apertium \S+; apertium-eng-spa \S+", v), v
    assert engine_version("cat-eng").split("; ")[1].startswith("apertium-eng-cat ")


def test_unknown_mode_lists_installed_modes():
    b = ApertiumBackend(parse_method("apertium:eng-xxx"), apy_url="")
    with pytest.raises(ConfigError) as err:
        b.start()
    msg = str(err.value)
    assert "eng-xxx" in msg and "installed modes:" in msg and "eng-spa" in msg and "\n" not in msg


def test_malformed_mode_name():
    with pytest.raises(ConfigError, match="not an Apertium mode name"):
        ApertiumBackend(parse_method("apertium:eng spa;rm"), apy_url="").start()


KNOWN = [  # (mode, source, Apertium's output) — checked by hand, see the module docstring
    ("eng-spa", "Hello world.", "Hola Mundo."),
    ("eng-spa", "The house is big.", "La casa es grande."),
    ("eng-spa", "The cat is on the table.", "El gato es en la mesa."),
    ("eng-spa", "I have a xyzzyq.", "Tengo un *xyzzyq."),
    ("spa-eng", "El gato está en la mesa.", "The cat is in the table."),
    ("eng-cat", "Good morning.", "Bon dia."),
    ("eng-cat", "The house is big.", "La casa és gran."),
]


@pytest.mark.parametrize("mode", sorted({m for m, _, _ in KNOWN}))
def test_known_outputs(mode):
    cases = [(s, out) for m, s, out in KNOWN if m == mode]
    b, recs = translate(mode, [s for s, _ in cases])
    assert [r.raw_predicted for r in recs] == [out for _, out in cases]
    assert all(r.error is None and r.model_id == mode for r in recs)
    assert b.process_calls == 1


def test_layout_whitespace_and_marks_are_kept():
    sources = ["  The cat\n\n  is on the table.\n", "", "   ", "Brackets [x] ^y$ \\ <b>", "A\r\n\r\nB"]
    _, recs = translate("eng-spa", sources)
    got = [r.raw_predicted for r in recs]
    assert got[0] == "  El gato\n\n  Es en la mesa.\n"  # each paragraph is a unit; leading/trailing space kept
    assert got[1] == "" and got[2] == "   "  # nothing to translate: returned as is, not sent
    assert got[3] == "#Grupo [*x] ^*y$ \\ <*b>"  # special characters survive; '#'/'*' marks kept for scoring
    assert got[4] == "Un\r\n\r\n*B"


def test_split_units_layout():
    units, layouts = split_units(["  A\n\nB\n", "x\n \t\ny", "   "])
    assert [(u.seg, u.text) for u in units] == [(0, "A"), (0, "B"), (1, "x"), (1, "y")]
    assert layouts[0].parts == ["  ", 0, "\n\n", 1, "\n"]
    assert layouts[1].parts == [2, "\n \t\n", 3]
    assert layouts[2].parts == ["   "]


def _pydoc_segments(n: int) -> list[str]:
    """Real English text with blank lines and code punctuation: the Python documentation's pydoc topics (stdlib)."""
    from pydoc_data.topics import topics

    paras = []
    for key in sorted(topics):
        for p in re.split(r"\n\s*\n", topics[key]):
            p = p.strip()
            if 20 < len(p) < 400:
                paras.append(p)
    segs, i, sizes = [], 0, [1, 1, 1, 2, 3]
    while len(segs) < n:
        k = sizes[len(segs) % len(sizes)]
        segs.append("\n\n".join(paras[i: i + k]))
        i += k
    return segs


SPECIAL = [  # hand-made edge cases mixed into the batch
    "",
    "   ",
    "\n\n\n",
    "Tabs\tand  double  spaces.",
    "Windows line ends.\r\n\r\nSecond paragraph.",
    "Markup <b>bold</b> [link](http://x) {curly} ^caret$ back\\slash @at *star #hash / slash.",
    "Unicode: café, naïve, 日本語, emoji 🙂.",
    "A lone surrogate \ud800 in JSON-decoded text.",
    "Many\n\n\n\nblank\n \n\t\nlines.",
    "Long paragraph. " + "The quick brown fox jumps over the lazy dog. " * 200,
]


def _numbered(n: int) -> list[str]:
    """Every non-special segment starts with 'N.' (N = its index) so alignment can be checked on the output."""
    segs = _pydoc_segments(n)
    for k, special in enumerate(SPECIAL):
        if 37 * k + 5 < n:
            segs[37 * k + 5] = special
    return [s if s in SPECIAL else f"{i}. {s}" for i, s in enumerate(segs)]


def _check_alignment(sources, recs):
    assert [r.entry_id for r in recs] == list(range(len(sources)))
    for i, (src, rec) in enumerate(zip(sources, recs)):
        assert rec.error is None, (i, rec.error)
        out = rec.raw_predicted
        if src in SPECIAL:
            continue
        assert out.split(None, 1)[0] == f"{i}.", (i, out[:80])
        # paragraph structure preserved: as many blank-line separated paragraphs as in the source
        assert len(re.split(r"\n\s*\n", out.strip())) == len(re.split(r"\n\s*\n", src.strip())), i


@pytest.mark.slow  # 2.6 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_batch_of_500_keeps_every_segment_in_place():
    sources = _numbered(500)
    t0 = time.perf_counter()
    b, recs = translate("eng-spa", sources)
    elapsed = time.perf_counter() - t0
    _check_alignment(sources, recs)
    assert b.process_calls == 1  # one process for all 500 (never one per sentence)
    got = {s: r.raw_predicted for s, r in zip(sources, recs)}
    assert got[""] == "" and got["   "] == "   " and got["\n\n\n"] == "\n\n\n"
    assert got["Windows line ends.\r\n\r\nSecond paragraph."] == "Fines de línea del Windows.\r\n\r\nSegundo párrafo."
    assert "🙂" in got["Unicode: café, naïve, 日本語, emoji 🙂."]
    assert got["Many\n\n\n\nblank\n \n\t\nlines."].count("\n") == 7
    assert "?" in got["A lone surrogate \ud800 in JSON-decoded text."]  # replaced, and the text after it survived
    assert got["A lone surrogate \ud800 in JSON-decoded text."].rstrip().endswith(".")
    # throughput sanity: ~400-600 segments/s on 2 idle cores; allow a loaded CI machine 10x slack
    assert 500 / elapsed > 40, f"{500 / elapsed:.0f} segments/s"


@pytest.mark.slow  # 3.4 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_smaller_batches_give_the_same_alignment():
    sources = _numbered(120)
    b, recs = translate("eng-spa", sources, max_units=25)
    _check_alignment(sources, recs)
    n_units = len(split_units(sources)[0])
    assert b.process_calls == -(-n_units // 25)


class _FaultyApertium(ApertiumBackend):
    """Fault injection at the process boundary: the real apertium runs, then its output is damaged."""

    async def _call(self, text, n_units):
        ok, out = await super()._call(text, n_units)
        if "POISON-MERGE" in text and n_units > 1:
            return ok, out.replace("\n\n", " ", 1)  # a lost separator: count mismatch
        if "POISON-CRASH" in text:
            return False, "apertium exited with 139: Segmentation fault"
        return ok, out


@pytest.mark.slow  # 3.1 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_count_mismatch_bisects_and_recovers():
    sources = [f"Sentence number {i} is here." for i in range(16)]
    sources[11] = "This one says POISON-MERGE."
    b = _FaultyApertium(parse_method("apertium:eng-spa"), apy_url="")
    b.start()
    recs = asyncio.run(b.translate([TranslateRequest(entry_id=i, source=s) for i, s in enumerate(sources)]))
    assert all(r.error is None for r in recs)
    for i, r in enumerate(recs):
        if i != 11:
            assert r.raw_predicted == f"Número de frase {i} es aquí.", (i, r.raw_predicted)
    assert recs[11].raw_predicted == "Esto uno dice VENENO-FUSIONAR."  # alone in its process, translated whole
    assert 1 < b.process_calls <= 1 + 2 * 4  # bisection, not one process per sentence


@pytest.mark.slow  # 1.8 CPU-s, 2 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_failing_unit_errors_only_its_entry():
    sources = ["One.", "Two POISON-CRASH.", "Three.", "Four."]
    b = _FaultyApertium(parse_method("apertium:eng-spa"), apy_url="")
    b.start()
    recs = asyncio.run(b.translate([TranslateRequest(entry_id=i, source=s) for i, s in enumerate(sources)]))
    assert [r.error_kind for r in recs] == [None, ErrorKind.backend, None, None]
    assert recs[1].raw_predicted is None and "Segmentation fault" in recs[1].error
    assert [recs[i].raw_predicted for i in (0, 2, 3)] == ["Uno.", "Tres.", "Cuatro."]


def test_apy_unreachable_is_a_transport_failure():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    b = ApertiumBackend(parse_method("apertium:eng-spa"), options=ApertiumOptions(timeout_s=5),
                        apy_url=f"http://127.0.0.1:{port}")
    b.start()
    recs = asyncio.run(b.translate([TranslateRequest(entry_id=7, source="Hello."),
                                    TranslateRequest(entry_id=8, source="  ")]))
    assert recs[0].error_kind == ErrorKind.transport and recs[0].raw_predicted is None
    assert str(port) not in recs[0].error  # no URL in records
    assert recs[1].error is None and recs[1].raw_predicted == "  "
    d = b.describe()
    assert d.api_provider == "apertium-apy" and d.endpoint_host_sha256 == sha256_hex("127.0.0.1")


def test_apy_url_from_environment(monkeypatch):
    monkeypatch.setenv("APERTIUM_APY_URL", "ftp://example")
    with pytest.raises(ConfigError, match="APERTIUM_APY_URL"):
        ApertiumBackend(parse_method("apertium:eng-spa")).start()
    monkeypatch.delenv("APERTIUM_APY_URL")
    b = ApertiumBackend(parse_method("apertium:eng-spa"))
    b.start()
    assert b.describe().api_provider == "apertium"

"""FST acceptance with Apertium's real lttoolbox analysers (Debian packages apertium-eng-spa / apertium-eng-cat).

Expected accept/reject values were checked by hand with `lt-proc -w` on this machine.
"""

from __future__ import annotations

import subprocess

import pytest

from mtboard.score import fst

SPA = fst.find_analyser("es")
CAT = fst.find_analyser("ca")
needs_spa = pytest.mark.skipif(SPA is None, reason="apertium-eng-spa not installed")
needs_cat = pytest.mark.skipif(CAT is None, reason="apertium-eng-cat not installed")


@needs_spa
def test_spanish_analyser_is_found_with_its_dpkg_version():
    assert SPA.path.endswith("/apertium-eng-spa/spa-eng.automorf.bin")
    dpkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "apertium-eng-spa"], capture_output=True,
                          text=True).stdout
    lt = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "lttoolbox"], capture_output=True, text=True).stdout
    assert SPA.version == f"apertium-eng-spa {dpkg}; spa-eng.automorf.bin; lttoolbox {lt}"


def test_no_analyser_for_languages_without_one():
    assert fst.find_analyser("ja") is None
    assert fst.find_analyser("zz") is None


@needs_spa
def test_lookup_accepts_known_words_and_rejects_unknown_ones():
    got = fst.lookup(SPA, ["casa", "perros", "xyzzyq", "niño", "pingüino", "casa", "networked"])
    assert got == {"casa": True, "perros": True, "xyzzyq": False, "niño": True, "pingüino": True,
                   "networked": False}
    assert fst.lookup(SPA, []) == {}


@needs_cat
def test_words_that_could_start_a_multiword_are_not_lost():
    # lt-proc -z dropped "aleshores" after "d'" at a null flush; one word per line keeps it
    got = fst.lookup(CAT, ["d'aleshores", "d'altra", "d'aquest", "aleshores"])
    assert got == {"d'aleshores": True, "d'altra": True, "d'aquest": True, "aleshores": True}


@pytest.mark.parametrize("hyp, source, words", [
    ("La casa es roja.", "The house is red.", ["casa", "es", "roja"]),        # capitalised "La" skipped
    ("Abra el file ahora", "Open the file", ["el", "ahora"]),                 # "file" copied from the source
    ("Instale Debian con apt", "Install Debian with apt", ["con"]),
    ("El NIÑO juega", "The child plays", ["juega"]),
    ("", "x", []),
])
def test_checkable_words(hyp, source, words):
    assert fst.checkable_words(hyp, source) == words


@needs_spa
def test_acceptance_counts_per_segment():
    got = fst.acceptance(SPA, ["La casa es roja.", "el xyzzyq", ""], ["The house", "the", "x"])
    assert got == [(3, 3), (1, 2), (0, 0)]


@needs_spa
def test_card_fst_version_helper_follows_the_fst_argument():
    from mtboard.score import scoring

    assert scoring.fst_version("es") == SPA.version
    assert scoring.fst_version("es", fst=False) is None
    assert scoring.fst_version("ja") is None

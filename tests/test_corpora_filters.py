"""Quality filters and text helpers (mtboard.inputs.corpora.filters, mtboard.inputs.corpora.text).

Every input below is hand-made for the test; expected values were worked out by hand from the documented rules.
"""

from __future__ import annotations

import pytest

from mtboard.inputs.corpora import text as T
from mtboard.inputs.corpora.filters import CAP_WORDS, FilterReport, Pair, cap_segments, check_pair, filter_pairs, \
    language_problem, ratio_bounds


# ---------------------------------------------------------------------------------------------------------------- text

@pytest.mark.parametrize("text,expected", [
    ("Hello, world 42 times", 4),
    ("", 0),
    ("これはペンです。", 3),  # 7 kana/kanji / 2.5 = 2.8 → 3
    ("Debian のリーダー", 1 + 2),  # 'Debian' + 5 CJK chars / 2.5 = 2
    ("e.g. don't stop", 3),
    ("Hello %(name)s, you have $unit.name| and 100%% left", 8),  # placeholders count as one word each
])
def test_word_count(text, expected):
    assert T.word_count(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Hi %(name)s, you have %d new", ["%(name)s", "%d"]),
    ("100%% done", []),
    ("Value {0} and {name}", ["{0}", "{name}"]),
    ("$unit.name| attacks $second_unit.name", ["$second_unit.name", "$unit.name|"]),
    ("%1$s of %2$s", ["%1$s", "%2$s"]),
    ("No placeholders here.", []),
])
def test_placeholders(text, expected):
    assert T.placeholders(text) == expected


@pytest.mark.parametrize("text,lang,expected", [
    ("One sentence only.", "en", ["One sentence only."]),
    ("First one. Second one! Third?", "en", ["First one.", "Second one!", "Third?"]),
    ("Use e.g. grep. Then stop.", "en", ["Use e.g. grep.", "Then stop."]),
    ("Ask Mr. Smith. He knows.", "en", ["Ask Mr. Smith.", "He knows."]),
    ("J. R. Tolkien wrote it. Yes.", "en", ["J. R. Tolkien wrote it.", "Yes."]),
    ('He said "Go." Then left.', "en", ['He said "Go."', "Then left."]),
    ("version 2.5 is out. ok then", "en", ["version 2.5 is out. ok then"]),  # no capital after the period
    ("¿Qué? ¡Nada! Bien.", "es", ["¿Qué?", "¡Nada!", "Bien."]),
    ("これはペンです。あれは何？「そうだ。」終わり", "ja", ["これはペンです。", "あれは何？", "「そうだ。」", "終わり"]),
])
def test_split_sentences(text, lang, expected):
    assert T.split_sentences(text, lang) == expected


def test_clean_debris_and_navigation():
    assert T.clean_debris("Installing¶ ") == "Installing"
    assert T.clean_debris("soft\u00adware\u200b [edit] rocks[3]") == "software rocks"
    assert T.clean_debris("line one\n   line two") == "line one line two"
    assert T.is_navigation(" Next ")
    assert T.is_navigation("« Anterior")
    assert T.is_navigation("目次")
    assert not T.is_navigation("Next steps for the installer")


def test_help_block():
    assert T.is_help_block("Usage: foo [OPTION]\nPrint foo.")
    assert T.is_help_block("Options:\n  -v, --verbose   be chatty\n  -q   quiet")
    assert not T.is_help_block("  -v, --verbose   be chatty")  # one line: a normal string
    assert not T.is_help_block("Cannot save.\n\nThe disk is full.")


def test_code_share():
    assert T.code_share("/etc/apt/sources.list") == 1.0
    assert T.code_share("Edit the file /etc/hosts now") == pytest.approx(1 / 5)
    assert T.code_share("") == 0.0


# ------------------------------------------------------------------------------------------------------------- filters

@pytest.mark.parametrize("source,reference,src,tgt,reason", [
    ("<b>Bold</b> text", "Texto en negrita", "en", "es", "markup"),
    ("Usage: x [opts]\n  -h  help", "Uso: x [opts]\n  -h  ayuda", "en", "es", "help_block"),
    ("%s: %s", "%s : %s", "en", "es", "too_few_letters"),
    ("A", "Un", "en", "es", "too_few_letters"),
    ("/usr/share/doc --verbose $HOME", "/usr/share/doc --verbose $HOME", "en", "es", "code"),
    ("Next", "Siguiente", "en", "es", "navigation"),
    ("Debian GNU/Linux system", "debian gnu/linux  system", "en", "es", "same_text"),
    ("Hello %(name)s", "Hola %(nombre)s", "en", "es", "placeholder_mismatch"),
    ("Delete %s files", "Borrar archivos", "en", "es", "placeholder_mismatch"),
    ("ファイルを保存する", "Save the file", "en", "ja", "source_language"),
    ("Save the file", "Save the file now please", "en", "ja", "target_language"),
    ("The file is saved in the folder of the user", "The file is saved in the carpeta of the usuario", "en", "es",
     "target_language"),
    ("The quick brown fox jumps", "El zorro marrón rápido salta sobre el perro perezoso que duerme todo el día "
     "en la casa grande", "en", "es", "length_ratio"),
    ("Save the file", "Guardar el archivo", "en", "es", None),
    ("Hello %(name)s", "Hola %(name)s", "en", "es", None),
    ("Save the file to disk now", "ファイルをディスクに保存します", "en", "ja", None),
    ("ファイルをディスクに保存します", "Save the file to disk now", "ja", "en", None),
    ("OK", "Aceptar", "en", "es", None),  # short: no ratio bound
])
def test_check_pair(source, reference, src, tgt, reason):
    assert check_pair(source, reference, src, tgt) == reason


def test_ratio_bounds():
    assert ratio_bounds("en", "es") == (0.5, 2.0)
    assert ratio_bounds("en", "ja") == (0.15, 1.2)
    low, high = ratio_bounds("ja", "en")
    assert low == pytest.approx(1 / 1.2) and high == pytest.approx(1 / 0.15)


@pytest.mark.parametrize("text,lang,problem", [
    ("これは日本語です", "ja", False),
    ("漢字漢字漢字", "ja", True),  # ≥ 4 CJK chars and no kana: likely Chinese
    ("Debian", "ja", True),
    ("This is English text of some length", "es", True),
    ("Este es un texto en español de cierta longitud", "es", False),
    ("The de la", "es", False),  # < 5 words: stopword check skipped
    ("Texto con 日本", "es", True),
    ("Any English text at all here", "en", False),
])
def test_language_problem(text, lang, problem):
    assert (language_problem(text, lang) is not None) == problem


def _words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


def test_cap_segments_split_when_counts_match():
    # hand-made 34-word paragraph of two sentences on each side
    src = f"The first sentence has {_words(14)} here. The second sentence has {_words(12)} there."
    ref = f"La primera frase tiene {_words(14, 'palabra')} aquí. La segunda frase tiene {_words(12, 'palabra')} allí."
    pairs, reason = cap_segments(Pair(src, ref, locator="block 7"), "en", "es")
    assert reason is None
    assert [p.locator for p in pairs] == ["block 7#s1", "block 7#s2"]
    assert pairs[0].source.startswith("The first") and pairs[0].reference.startswith("La primera")
    assert pairs[1].source.endswith("there.") and pairs[1].reference.endswith("allí.")


def test_cap_segments_keep_or_drop_when_counts_differ():
    src = f"One long sentence with {_words(36)} inside it. And a second one."  # 42 words, 2 sentences
    ref = f"Una frase larga con {_words(36, 'palabra')} dentro y una segunda."  # 1 sentence
    pairs, reason = cap_segments(Pair(src, ref), "en", "es")
    assert reason is None and len(pairs) == 1 and pairs[0].source == src  # ≤ 60 words: kept whole
    long_src = f"Start {_words(CAP_WORDS)} end. Another sentence."
    long_ref = f"Inicio {_words(CAP_WORDS, 'palabra')} fin y otra frase."
    assert cap_segments(Pair(long_src, long_ref), "en", "es") == ([], "too_long")


def test_cap_segments_short_untouched():
    p = Pair("Short one. Two.", "Corta. Dos.")
    assert cap_segments(p, "en", "es") == ([p], None)


def test_filter_pairs_cleans_dedups_and_reports():
    pairs = [
        Pair("Install the package¶", "Instale el paquete", order=1),
        Pair("install the package", "Instalar el paquete", order=2),  # duplicate source (case-insensitive)
        Pair("Next", "Siguiente", order=3),
        Pair("%s", "%s", order=4),
        Pair("Remove the\n package", "Elimine el\n paquete", order=5),
    ]
    rep = FilterReport()
    out = filter_pairs(pairs, "en", "es", rep)
    assert [(p.source, p.reference) for p in out] == [("Install the package", "Instale el paquete"),
                                                     ("Remove the package", "Elimine el paquete")]
    assert rep.read == 5 and rep.kept == 2
    assert rep.dropped == {"duplicate": 1, "navigation": 1, "too_few_letters": 1}
    assert rep.summary() == "read 5, kept 2, dropped: duplicate 1, navigation 1, too_few_letters 1"

"""Mechanical output-compliance policy: one table-driven test per rule.

All inputs here are hand-made (written for these tests, not evaluation data); expected outcomes were decided by hand
from docs/SCORING_SPEC.md §3.
"""

from __future__ import annotations

import pytest

from mtboard.score import checks
from mtboard.core.schema import ErrorKind, MechanicalDecision, Outcome


def run(raw, *, source="Hello world.", reference="Hola mundo.", error_kind=None, src="en", tgt="es", history=(),
        strip=False):
    return checks.apply_policy(source=source, raw_predicted=raw, reference=reference, error_kind=error_kind,
                               source_language=src, target_language=tgt, history=list(history),
                               strip_unknown_marks=strip)


def rules(decision: MechanicalDecision) -> set[str]:
    return {f.rule for f in decision.flags}


def test_policy_version_is_a_frozen_string():
    assert checks.POLICY_VERSION == "mech-1.2"


# ---------------------------------------------------------------------------------------------------------------
# no usable output


@pytest.mark.parametrize("raw, error_kind, rule, predicted", [
    (None, None, "no_output", ""),
    (None, ErrorKind.timeout, "error.timeout", ""),
    (None, "transport", "error.transport", ""),
    ("Hola mun", ErrorKind.token_cap, "error.token_cap", "Hola mun"),  # partial text: still no usable output
    ("", None, "empty", ""),
    ("   \n\t ", None, "empty", ""),
    ("</s>", None, "empty", ""),
    ("<think>The user wants Spanish. Hola mundo", None, "unclosed_think", "<think>The user wants Spanish. Hola mundo"),
    ("<THINK>hmm</THINK><think>again", None, "unclosed_think", "<think>again"),
    ("<think>only reasoning</think>", None, "empty", ""),
])
def test_no_usable_output(raw, error_kind, rule, predicted):
    p, d = run(raw, error_kind=error_kind)
    assert d.outcome == Outcome.no_usable_output
    assert d.rule == rule
    assert p == predicted


# ---------------------------------------------------------------------------------------------------------------
# source returned untranslated (echo)


@pytest.mark.parametrize("raw, source, reference, history, src, tgt, echo", [
    ("Hello world.", "Hello world.", "Hola mundo.", (), "en", "es", True),
    ("  Hello   world. ", "Hello world.", "Hola mundo.", (), "en", "es", True),          # whitespace
    ("Ｈｅｌｌｏ world.", "Hello world.", "Hola mundo.", (), "en", "es", True),            # NFKC (full width)
    ("Hello world.</s>", "Hello world.", "Hola mundo.", (), "en", "es", True),            # after EOS strip
    ("【カオリ】おはよう、ケンジ。", "【カオリ】おはよう、ケンジ。", "Kaori: Good morning.", (), "ja", "en", True),
    # tag restyled
    ("カオリ: おはよう、ケンジ。", "【カオリ】おはよう、ケンジ。", "Kaori: Good morning.", (), "ja", "en", True),
    ("おはよう、ケンジ。", "【カオリ】おはよう、ケンジ。", "Kaori: Good morning.", (), "ja", "en", True),  # tag dropped
    ("**Kaori:** Good", "Kaori: Good", "Kaori: Bien", (), "en", "es", True),
    ("שלום עולם", "שלום עולם", "Hello world", (), "he", "en", True),                      # RTL
    ("A: Hi.\nB: Hello world.", "Hello world.", "Hola mundo.", ("A: Hi.",), "en", "es", False),  # names differ (A≠B)
    ("Hi.\nHello world.", "Hello world.", "Hola mundo.", ("Hi.",), "en", "es", True),    # history + source echoed
    ("risc: %s", "risk: %s", "risc: %s", (), "en", "ca", False),                          # translated label
    ("risk: %s", "risk: %s", "risc: %s", (), "en", "ca", True),
    ("New password:", "New password:", "Contrasenya nova:", (), "en", "ca", True),       # a label is not a speaker tag
    ("Hello world!", "Hello world.", "Hola mundo.", (), "en", "es", False),             # one character differs
    ("Linux", "Linux", "Linux", (), "en", "es", False),                                  # reference equals source
    ("Hola mundo.", "Hello world.", "Hola mundo.", (), "en", "es", False),
])
def test_source_untranslated(raw, source, reference, history, src, tgt, echo):
    p, d = run(raw, source=source, reference=reference, history=history, src=src, tgt=tgt)
    if echo:
        assert (d.outcome, d.rule, d.untranslated_share) == (Outcome.source_untranslated, "echo", 1.0)
        assert p  # the echoed text stays visible in `predicted`
    else:
        assert d.outcome == Outcome.usable


@pytest.mark.parametrize("text, names, body", [
    # hand-made; expected values worked out by hand from the tag grammar in docs/SCORING_SPEC.md §3
    ("Hello  world.\n Bye", (), "Helloworld.Bye"),                  # no tag character: the fast path
    ("Ｋａｏｒｉ： Hi", ("Kaori",), "Hi"),                             # NFKC first, then the full-width colon tag
    ("【カオリ】おはよう", ("カオリ",), "おはよう"),
    ("[Kaori] Hi", ("Kaori",), "Hi"),
    ("**Kaori:** Hi", ("Kaori",), "Hi"),
    ("カオリ「おはよう」", ("カオリ",), "「おはよう」"),
    ("a * b = c", (), "a*b=c"),                                      # tag character present, no tag
])
def test_speaker_tag_split(text, names, body):
    assert checks._split_speaker_tags(text) == (names, body)


# ---------------------------------------------------------------------------------------------------------------
# post-processing: EOS, think, Apertium marks


@pytest.mark.parametrize("raw, predicted, eos, multiple", [
    ("Hola mundo.</s>", "Hola mundo.", 1, False),
    ("Hola mundo.<|im_end|>", "Hola mundo.", 1, False),
    ("Hola mundo.</s></s>", "Hola mundo.", 2, True),
    ("Hola</s> mundo.<|eot_id|>", "Hola mundo.", 2, True),
    ("<end_of_turn>Hola mundo.", "Hola mundo.", 1, False),
    ("Hola mundo.", "Hola mundo.", 0, False),
])
def test_eos_tokens(raw, predicted, eos, multiple):
    p, d = run(raw)
    assert p == predicted
    assert d.eos_tokens == eos
    assert ("eos.multiple" in rules(d)) is multiple
    if multiple:
        assert [f.count for f in d.flags if f.rule == "eos.multiple"] == [eos]


def test_eos_token_that_is_markup_in_the_source_is_kept():
    p, d = run("<s>Precio</s> 5 €", source="<s>Price</s> 5 €", reference="<s>Precio</s> 5 €")
    assert p == "<s>Precio</s> 5 €" and d.eos_tokens == 0 and d.outcome == Outcome.usable


@pytest.mark.parametrize("raw, predicted", [
    ("<think>Spanish please.</think>\nHola mundo.", "Hola mundo."),
    ("<think>a</think>Hola <think>b</think>mundo.", "Hola mundo."),
    ("The user wants Spanish.</think>Hola mundo.", "Hola mundo."),   # the template opened <think> in the prompt
])
def test_closed_think_is_stripped(raw, predicted):
    p, d = run(raw)
    assert p == predicted and d.outcome == Outcome.usable and "think.stripped" in rules(d)


@pytest.mark.parametrize("raw, strip, predicted, marks", [
    ("El *file está *abierto", True, "El file está abierto", 2),
    ("El #archivo está @abierto", True, "El archivo está abierto", 2),
    ("El *file está abierto", False, "El *file está abierto", 0),     # only for Apertium output
    ("Escribe a user@example.com en C#", True, "Escribe a user@example.com en C#", 0),
])
def test_apertium_unknown_marks(raw, strip, predicted, marks):
    p, d = run(raw, source="Write the file to user@example.com in C#", reference="x" * 20, strip=strip)
    assert p == predicted
    assert [f.count for f in d.flags if f.rule == "unknown_marks"] == ([marks] if marks else [])


def test_mark_present_in_the_source_is_kept():
    p, _ = run("Usa #include siempre", source="Always use #include", reference="Usa siempre #include", strip=True)
    assert p == "Usa #include siempre"


def test_raw_output_is_never_modified():
    raw = "<think>x</think> *Hola mundo.</s>"
    before = str(raw)
    p, _ = run(raw, strip=True)
    assert raw == before and p == "Hola mundo."


# ---------------------------------------------------------------------------------------------------------------
# flags


@pytest.mark.parametrize("raw, reference, fires", [
    ("Here is the translation: Hola mundo.", "Hola mundo.", True),
    ("Sure! Hola mundo.", "Hola mundo.", True),
    ("Translation: Hola mundo.", "Hola mundo.", True),
    ("Aquí está la traducción: Hola mundo.", "Hola mundo.", True),
    ("Hola mundo.\n\nNote: I kept the tone informal.", "Hola mundo.", True),
    ("Hola mundo. (Literally: hello world)", "Hola mundo.", True),
    ("Hola mundo.\nAlternatively: ¡Hola, mundo!", "Hola mundo.", True),
    ("Hola mundo.", "Hola mundo.", False),
    ("Nota: guarda el archivo.", "Nota: guarda el archivo.", False),   # the reference has the same marker
    ("Hola mundo (or: ¡Hola, mundo!)", "Hola mundo.", True),
    ("Move your leader (or whatever unit you chose) here.", "Mueve a tu líder aquí.", False),  # plain parenthesis
    ("Hola mundo (note that this is informal).", "Hola mundo.", False),
])
def test_commentary(raw, reference, fires):
    _, d = run(raw, source="Hello world.", reference=reference)
    assert ("commentary" in rules(d)) is fires


def test_commentary_marker_also_in_source_is_not_flagged():
    _, d = run("Nota: guarda el archivo.", source="Note: save the file.", reference="Aviso: guarda el archivo.")
    assert "commentary" not in rules(d)


@pytest.mark.parametrize("raw, source, reference, src, tgt, fires", [
    ("Kaori: Good morning.", "【カオリ】おはよう。", "Good morning.", "ja", "en", True),
    ("**Kaori:** Good morning.", "【カオリ】おはよう。", "Good morning.", "ja", "en", True),
    ("**Kaori:** Good morning.", "おはよう。", "Good morning.", "ja", "en", True),      # bold label is never natural
    ("Good morning.", "【カオリ】おはよう。", "Good morning.", "ja", "en", False),
    ("Kaori: Good morning.", "【カオリ】おはよう。", "Kaori: Good morning.", "ja", "en", False),  # as the reference
    ("Error: no se encontró.", "Error: not found.", "Error: no encontrado.", "en", "es", False),  # not a tag
    ("Error: no se encontró.", "Not found.", "No encontrado.", "en", "es", False),
])
def test_speaker_label(raw, source, reference, src, tgt, fires):
    _, d = run(raw, source=source, reference=reference, src=src, tgt=tgt)
    assert ("format.speaker_label" in rules(d)) is fires


@pytest.mark.parametrize("raw, source, reference, fires", [
    ("Hola **mundo**.", "Hello world.", "Hola mundo.", True),
    ("Hola *mundo*.", "Hello world.", "Hola mundo.", True),
    ("Hola __mundo__.", "Hello world.", "Hola mundo.", True),
    ("Hola **mundo**.", "Hello **world**.", "Hola **mundo**.", False),
    ("2 * 3 = 6 y 4 * 5", "2 * 3 = 6 and 4 * 5", "2 * 3 = 6 y 4 * 5", False),
    ("usa mi_variable_larga", "use my_long_variable", "usa mi_variable_larga", False),
])
def test_markdown_emphasis(raw, source, reference, fires):
    _, d = run(raw, source=source, reference=reference)
    assert ("format.markdown" in rules(d)) is fires


@pytest.mark.parametrize("raw, fires, detail", [
    ("Tienes <b>mensajes</b> nuevos.", False, None),
    ("Tienes mensajes nuevos.", True, "missing /b b"),
    ("Tienes <b>mensajes</b> nuevos.<br/>", True, "extra br"),
    ("Tienes <B>mensajes</B> nuevos.", False, None),    # tag names are case-insensitive
])
def test_markup(raw, fires, detail):
    _, d = run(raw, source="You have new <b>messages</b>.", reference="Tienes <b>mensajes</b> nuevos.")
    flags = [f for f in d.flags if f.rule == "format.markup"]
    assert bool(flags) is fires
    if fires:
        assert flags[0].detail == detail


@pytest.mark.parametrize("source, reference, raw, fires", [
    ("Hello %s", "Hola %s", "Hola %s", False),
    ("Hello %s", "Hola %s", "Hola", True),
    ("Hello %s", "Hola %s", "Hola %d", True),
    ("%1$s of %2$d", "%1$s de %2$d", "%1$s de %2$d", False),
    ("%(name)s joined", "%(name)s se unió", "%(nombre)s se unió", True),       # renamed key breaks the string
    ("Page {0} of {1}", "Página {0} de {1}", "Página {0} de {1}", False),
    ("Page {0} of {1}", "Página {0} de {1}", "Página {0} de {2}", True),
    ("Hi {name}!", "¡Hola {name}!", "¡Hola {nombre}!", True),
    ("Hi {{ user }}", "Hola {{ user }}", "Hola usuario", True),
    ("$unit.name| attacks", "$unit.name| ataca", "$unit.name| ataca", False),
    ("$unit.name| attacks", "$unit.name| ataca", "$unidad.nombre| ataca", True),
    ("Line one\\nLine two", "Línea uno\\nLínea dos", "Línea uno Línea dos", True),
    ("Line one\\nLine two", "Línea uno\\nLínea dos", "Línea uno\\nLínea dos", False),
    ("Replace %1 with %2", "Reemplaza %1 por %2", "Reemplaza %2 por %1", False),    # order may change
    ("50% off", "50 % de descuento", "50% de descuento", False),                  # not a placeholder
    ("Hello %s", "%s, hola", "Hola", True),
])
def test_placeholders(source, reference, raw, fires):
    _, d = run(raw, source=source, reference=reference)
    assert ("placeholder" in rules(d)) is fires


def test_placeholder_matching_the_reference_but_not_the_source_is_accepted():
    # the human reference dropped the count; an output doing the same is not flagged
    _, d = run("Archivos borrados", source="%d files deleted", reference="Archivos borrados")
    assert "placeholder" not in rules(d)


@pytest.mark.parametrize("source, reference, raw, fires", [
    ("First line\nSecond line", "Primera línea\nSegunda línea", "Primera línea Segunda línea", True),
    ("First line\nSecond line", "Primera línea\nSegunda línea", "Primera línea\nSegunda línea", False),
    ("First line\nSecond line", "Primera línea segunda línea", "Primera línea segunda línea", False),
])
def test_line_breaks(source, reference, raw, fires):
    _, d = run(raw, source=source, reference=reference)
    assert ("format.line_breaks" in rules(d)) is fires


@pytest.mark.parametrize("raw, source, reference, src, tgt, count, detail", [
    ("Hola 世界.", "Hello world.", "Hola mundo.", "en", "es", 2, "Han"),
    ("Hola мир.", "Hello world.", "Hola mundo.", "en", "es", 3, "Cyrillic"),
    ("Hola عالم.", "Hello world.", "Hola mundo.", "en", "es", 4, "Arabic"),
    ("Hola mundo.", "Hello world.", "Hola mundo.", "en", "es", 0, None),
    ("Hello, Tokyo (東京).", "こんにちは、東京。", "Hello, Tokyo (東京).", "ja", "en", 0, None),  # source scripts
    ("Привет, Tōkyō 東京", "Hello Tokyo", "Привет, Токио", "en", "ru", 2, "Han"),
    ("Hola Ελλάδα", "Hello Greece", "Hola Grecia (Ελλάδα)", "en", "es", 0, None),          # reference has it
    ("Hola 世界", "Hello world", "Hola mundo", "en", "xx", 0, None),                        # unknown language
])
def test_foreign_script(raw, source, reference, src, tgt, count, detail):
    _, d = run(raw, source=source, reference=reference, src=src, tgt=tgt)
    flags = [f for f in d.flags if f.rule == "foreign_script"]
    if count:
        assert [(f.count, f.detail) for f in flags] == [(count, detail)]
    else:
        assert flags == []


@pytest.mark.parametrize("raw, reference, rule", [
    ("Hola mundo. " * 8, "Hola mundo, ¿qué tal?", "length.long"),       # 96 chars vs 21 → 4.57×
    ("Hola", "Hola mundo, ¿qué tal estás hoy, amigo mío?", "length.short"),  # floor 10 vs 42 → 0.24×
    ("Hola mundo, ¿qué tal?", "Hola mundo, ¿qué tal?", None),
    ("Aceptar", "OK", None),                                              # short strings: floor of 10 chars
    ("Aceptar cambios ahora mismo", "OK", None),                          # 27 vs floor 10 → 2.7×
    ("Aceptar todos los cambios ahora mismo", "OK", "length.long"),        # 37 vs 10 → 3.7×
])
def test_length(raw, reference, rule):
    _, d = run(raw, source="Hello world, how are you?", reference=reference)
    got = {r for r in rules(d) if r.startswith("length.")}
    assert got == ({rule} if rule else set())


@pytest.mark.parametrize("raw, source, reference, src, tgt, share, detected", [
    # ja→en: Japanese letters left, unless the reference keeps them
    ("Good morning, ケンジ.", "おはよう、ケンジ。", "Good morning, Kenji.", "ja", "en", 3 / 14, True),
    ("Good morning, Kenji.", "おはよう、ケンジ。", "Good morning, Kenji.", "ja", "en", 0.0, False),
    ("Eat ramen (ラーメン).", "ラーメンを食べる。", "Eat ramen (ラーメン).", "ja", "en", 0.0, False),
    # en→ja: Latin in Japanese counts only when copied from the source and absent from the reference
    ("Debian のファイル", "The file", "ファイル", "en", "ja", 0.0, False),          # Latin not from the source
    ("file を開く", "Open the file", "ファイルを開く", "en", "ja", 4 / 7, True),
    ("Debian を使う", "Use Debian", "Debian を使う", "en", "ja", 0.0, False),       # the reference keeps the name
    # RTL source, Latin target
    ("Hello עולם", "שלום עולם", "Hello world", "he", "en", 4 / 9, True),
    # same script: copied lower-case words of ≥4 letters absent from the reference
    ("El file está open", "The file is open", "El archivo está abierto", "en", "es", 8 / 14, True),
    ("El archivo está abierto", "The file is open", "El archivo está abierto", "en", "es", 0.0, False),
    ("El Linux está bien", "The Linux is fine", "Linux va bien", "en", "es", 0.0, False),   # capitalised: a name
    ("Un error normal ocurrió en el sistema operativo de hoy", "A normal error occurred", "Falla común",
     "en", "es", 11 / 45, True),   # error(5)+normal(6) of 45 letters
    ("Ocurrió un fallo normal en el sistema operativo moderno", "A normal error occurred", "Falla común",
     "en", "es", 6 / 47, True),
    ("Ocurrió un fallo tan normal en el sistema operativo moderno de hoy", "A normal error occurred",
     "Falla común", "en", "es", 6 / 55, True),
])
def test_partly_untranslated(raw, source, reference, src, tgt, share, detected):
    _, d = run(raw, source=source, reference=reference, src=src, tgt=tgt)
    assert d.outcome == Outcome.usable
    assert d.untranslated_share == pytest.approx(share, abs=1e-6)
    assert ("partly_untranslated" in rules(d)) is detected
    assert checks.code_switching_detected(d) is detected


def test_code_switching_threshold_for_same_script_pairs():
    # 6 copied letters ("normal") of 63 = 0.095 < 0.10: cognate-level evidence is not enough
    _, d = run("Ocurrió un fallo tan normal en el sistema operativo moderno de hoy día mismo",
               source="A normal error occurred", reference="Falla común")
    assert d.untranslated_share == pytest.approx(6 / 63, abs=1e-6)
    assert "partly_untranslated" not in rules(d)


def test_zeroed_entries_count_as_code_switched():
    assert checks.code_switching_detected(run(None)[1]) is True
    assert checks.code_switching_detected(run("Hello world.")[1]) is True


# ---------------------------------------------------------------------------------------------------------------
# every decision is stored


@pytest.mark.parametrize("raw, kwargs, outcome, rule, flag", [
    (None, {"error_kind": "token_cap"}, "no_usable_output", "error.token_cap", None),
    ("", {}, "no_usable_output", "empty", None),
    ("<think>x", {}, "no_usable_output", "unclosed_think", None),
    ("Hello world.", {}, "source_untranslated", "echo", None),
    ("Here is the translation: Hola mundo.", {}, "usable", None, "commentary"),
    ("**Hola** mundo.", {}, "usable", None, "format.markdown"),
    ("Hola mundo 世界.", {}, "usable", None, "foreign_script"),
    ("Hola mundo.</s></s>", {}, "usable", None, "eos.multiple"),
    ("Hola mundo. " * 6, {}, "usable", None, "length.long"),
])
def test_decision_round_trips_through_the_schema(raw, kwargs, outcome, rule, flag):
    _, d = run(raw, **kwargs)
    again = MechanicalDecision.model_validate_json(d.model_dump_json())
    assert again == d
    assert again.outcome == outcome and again.rule == rule
    if flag:
        assert flag in rules(again)

"""The dialogue corpora with history (issue 40 item 1): mtb-en-es-dialogue and mtb-ja-en-dialogue, built from Battle
for Wesnoth 1.16 campaign scenes whose order comes from the WML scenario files (corpora/build.py build_dialogue,
mtboard/inputs/corpora/dialogue.py; corpora/SOURCES.md "Dialogue corpora").

* the committed files validate, pass ``corpus check --public --new-language --strict`` and hold ≥ 30 scenes whose
  entries carry history (36 in each, measured);
* every entry's history is consistent with the entries before it in its scene, and three real entries are quoted
  literally (hand-checked against the WML files and the catalogues of the 1.16.9 Debian packages);
* licence and provenance (package, version, catalogue, msgid hash, WML file and line) are on every entry;
* the order recovery on hand-made WML: file order, NORMAL difficulty, macro bodies skipped, branches as paths, the
  history cap and the gap rule;
* (slow) both files rebuild byte-identically from the pinned packages, with the order checks' measured numbers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mtboard.cli.main import app
from mtboard.core.documents import load_corpus
from mtboard.core.schema import Context, Domain, Entry, Register, Segment
from mtboard.inputs.corpora import dialogue as D
from mtboard.inputs.corpora.labels import assign_context

REPO = Path(__file__).resolve().parent.parent
ES = REPO / "corpora" / "mtb-en-es-dialogue.json"
JA = REPO / "corpora" / "mtb-ja-en-dialogue.json"
runner = CliRunner()


@pytest.fixture(scope="module")
def es():
    return load_corpus(ES)[0]


@pytest.fixture(scope="module")
def ja():
    return load_corpus(JA)[0]


def _by_scene(corpus) -> dict[str, list[Entry]]:
    out: dict[str, list[Entry]] = {}
    for e in corpus.entries:
        out.setdefault(e.scene, []).append(e)
    return out


# --------------------------------------------------------------------------------------------------------------------
# the committed files


def test_committed_files_pass_corpus_check():
    res = runner.invoke(app, ["corpus", "check", "--public", "--new-language", "--strict", str(ES), str(JA)])
    assert res.exit_code == 0, res.output
    assert f"{ES}: ok — mtb-en-es-dialogue 1.0.0 EN→ES, 369 entries, licence GPL-2.0-or-later" in res.stdout
    assert f"{JA}: ok — mtb-ja-en-dialogue 1.0.0 JA→EN, 364 entries, licence GPL-2.0-or-later" in res.stdout


@pytest.mark.parametrize("path, n_dev, n_diag", [(ES, 356, 13), (JA, 354, 10)], ids=["en-es", "ja-en"])
def test_thirty_scenes_or_more_with_history(path, n_dev, n_diag):
    corpus, _ = load_corpus(path)
    seg = Counter(e.segment for e in corpus.entries)
    assert (seg[Segment.development], seg[Segment.diagnostic]) == (n_dev, n_diag)
    dev = [e for e in corpus.entries if e.segment == Segment.development]
    scenes = Counter(e.scene for e in dev if e.history)
    assert len(scenes) == 36 >= 30  # the write-up's quality arms use 31 scenes
    assert all(e.scene for e in corpus.entries)
    # ten entries per scene, eight where the scene has fewer qualifying lines (measured)
    per_scene = Counter(Counter(e.scene for e in dev).values())
    assert per_scene == ({10: 34, 8: 2} if path == ES else {10: 33, 8: 3})
    assert all(len(e.history) <= D.HISTORY_CAP for e in corpus.entries)
    # measured: 71 entries have the full 24-line history, most at least the latency gate's 6
    assert sum(len(e.history) == 24 for e in corpus.entries) == 71
    assert sum(len(e.history) >= 6 for e in dev) >= 300


def test_dataset_envelope_licence_and_provenance(es, ja):
    for corpus, src in ((es, "en"), (ja, "ja")):
        d = corpus.dataset
        assert d.license == "GPL-2.0-or-later"  # usr/share/doc/wesnoth-1.16-*/copyright: GPL 2 or later
        assert d.provenance == ["corpus"] and d.source_language == src
        assert "WML scenario files" in d.description and "history" in d.description
    assert ja.dataset.description.startswith("Reversed from en→ja catalogues: English is the original text")
    loc_re = re.compile(r"msgid-sha256=([0-9a-f]{16}) wml=data/campaigns/[A-Za-z_]+/scenarios/[^ ]+\.cfg:(\d+)")
    for corpus in (es, ja):
        for e in corpus.entries:
            o = e.origin
            assert o is not None and e.provenance == "corpus", e.id
            assert re.fullmatch(r"wesnoth-1\.16-(httt|tsg|ttb|sotbe|utbs)", o.package), o.package
            assert o.package_version == "1:1.16.9-1"
            lang = "es" if corpus is es else "ja"
            assert re.fullmatch(rf"usr/share/games/wesnoth/1\.16/locale/{lang}/LC_MESSAGES/wesnoth-[a-z]+\.mo", o.file)
            m = loc_re.match(o.locator)
            assert m, o.locator
            # the locator is the msgid's hash: the English side as the catalogue holds it; entry 83's msgid has a
            # line break after '(releasing a torrent of fire towards Konrad and Li’sar)' (19c_Cliffs_of_Thoria.cfg
            # line 358), which the cleaning of kept text turns into a space
            english = e.source if corpus is es else e.reference
            same = hashlib.sha256(english.encode("utf-8")).hexdigest()[:16] == m.group(1)
            assert same == (e.id != 83), e.id
            if not same:
                fixed = english.replace("Li’sar) Soooo", "Li’sar)\nSoooo")
                assert hashlib.sha256(fixed.encode("utf-8")).hexdigest()[:16] == m.group(1)
            assert o.note.startswith("scene order from the WML scenario file")
            if corpus is ja:
                assert "reversed from an en→Japanese catalogue" in o.note
            assert e.domain == Domain.literary


def test_labels_follow_the_rule(es):
    assert Counter(e.register for e in es.entries) == {Register.conversational: 362, Register.formal: 7}
    for e in es.entries:
        if e.register == Register.formal:  # narration: a narrator's message (no [part] story line was sampled)
            assert e.context == Context.narrative and "speaker=narrator" in e.origin.locator
        else:  # a character's line: the literary rule (greeting, question or none)
            assert e.context == assign_context(Domain.literary, e.source), e.id
    assert [(e.id, e.context) for e in es.entries if e.context == Context.greeting] == [
        (9, Context.greeting), (350, Context.greeting)]  # 'Greetings, young master. …', 'Hey Kaleh, how’s …?'
    assert sum(e.context == Context.question for e in es.entries) == 62
    assert all((e.segment == Segment.diagnostic) == ("$" in e.source) for e in es.entries)


def test_histories_agree_with_the_entries_before_them(es, ja):
    """An earlier entry of a scene on the same path is a line of a later one's history, and what precedes it there is
    the end of its own history (both read from one line order)."""
    checked = 0
    for corpus in (es, ja):
        for scene, entries in _by_scene(corpus).items():
            dev = [e for e in entries if e.segment == Segment.development]
            for a, b in zip(dev, dev[1:]):
                assert a.id < b.id
                assert a.source in b.history, (corpus.dataset.id, a.id, b.id)
                i = len(b.history) - 1 - b.history[::-1].index(a.source)
                before = b.history[:i]
                assert before == a.history[len(a.history) - len(before):], (a.id, b.id)
                if len(b.history) < D.HISTORY_CAP:  # no cap: the later history starts where the earlier one does
                    assert before == a.history
                checked += 1
    assert checked == (356 - 36) + (354 - 36)


def test_hand_checked_entries(es, ja):
    """Quoted from data/campaigns/Heir_To_The_Throne/scenarios/02_Blackwater_Port.cfg (event start, lines 155–178)
    and 13_The_Dwarven_Doors.cfg (a moveto event: [if][then] 'Who... who’s here?' then a nested [if] whose [then]
    and [else] hold the two $outlaw_name lines), with the es and ja catalogues of the 1.16.9 packages."""
    e1 = es.entries[0]
    assert (e1.id, e1.scene) == (1, "httt/02_Blackwater_Port/03_start")
    assert e1.source == "We will help you fight them off until the reinforcements arrive."
    assert e1.reference == "Os ayudaremos a luchar contra ellos hasta que lleguen esos refuerzos."
    assert e1.history[0] == ("We should be able to board a ship at Blackwater Port, but it seems the orcs are heading "
                             "there too. Rebels who hate Asheviere and are loyal to the memory of the king desperately "
                             "hold the port, as it is one of the only places where they can ship supplies and weapons.")
    assert e1.history[1:] == [
        "Delfador, some orcs are following us! We must make haste!",
        "Delfador, my old friend! We had heard of your coming, and of the attacks on the elves. It is good to see you "
        "again, although I would prefer it were not in such sad times.",
        "Konrad, this is Kaylan, one of the mightiest of the horse lords, and one of the few who is willing to oppose "
        "the Dark Crown. Rumor has it that his lance has slain fifty men and a hundred orcs.",
        "It seems the orcs have come here too, to try to wrest this port from our hands. Our defenses are still weak, "
        "but reinforcements will arrive soon!"]
    assert e1.origin.locator == ("msgid-sha256=ea8a2f82fe4b3b5e wml=data/campaigns/Heir_To_The_Throne/scenarios/"
                                 "02_Blackwater_Port.cfg:177 event=start speaker=Konrad")
    # the same line turned around: Japanese source and history, the English original as the reference
    j1 = ja.entries[0]
    assert j1.scene == e1.scene and j1.reference == e1.source
    assert j1.source == "私たちは援軍が到着するまで、敵を撃退するのを手伝います。"
    assert j1.history[0].startswith("黒水港で船に乗る事ができるはずじゃが、オークもそこに向かっておるようじゃ。")
    assert len(j1.history) == len(e1.history) == 5
    # two alternatives of one [if]: each has the line before the [if] as history, never the other branch
    then_, else_ = (next(e for e in es.entries if e.source.startswith(s)) for s in ("$outlaw_name|! How", "Haw!"))
    assert then_.scene == else_.scene == "httt/13_The_Dwarven_Doors/08_moveto"
    assert then_.segment == else_.segment == Segment.diagnostic
    assert then_.reference == "¡$outlaw_name|! ¿Cómo estáis? No os he visto en años."
    assert else_.source == "Haw! Any friend of $outlaw_name is a friend of mine too."
    assert else_.reference == "¡Ja! Los amigos de $outlaw_name son también mis amigos."
    assert then_.history == else_.history == ["Who... who’s here?"]


def test_other_corpora_have_no_scene_or_history():
    for path in sorted((REPO / "corpora").glob("*.json")):
        if path.stem.endswith("-dialogue"):
            continue
        corpus, _ = load_corpus(path)
        assert not any(e.scene or e.history for e in corpus.entries), path.name


# --------------------------------------------------------------------------------------------------------------------
# the order recovery on hand-made WML

SNIPPET = '''#textdomain wesnoth-test
#define TEST_MACRO_BODY
    [message]
        speaker=Nobody
        message= _ "Inside a macro body: not spoken here."
    [/message]
#enddef
[scenario]
    id=01_Test
    [story]
        [part]
            story= _ "Long ago, in a test."
        [/part]
    [/story]
    [event]
        name=start
        [message]
            speaker=Ann
            message= _ "Hello, $unit.name|! Say ""hi""."
        [/message]
        #if the player is slow — a comment, not a directive
#ifdef EASY
        [message]
            speaker=Ann
            message= _ "Easy only."
        [/message]
#else
        [message]
            speaker=Ann
            message= _ "Normal and hard."
        [/message]
#endif
        [message]
            speaker=Bob
            message={WHISPER _"A pure macro value is dropped."}
        [/message]
        [if]
            [variable]
                name=x
                equals=1
            [/variable]
            [then]
                [message]
                    speaker=Bob
                    message= _ "Then branch."
                [/message]
            [/then]
            [else]
                [message]
                    speaker=Bob
                    message= _ "Else branch."
                [/message]
            [/else]
        [/if]
        {MESSAGE_DEPEND_ON_ALLY
        (
            [message]
                speaker=Grog
                message= _ "Grog line."
            [/message]
        )
        (
            [message]
                speaker=Nog
                message= _ "Nog line."
            [/message]
        )}
        {NAMED_UNIT 1 Spearman 3 4 Cy (_ "Cy")}
        [message]
            speaker=Ann
            message= _ "Two lines
in one string."
        [/message]
    [/event]
[/scenario]
'''


def test_wml_lines_read_a_hand_made_scenario():
    lines, report = D.wml_lines(SNIPPET)
    assert [(ln.kind, ln.text, ln.speaker, ln.event, ln.block) for ln in lines] == [
        ("story", "Long ago, in a test.", None, None, 0),
        ("message", 'Hello, $unit.name|! Say "hi".', "Ann", "start", 1),
        ("message", "Normal and hard.", "Ann", "start", 1),
        ("message", "Then branch.", "Bob", "start", 1),
        ("message", "Else branch.", "Bob", "start", 1),
        ("message", "Grog line.", "Grog", "start", 1),
        ("message", "Nog line.", "Nog", "start", 1),
        ("message", "Two lines\nin one string.", "Ann", "start", 1)]
    assert [ln.line for ln in lines] == [12, 19, 30, 45, 51, 59, 65, 71]  # the message= / story= lines
    assert report.kept == {"message": 7, "story": 1, "off_first_path": 2}
    assert report.dropped == {"define": 1, "define_line": 1, "inactive": 1, "inactive_line": 1, "macro": 1,
                              "in_macro": 1}
    # defined symbols decide the #ifdef branch
    easy, _ = D.wml_lines(SNIPPET, defined=frozenset({"EASY"}))
    assert "Easy only." in [ln.text for ln in easy] and "Normal and hard." not in [ln.text for ln in easy]


def test_paths_keep_alternatives_out_of_each_other_history():
    lines, _ = D.wml_lines(SNIPPET)
    text = [ln.text for ln in lines]
    assert [D.on_first_path(ln) for ln in lines] == [True, True, True, True, False, True, False, True]
    # the [else] line sees everything before the [if], not the [then] line
    assert [text[j] for j in D.path_before(lines, 4)] == text[:3]
    # Nog's line (second macro argument) follows the first branch of the [if], not Grog's line
    assert [text[j] for j in D.path_before(lines, 6)] == text[:4]
    # after both choices, the first path: Then branch and Grog line
    assert [text[j] for j in D.path_before(lines, 7)] == [text[k] for k in (0, 1, 2, 3, 5)]
    assert not D.compatible(lines[3], lines[4]) and D.compatible(lines[3], lines[7])


def test_history_cap_and_gap():
    texts = [f"line {k}" for k in range(30)]
    assert D.history(texts, 0) == []
    assert D.history(texts, 3) == ["line 0", "line 1", "line 2"]
    assert D.history(texts, 29) == [f"line {k}" for k in range(5, 29)]  # the last 24
    assert D.history(texts, 29, cap=3) == ["line 26", "line 27", "line 28"]
    # a line with no translation is a gap: the history stops after it, never skipping it silently
    gappy = ["a", "b", None, "d", "e", None, "g"]
    assert D.history(gappy, 4) == ["d"]
    assert D.history(gappy, 6) == []
    assert D.history(gappy, 2) == ["a", "b"]  # the gap line itself has its history
    with pytest.raises(IndexError):
        D.history(gappy, 7)


def test_scene_lines_look_up_msgids_with_their_context_prefix():
    lines = [D.WmlLine("message", ("female^With pleasure.",), 5), D.WmlLine("message", ("Untranslated.",), 9)]
    got = D.scene_lines(lines, {"female^With pleasure.": "Con gusto."})
    assert [(s.source, s.target) for s in got] == [("With pleasure.", "Con gusto."), ("Untranslated.", None)]


def test_entry_scene_field_is_optional_and_checked():
    e = Entry(id=1, source="a", reference="b", scene="httt/01_The_Elves_Besieged/02_start", history=["x"])
    assert e.scene == "httt/01_The_Elves_Besieged/02_start"
    assert Entry(id=1, source="a", reference="b").scene is None
    with pytest.raises(ValueError):
        Entry(id=1, source="a", reference="b", scene="")


# --------------------------------------------------------------------------------------------------------------------
# rebuild from the pinned packages (slow)


def _build_module():
    spec = importlib.util.spec_from_file_location("mtb_corpora_build_dialogue", REPO / "corpora" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_dialogue_corpora_rebuild_byte_identically_with_the_measured_order_checks(tmp_path):
    build = _build_module()
    recipe = next(r for r in build.RECIPES if r.id == "mtb-en-es-dialogue")
    apt = [f"{n}={build.PACKAGES[n][1]}" for n in sorted(build.packages_for(recipe))]
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")) or subprocess.run(
            ["apt-get", "download", "--print-uris", *apt], capture_output=True).returncode != 0:
        pytest.skip("the pinned Debian 12 wesnoth-1.16-* packages are not reachable here")
    out = tmp_path / "out"
    assert build.main(["--only", "mtb-en-es-dialogue", "--only", "mtb-ja-en-dialogue", "--out", str(out),
                       "--cache", str(tmp_path / "cache")]) == 0
    for path in (ES, JA):
        assert (out / path.name).read_bytes() == path.read_bytes()
    root = build.fetch(build.packages_for(recipe), tmp_path / "cache")
    # corpora/SOURCES.md quotes these numbers
    assert build.dialogue_check(root) == {
        "scenes": 620, "scenes_8_lines": 120, "off_first_path": 370, "raw_key_lines": 3428,
        "raw_key_lines_accounted": 3428, "lines": 3365, "message": 3254, "story": 111, "pieces_found": 3365,
        "pieces_missing": 0, "multi_piece_lines": 0, "increasing_line_numbers": 1, "dropped_define": 47,
        "dropped_define_line": 29, "dropped_in_macro": 331, "dropped_inactive": 179, "dropped_inactive_line": 34,
        "dropped_untranslatable": 2, "placeholder_lines": 16, "speaker_pairs": 2297, "same_speaker_pairs": 206,
        "catalogue_msgids_unused": 1397}
    # the gap rule on real data: three lines of this scene have no Japanese translation in the 1.16.9 catalogue
    scene = next(s for s in build.wesnoth_scenes(root) if s.id == "httt/03_The_Isle_of_Alduin/04_start")
    _, cat = build.wesnoth_catalog(root, scene.domain, "ja")
    texts = [ln.target for ln in D.scene_lines(list(scene.lines), cat)]
    assert [t is None for t in texts] == [False, False, False, True, True, True]
    assert build.scene_history(scene, texts, 5) == []  # the line before is a gap: no history at all
    assert len(build.scene_history(scene, texts, 3)) == 3

"""The one boundary where answers become text (mtboard.core.decoding; issue 33 item 1): a table of fragments and the
text and repair count each must give, UTF-8 sequences split at every point, the JSONL writer that holds any str.

Expected values are written by hand from the standards: 😀 is U+1F600 (UTF-8 ``F0 9F 98 80``, UTF-16 ``D83D DE00``);
💀 is U+1F480 (``D83D DC80``: a low half inside the escaped-byte range U+DC80–U+DCFF); the U+FFFD counts of
ill-formed bytes follow Unicode 15 §3.9, "U+FFFD Substitution of Maximal Subparts" (Table 3-8's example is a row).
"""

from __future__ import annotations

import json
import random

import pytest

from mtboard.core.decoding import answer_text, clean, clean_json, escape_surrogates, json_line
from mtboard.run.workdir import _line

GRIN, SKULL, PHONE = "\U0001f600", "\U0001f480", "\U0001f4f1"
R = "\ufffd"


def esc(data: bytes) -> str:
    """Bytes as the client holds them after decoding a body with surrogateescape (each byte ≥ 0x80 that is not part
    of a valid sequence → U+DCXX)."""
    return data.decode("utf-8", "surrogateescape")


TABLE = [
    # (id, fragments, text, repairs)
    ("split-pair", ["Hola mundo \ud83d", "\ude00."], f"Hola mundo {GRIN}.", 0),
    ("pair-in-one-fragment", ["\ud83d\ude00"], GRIN, 0),
    ("split-pair-low-in-escape-range", ["\ud83d", "\udc80"], SKULL, 0),
    ("pair-low-in-escape-range", ["a\ud83d\udcf1b"], f"a{PHONE}b", 0),
    ("reversed-pair", ["\ude00\ud83d"], R + R, 2),
    ("lone-high-in-text", ["Hola mundo \ud83d."], f"Hola mundo {R}.", 1),
    ("lone-high-at-end", ["Hola \ud83d"], f"Hola {R}", 1),
    ("lone-high-at-start", ["\ud83dHola"], f"{R}Hola", 1),
    ("lone-low-at-start", ["\ude00Hola"], f"{R}Hola", 1),
    ("lone-low-at-end", ["Hola", "\udfff"], f"Hola{R}", 1),
    ("two-highs-then-low", ["\ud83d\ud83d\ude00"], R + GRIN, 1),
    ("split-utf8-bytes", [b"Hola mundo \xf0\x9f", b"\x98\x80."], f"Hola mundo {GRIN}.", 0),
    ("split-utf8-escaped", ["Hola mundo " + esc(b"\xf0\x9f"), esc(b"\x98\x80") + "."], f"Hola mundo {GRIN}.", 0),
    ("split-utf8-three-fragments", [esc(b"\xf0"), esc(b"\x9f\x98"), esc(b"\x80")], GRIN, 0),
    ("truncated-4-byte", [b"a\xf0\x9f\x98"], f"a{R}", 1),
    ("overlong-slash", [b"\xc0\xaf"], R + R, 2),
    ("overlong-3-byte", [b"\xe0\x80\xaf"], R * 3, 3),
    ("cesu-surrogate-bytes", [b"\xed\xa0\xbd"], R * 3, 3),
    ("beyond-u10ffff", [b"\xf4\x90\x80\x80"], R * 4, 4),
    ("never-a-byte", [b"\xff", b"x"], f"{R}x", 1),
    ("unicode-table-3-8", [b"a\xf1\x80\x80\xe1\x80\xc2b\x80c\x80\xbfd"], f"a{R}{R}{R}b{R}c{R}{R}d", 6),
    ("sent-replacement-char-split", [b"\xef\xbf", b"\xbd"], R, 0),
    ("sent-replacement-char", ["ok \ufffd"], "ok \ufffd", 0),
    ("high-then-escaped-character", ["\ud83d", esc(b"\xf0\x9f"), esc(b"\x98\x80")], R + GRIN, 1),
    ("high-then-stray-byte", ["\ud83d", esc(b"\x80\x80")], SKULL + R, 1),
    ("escaped-bytes-between-pair-halves", ["\ud83d", esc(b"\xc3\xa9"), "\ude00"], f"{R}é{R}", 2),
    ("empty-fragments", ["", "Hola", b"", None, ""], "Hola", 0),
    ("no-fragments", [], "", 0),
    ("plain", ["Hola ", "mundo."], "Hola mundo.", 0),
]


@pytest.mark.parametrize("fragments, text, repairs", [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_answer_text_table(fragments, text, repairs):
    assert answer_text(fragments) == (text, repairs)


@pytest.mark.parametrize("char", ["é", "€", "ह", GRIN, "\U00010348"], ids=["2-byte", "3-byte", "3-byte-deva",
                                                                           "4-byte", "4-byte-gothic"])
def test_a_character_split_at_every_byte_and_between_any_events_is_whole(char):
    data = f"a{char}b".encode()
    for i in range(1, len(data)):
        for j in range(i, len(data)):
            pieces = [data[:i], data[i:j], data[j:]]
            assert answer_text(pieces) == (f"a{char}b", 0), (i, j)
            assert answer_text([esc(p) for p in pieces]) == (f"a{char}b", 0), (i, j)


def test_the_real_path_escapes_in_json_events_decoded_with_surrogateescape():
    """What the client does: each event's bytes decoded with surrogateescape, json.loads, the contents joined."""
    events = [b'{"content":"Hola \xf0\x9f"}', b'{"content":"\x98\x80 \\ud83d"}', b'{"content":"\\ude00."}']
    fragments = [json.loads(e.decode("utf-8", "surrogateescape"))["content"] for e in events]
    assert answer_text(fragments) == (f"Hola {GRIN} {GRIN}.", 0)


def test_never_raises_and_never_leaves_a_surrogate():
    """Fuzz with a fixed seed: random bytes, random surrogates, random cuts. The result always encodes as UTF-8;
    valid UTF-8 cut anywhere is returned unchanged with no repair."""
    rng = random.Random(33)
    pool = ["a", "é", GRIN, "\ud83d", "\ude00", "\udc80", "\udcff", "\ud800", "\udbff", "\udfff", "\ufffd"]
    for _ in range(2000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
        text = esc(data) + "".join(rng.choice(pool) for _ in range(rng.randrange(6)))
        cuts = sorted(rng.randrange(len(text) + 1) for _ in range(3))
        out, n = answer_text([text[:cuts[0]], text[cuts[0]:cuts[1]], data, text[cuts[1]:]])
        out.encode("utf-8")  # no surrogate left
        assert n >= 0 and out.count(R) >= n
        good = "".join(rng.choice(["a", "é", "€", GRIN, " "]) for _ in range(8)).encode()
        k = rng.randrange(len(good) + 1)
        assert answer_text([good[:k], good[k:]]) == (good.decode(), 0)


def test_clean_and_clean_json_make_server_strings_text():
    assert clean(None) is None and clean("m\ud83d") == f"m{R}"
    assert clean_json({"data": [{"id": "m\ud83d", "n": 1}], "k\udcf0": None}) == {"data": [{"id": f"m{R}", "n": 1}],
                                                                                 f"k{R}": None}


def test_a_fragment_that_is_not_text_is_a_programming_error():
    with pytest.raises(TypeError, match="a fragment is int"):
        answer_text(["a", 3])  # type: ignore[list-item]


# --------------------------------------------------------------------------------------------------------------------
# JSON lines that hold any str (raw.jsonl, the judge cache)


@pytest.mark.parametrize("value", ["\ud83d", "\ude00", "a\udcf0b", "\udc80\udcff", "x\ud800", "\udfffy", "ok"],
                         ids=["high", "low", "escaped-byte", "escaped-bytes", "high-at-end", "low-at-start", "plain"])
def test_workdir_line_never_raises_and_reads_back_the_same_str(value):
    line = _line({"response": value, "n": 1})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    line.decode("utf-8")  # valid UTF-8
    assert json.loads(line) == {"response": value, "n": 1}


def test_a_raw_body_round_trips_to_the_bytes_received():
    body = b'data: {"content":"Hola \xf0\x9f"}\n\ndata: {"content":"\\ud83d\x98\x80 \xc0\xaf \xe2\x82\xac"}\n\n'
    line = _line({"response": body.decode("utf-8", "surrogateescape")})
    assert b"\\udcf0\\udc9f" in line and b"\\\\ud83d" in line and "€".encode() in line
    assert json.loads(line)["response"].encode("utf-8", "surrogateescape") == body


def test_json_line_matches_json_dumps_when_there_is_nothing_to_escape():
    obj = {"b": "año", "a": [1, 2.5, None]}
    assert json_line(obj) == (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    assert json_line(obj, sort_keys=True, compact=False) == (
        json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n").encode()
    assert escape_surrogates('{"a":"\ud83d"}') == '{"a":"\\ud83d"}'

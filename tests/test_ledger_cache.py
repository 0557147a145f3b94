"""Issue 35 item 3: the validation cache (:mod:`mtboard.ledger.cache`) through :func:`mtboard.ledger.load.load_inputs`.

Inputs: copies of two committed EN→CA cards (read, never changed) under ``tmp_path/submissions/mtb-en-ca-dev/``, one
of them edited by one byte so that it fails, the committed EN→CA corpus, and a cache folder in ``tmp_path``. The real
validator runs; a counting wrapper around :func:`mtboard.validate.validate_card` tells validated cards from cache hits.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mtboard import validate as V
from mtboard.ledger import cache as C
from mtboard.ledger import load as L
from mtboard.verify.record import REPOSITORY_ENV

ROOT = Path(__file__).resolve().parents[1]
CA_DIR = ROOT / "submissions" / "mtb-en-ca-dev"
GOOD = "baseline-echo__baseline__fee2db17bc53.json"
BAD = "baseline-empty__baseline__78b26823ef42.json"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    subs = tmp_path / "submissions" / "mtb-en-ca-dev"
    subs.mkdir(parents=True)
    shutil.copy(CA_DIR / GOOD, subs / GOOD)
    data = json.loads((CA_DIR / BAD).read_text(encoding="utf-8"))
    data["scores"]["chrf_plus_plus"] = 12.5  # not the recomputed value, and the seal no longer matches
    (subs / BAD).write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    shutil.copy(ROOT / "corpora" / "mtb-en-ca-dev.json", corpora)
    calls: list[str] = []
    real = V.validate_card
    monkeypatch.setattr(V, "validate_card", lambda path, ctx: (calls.append(Path(path).name), real(path, ctx))[1])
    return tmp_path / "submissions", corpora, tmp_path / "cache", calls


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("validation/*/*.json"))


def test_a_second_load_takes_every_verdict_from_the_cache(tree):
    subs, corpora, cache, calls = tree
    first = L.load_inputs(subs, corpora, cache=cache)
    assert (first.cache_hits, first.cache_misses) == (0, 2) and sorted(calls) == [GOOD, BAD]
    assert [lc.path for lc in first.cards] == [f"mtb-en-ca-dev/{GOOD}"]
    assert [r.path for r in first.rejected] == [f"mtb-en-ca-dev/{BAD}"] and len(first.rejected[0].problems) >= 2
    assert len(_entries(cache)) == 2
    calls.clear()
    second = L.load_inputs(subs, corpora, cache=cache)
    assert (second.cache_hits, second.cache_misses, calls) == (2, 0, [])
    assert [lc.path for lc in second.cards] == [lc.path for lc in first.cards]
    assert [(r.path, r.problems) for r in second.rejected] == [(r.path, r.problems) for r in first.rejected]
    # the stored entry is the documented JSON object, filed under its own key
    stored = [(p, json.loads(p.read_text())) for p in _entries(cache)]
    for path, entry in stored:
        assert set(entry) == {"format", "key", "problems"} and entry["format"] == C.CACHE_FORMAT
        assert len(entry["key"]) == 64 and path.name == f"{entry['key']}.json" and path.parent.name == entry["key"][:2]
    assert sorted(len(e["problems"]) for _, e in stored)[0] == 0  # the passing card: an empty list
    assert sorted(e["problems"] for _, e in stored)[1] == first.rejected[0].problems  # the failing one: its lines


def test_no_cache_validates_every_time_and_writes_nothing(tree):
    subs, corpora, cache, calls = tree
    inputs = L.load_inputs(subs, corpora)
    assert (inputs.cache_hits, inputs.cache_misses, len(calls)) == (0, 0, 2) and not cache.exists()


@pytest.mark.slow  # 3.4 CPU-s, 6 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_changed_corpus_or_card_or_secret_is_another_key(tree, tmp_path):
    subs, corpora, cache, calls = tree
    L.load_inputs(subs, corpora, cache=cache)
    (corpora / "other.json").write_text("{}", encoding="utf-8")  # any corpus file is an input of the verdict
    again = L.load_inputs(subs, corpora, cache=cache)
    assert (again.cache_hits, again.cache_misses) == (0, 2)
    (subs / "mtb-en-ca-dev" / GOOD).write_bytes((subs / "mtb-en-ca-dev" / GOOD).read_bytes() + b"\n")
    third = L.load_inputs(subs, corpora, cache=cache)
    assert (third.cache_hits, third.cache_misses) == (1, 1)  # only the edited card is validated again
    secret = tmp_path / "secret.json"
    shutil.copy(ROOT / "corpora" / "mtb-en-ca-dev.json", secret)
    fourth = L.load_inputs(subs, corpora, cache=cache, secret_segment=secret, secret_source="$S")
    assert (fourth.cache_hits, fourth.cache_misses) == (0, 2)
    assert any("sovereignty" in p for r in fourth.rejected for p in r.problems)  # its text is the secret's


# each case validates two committed cards again (~1.8 CPU-s here): two representatives in the fast lane, the others
# in the full lane (docs/TESTING.md: which lane)
@pytest.mark.parametrize("poison", [
    b"{not json",
    pytest.param(b"[]", marks=pytest.mark.slow),
    pytest.param(b'{"format": "mtboard-validation-cache/1", "key": "KEY", "problems": [], "extra": 1}',
                 marks=pytest.mark.slow),
    b'{"format": "mtboard-validation-cache/0", "key": "KEY", "problems": []}',
    pytest.param(b'{"format": "mtboard-validation-cache/1", "key": "0000", "problems": []}', marks=pytest.mark.slow),
    pytest.param(b'{"format": "mtboard-validation-cache/1", "key": "KEY", "problems": [1]}', marks=pytest.mark.slow),
    pytest.param(b'{"format": "mtboard-validation-cache/1", "key": "KEY", "problems": "ok"}', marks=pytest.mark.slow),
])
def test_a_corrupt_or_foreign_entry_is_recomputed_and_replaced(tree, poison):
    subs, corpora, cache, calls = tree
    L.load_inputs(subs, corpora, cache=cache)
    (bad_entry,) = [p for p in _entries(cache) if json.loads(p.read_text())["problems"]]
    key = bad_entry.stem
    bad_entry.write_bytes(poison.replace(b"KEY", key.encode()))  # e.g. a poisoned "ok" for the failing card
    calls.clear()
    again = L.load_inputs(subs, corpora, cache=cache)
    assert (again.cache_hits, again.cache_misses, calls) == (1, 1, [BAD])
    assert [r.path for r in again.rejected] == [f"mtb-en-ca-dev/{BAD}"]
    assert json.loads(bad_entry.read_text())["key"] == key and json.loads(bad_entry.read_text())["problems"]


@pytest.mark.slow  # 1.8 CPU-s, 2 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_linked_entry_is_not_followed(tree, tmp_path):
    subs, corpora, cache, calls = tree
    L.load_inputs(subs, corpora, cache=cache)
    (bad_entry,) = [p for p in _entries(cache) if json.loads(p.read_text())["problems"]]
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"format": C.CACHE_FORMAT, "key": bad_entry.stem, "problems": []}))
    bad_entry.unlink()
    bad_entry.symlink_to(outside)
    again = L.load_inputs(subs, corpora, cache=cache)
    assert (again.cache_hits, again.cache_misses) == (1, 1) and len(again.rejected) == 1
    assert not bad_entry.is_symlink() and json.loads(outside.read_text())["problems"] == []  # replaced, not written through


@pytest.mark.slow  # 1.9 CPU-s, 2 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_linked_validation_folder_is_neither_trusted_nor_written_through(tree, tmp_path):
    """``validation/`` replaced by a link to a folder of forged passing verdicts (a restored cache archive): every
    card is validated again, the rejected one stays rejected, and nothing is written where the link points (issue 35
    review)."""
    subs, corpora, cache, calls = tree
    L.load_inputs(subs, corpora, cache=cache)
    forged = tmp_path / "forged"
    shutil.move(cache / "validation", forged)
    for p in forged.rglob("*.json"):
        p.write_text(json.dumps({"format": C.CACHE_FORMAT, "key": p.stem, "problems": []}))
    (cache / "validation").symlink_to(forged, target_is_directory=True)
    before = {p: p.read_bytes() for p in forged.rglob("*.json")}
    again = L.load_inputs(subs, corpora, cache=cache)
    assert again.cache_hits == 0 and again.cache_misses == len(before) and len(again.rejected) == 1
    assert {p: p.read_bytes() for p in forged.rglob("*.json")} == before


def test_a_verdict_that_depends_on_the_clock_is_not_stored(tree, monkeypatch):
    subs, corpora, cache, calls = tree
    problem = V.Problem(check="timestamps", where="x", message="timestamp is in the future")
    monkeypatch.setattr(V, "validate_card", lambda path, ctx: V.CardReport(path=str(path), checks={}, problems=[problem]))
    inputs = L.load_inputs(subs, corpora, cache=cache)
    assert inputs.cache_misses == 2 and len(inputs.rejected) == 2 and _entries(cache) == []


def test_the_environment_hash_follows_prompts_coaching_and_code(tmp_path, monkeypatch):
    base = C.environment_hash(tmp_path, None, None, None)
    assert base == C.environment_hash(tmp_path, None, None, None) and len(base) == 64
    (tmp_path / "coaching").mkdir()
    (tmp_path / "coaching" / "notes.txt").write_text("a", encoding="utf-8")
    with_coaching = C.environment_hash(tmp_path, None, None, None)
    assert with_coaching != base
    monkeypatch.setattr(C, "code_hash", lambda without=(), keep=(): "edited")
    assert C.environment_hash(tmp_path, None, None, None) != with_coaching


def test_no_module_the_validator_can_run_imports_the_layers_its_key_leaves_out():
    """The validation key leaves the stages after validate/ out of the code hash (VALIDATOR_FREE, but the verdict
    path VALIDATOR_KEPT): sound only while no module it keeps imports them (tests/test_architecture.py enforces the
    order for the whole package; this checks the key's own list against the files, function-level imports included),
    and while the verdict path in ledger/load.py imports nothing of the ledger but the validator."""
    import ast
    import inspect
    import re

    from mtboard.ledger import load

    pkg = Path(C.__file__).resolve().parents[1]
    layers = "|".join(re.escape(x) for x in C.VALIDATOR_FREE if not x.endswith(".py"))
    pattern = re.compile(rf"^\s*(?:from|import)\s+mtboard\.(?:{layers})\b|^\s*from\s+mtboard\s+import\s+(?:{layers})\b",
                         re.MULTILINE)
    kept = [p for p in pkg.rglob("*.py") if p.relative_to(pkg).parts[0] not in C.VALIDATOR_FREE]
    offenders = sorted(p.relative_to(pkg).as_posix() for p in kept if pattern.search(p.read_text()))
    assert len(kept) > 100 and offenders == []
    assert {"validate", "score", "core", "backends", "review"} <= {p.relative_to(pkg).parts[0] for p in kept}
    # static imports are the architecture test's (relative and function-level ones included); a dynamic import could
    # reach any module, so each kept file that makes one is named here, with what it imports: a new one must be
    # looked at (is its target hashed?) and added
    dynamic = sorted(p.relative_to(pkg).as_posix() for p in kept
                     if re.search(r"\bimport_module\(|\b__import__\(|(?<![.\w])exec\(|(?<![.\w])eval\(", p.read_text()))
    assert dynamic == ["backends/base.py",  # backend entry points: mtboard's own point into backends/ (hashed)
                       "core/lazy.py",  # a package's own submodules (core/schema, inputs/corpora, validate; hashed)
                       "inputs/binding.py"]  # a model record's weights package (not mtboard)
    # the verdict path: _validator imports the validator (and its gate's gold-card path) and nothing else
    tree = ast.parse(inspect.getsource(load._validator).lstrip())
    imports = [(n.module, [a.name for a in n.names]) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imports == [("mtboard", ["validate"]), ("mtboard.validate.submission", ["gold_card_path"])] and \
        not [n for n in ast.walk(tree) if isinstance(n, ast.Import)]
    # and the key moves with every file it keeps, and with no file it leaves out
    assert set(C.VALIDATOR_KEPT) == {"ledger/load.py", "ledger/cache.py"}


def test_the_validator_code_hash_covers_the_validator_and_leaves_the_ledger_tables_out(tmp_path, monkeypatch):
    """Copies of the package: an edit of a scorer or of the verdict path is another key; an edit of a ledger table,
    the runner or a page template is not."""
    import shutil

    import mtboard

    pkg = Path(mtboard.__file__).resolve().parent
    copy = tmp_path / "mtboard"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(mtboard, "__file__", str(copy / "__init__.py"))
    base = C.validator_code_hash()
    for rel, moves in (("ledger/tables.py", False), ("run/runner.py", False), ("site/render.py", False),
                       ("cli/site.py", False), ("score/scoring.py", True), ("validate/pipeline.py", True),
                       ("ledger/load.py", True), ("ledger/cache.py", True), ("core/text.py", True),
                       ("backends/apertium.py", True),
                       ("judges/admission-en-es.json", True)):  # a data file the validator reads (review of 9c8dce9)
        path = copy / rel
        text = path.read_text(encoding="utf-8")
        path.write_text(text + "\n# edited\n", encoding="utf-8")
        assert (C.validator_code_hash() != base) == moves, rel
        path.write_text(text, encoding="utf-8")
    assert C.validator_code_hash() == base


def test_the_gates_inputs_are_part_of_the_key(tmp_path):
    """The submission gate reads the verification records beside a card (the tier it claims), plugins/approved.yaml
    (``installable``) and official/ (``governance``): each moves the key of the cards it can change, and a record in
    another dataset's folder does not (review of 272b723; hand-made files)."""
    folder = tmp_path / "submissions" / "mtb-en-es-dev"
    other = tmp_path / "submissions" / "mtb-en-fr-dev"
    folder.mkdir(parents=True)
    other.mkdir(parents=True)
    raw = b'{"card": 1}\n'

    def key() -> str:
        return C.ValidationCache(None, "env", root=tmp_path).key(raw, "submissions/mtb-en-es-dev/a.json",
                                                                  "mtb-en-es-dev/a.json")

    keys = [key()]
    (other / "b.verification.json").write_text("{}")
    assert key() == keys[0]  # another dataset's record: not this card's input
    for name, text in (("a.verification.json", "{}"), ("a.verification.json.sigstore", "{}"),
                       ("a.verification.json", '{"edited": true}'), ("b.verification.json", "{}")):
        (folder / name).write_text(text)
        assert key() not in keys, name  # each step is another key than every earlier one
        keys.append(key())
    (folder / os.fsdecode(b"\xff.verification.json")).write_text("{}")  # a name that is not UTF-8: keyed, no crash
    assert key() not in keys
    env = C.environment_hash(tmp_path, None, None, None)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "approved.yaml").write_text("approved: []\n")
    with_plugins = C.environment_hash(tmp_path, None, None, None)
    (tmp_path / "plugins" / "approved.yaml").write_text("approved: [{name: x}]\n")
    edited = C.environment_hash(tmp_path, None, None, None)
    (tmp_path / "official" / "mtb-en-es-dev").mkdir(parents=True)
    (tmp_path / "official" / "mtb-en-es-dev" / "a.gold_standard.scores.json").write_text("{}")
    (tmp_path / "official" / os.fsdecode(b"\xff")).write_text("{}")
    assert len({env, with_plugins, edited, C.environment_hash(tmp_path, None, None, None)}) == 4


def test_the_key_does_not_depend_on_where_the_checkout_is(tmp_path):
    """Two checkouts of the same repository at different paths key a card the same (the site workflow's cache is
    restored into whatever workspace the runner has; until 2026-12-06 the key held the card folder's absolute path,
    so a second clone validated every card again), and a record beside the card in one of them still moves its key
    there (hand-made files)."""
    raw = b'{"card": 1}\n'

    def key(root: Path) -> str:
        return C.ValidationCache(None, "env", root=root).key(raw, "submissions/mtb-en-es-dev/a.json",
                                                              "mtb-en-es-dev/a.json")

    roots = [tmp_path / "one", tmp_path / "elsewhere" / "two"]
    for root in roots:
        (root / "submissions" / "mtb-en-es-dev").mkdir(parents=True)
    assert key(roots[0]) == key(roots[1])
    (roots[1] / "submissions" / "mtb-en-es-dev" / "a.verification.json").write_text("{}")
    assert key(roots[0]) != key(roots[1])
    (roots[0] / "submissions" / "mtb-en-es-dev" / "a.verification.json").write_text("{}")
    assert key(roots[0]) == key(roots[1])


@pytest.mark.slow  # 2.8 CPU-s, 3 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_the_build_keys_verdicts_by_the_cards_folder_and_never_stores_one_a_gold_card_can_change(tmp_path,
                                                                                               monkeypatch):
    """load_inputs hands the repository root to the cache (so the records beside a card are in its key), and a card
    with a gold scores-only card under official/ is validated on every build: the gate validates the gold card too,
    its timestamp against the clock (review of 9c8dce9). One real 20-entry EN→FR card."""
    from mtboard.ledger import load

    name = "gemma-3-270m-q4-k-m.gguf__zero-shot-completion__5c519b55e824.json"
    subs = tmp_path / "submissions" / "mtb-en-fr-dev"
    subs.mkdir(parents=True)
    shutil.copy(ROOT / "submissions" / "mtb-en-fr-dev" / name, subs / name)
    made = []
    monkeypatch.setattr(load, "ValidationCache", lambda *a, **kw: made.append(C.ValidationCache(*a, **kw)) or made[-1])
    cache = tmp_path / "cache"
    first = load.load_inputs(tmp_path / "submissions", ROOT / "corpora", cache=cache)
    assert made[-1].root == tmp_path and (first.cache_hits, first.cache_misses) == (0, 1) and len(first.cards) == 1
    assert len(list((cache / "validation").rglob("*.json"))) == 1
    gold = tmp_path / "official" / "mtb-en-fr-dev" / (name.removesuffix(".json") + ".gold_standard.scores.json")
    gold.parent.mkdir(parents=True)
    gold.write_text("{}")  # not a valid gold card: the gate says so; what matters is that it exists
    for _ in range(2):
        again = load.load_inputs(tmp_path / "submissions", ROOT / "corpora", cache=cache)
        assert (again.cache_hits, again.cache_misses) == (0, 1)  # validated each time, never stored
    assert len(list((cache / "validation").rglob("*.json"))) == 1

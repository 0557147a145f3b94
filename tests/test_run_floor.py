"""The run near its floor (issue 35 item 4): a run imports only what it uses, and engine versions are read once.

(The semantic score's batches: tests/test_semantic.py; the times: bench/end_to_end.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtboard.backends import apertium
from mtboard.core import debian
from mtboard.score import fst, morphology

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import json, runpy, sys
sys.argv = ["mtboard", *sys.argv[1:]]
try:
    runpy.run_module("mtboard", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mtboard", "httpx", "mkdocs", "jinja2"))
print("MODULES " + json.dumps({"exit": code, "loaded": loaded}))
"""


def _run_and_list_modules(tmp_path: Path, *extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MTBOARD_SEMANTIC_CACHE="off")
    proc = subprocess.run([sys.executable, "-c", PROBE, "run", str(ROOT / "corpora" / "mtb-en-es-dev.json"),
                           "--method", "echo:", "--limit", "3", "--work-dir", str(tmp_path / "wd"),
                           "--out", str(tmp_path / "card.json"), *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("MODULES ")), None)
    assert line is not None, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(line[len("MODULES "):])


@pytest.mark.slow  # 2.8 CPU-s, 4 s in the fast lane on the 2-CPU EPYC (docs/TESTING.md: which lane)
def test_a_run_without_judges_imports_no_judge_module_nor_other_backends(tmp_path):
    """``mtboard run`` of the echo baseline (3 entries, a real card written) in a fresh interpreter: no module of
    ``mtboard.judges`` (nor the validator's judge checks, the site, MkDocs, the anchor, ledger or sweep schemas) is
    imported, and of the backends only the one the method names — so no HTTP client (the LLM backends bring
    ``mtboard.llm`` and httpx); of the validator only the preflight's checks (not its pipeline, repository walk or
    copies check), of the corpus tooling only the arms (no importer, filter or sampler)."""
    got = _run_and_list_modules(tmp_path)
    assert got["exit"] == 0
    card = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert len(card["results"]) == 3 and card["judges"] == {}
    loaded = set(got["loaded"])
    assert "mtboard.score.card" in loaded and "mtboard.backends.baselines" in loaded  # the probe sees the run's own
    unwanted = sorted(m for m in loaded if m.startswith(("mtboard.judges", "mtboard.site", "mkdocs", "mtboard.llm",
                                                          "httpx", "mtboard.backends.openai", "mtboard.backends.gguf",
                                                          "mtboard.backends.apertium"))
                      or m in ("mtboard.validate.judging", "mtboard.validate.judge_answers",
                               # documents a run never reads: built on first use (issue 35 item 4)
                               "mtboard.core.schema.anchor", "mtboard.core.schema.ledger",
                               "mtboard.core.schema.sweep",
                               # the validator's pipeline and repository walk, the corpus importers: the package's
                               # public names are imported on first use (mtboard/validate/__init__.py,
                               # mtboard/inputs/corpora/__init__.py)
                               "mtboard.validate.pipeline", "mtboard.validate.repository", "mtboard.validate.copies",
                               "mtboard.inputs.corpora.importers", "mtboard.inputs.corpora.filters",
                               "mtboard.inputs.corpora.assemble"))
    assert unwanted == []
    # exactly the preflight's checks (run/planned.py) and what they import; of the corpus tooling only the arms
    assert sorted(m for m in loaded if m.startswith("mtboard.validate")) == [
        "mtboard.validate", "mtboard.validate.attempts", "mtboard.validate.bounds", "mtboard.validate.context",
        "mtboard.validate.hygiene", "mtboard.validate.naming", "mtboard.validate.report",
        "mtboard.validate.structure", "mtboard.validate.tools"]
    assert sorted(m for m in loaded if m.startswith("mtboard.inputs.corpora")) == [
        "mtboard.inputs.corpora", "mtboard.inputs.corpora.arms"]


class _Done:
    def __init__(self, out: str, returncode: int = 0) -> None:
        self.returncode, self.stdout, self.stderr = returncode, out, ""


def _fake_dpkg(calls: list[list[str]]):
    """A stand-in for ``subprocess.run`` answering ``dpkg-query -S PATH`` with ``apertium-<mode>`` and
    ``dpkg-query -W -f=${Status}\t${Version} PKG`` with ``install ok installed<TAB>1.0-PKG``."""
    def fake_run(args, **_):
        calls.append(list(args))
        if args[:2] == ["dpkg-query", "-S"]:
            mode = Path(args[2]).stem
            return _Done(f"apertium-{mode}: {args[2]}\n")
        return _Done("install ok installed\t1.0-" + args[-1] + "\n")
    return fake_run


@pytest.fixture
def fresh_dpkg_caches():
    apertium._engine_version.cache_clear()
    debian.package_version.cache_clear()
    debian.owning_package.cache_clear()
    fst.find_analyser.cache_clear()
    morphology.find_morph_analyser.cache_clear()
    yield
    apertium._engine_version.cache_clear()
    debian.package_version.cache_clear()
    debian.owning_package.cache_clear()
    fst.find_analyser.cache_clear()
    morphology.find_morph_analyser.cache_clear()


def test_engine_version_is_read_once_per_mode_and_program(monkeypatch, fresh_dpkg_caches):
    """Two reads of one mode run ``dpkg-query`` three times in all (engine version, owning package, its version), not
    six; another mode asks only what it has not asked (its owning package and that package's version); another
    ``apertium`` program on PATH is read again through ``_engine_version``'s key, without asking dpkg again."""
    calls: list[list[str]] = []
    monkeypatch.setattr(debian.subprocess, "run", _fake_dpkg(calls))
    monkeypatch.setattr(apertium, "_apertium_binary", lambda: "/usr/bin/apertium")
    first = apertium.engine_version("eng-spa")
    assert first == "apertium 1.0-apertium; apertium-eng-spa 1.0-apertium-eng-spa"
    assert apertium.engine_version("eng-spa") == first
    assert [c[:2] for c in calls] == [["dpkg-query", "-W"], ["dpkg-query", "-S"], ["dpkg-query", "-W"]]
    assert apertium.engine_version("eng-cat") == "apertium 1.0-apertium; apertium-eng-cat 1.0-apertium-eng-cat"
    assert [c[:2] for c in calls[3:]] == [["dpkg-query", "-S"], ["dpkg-query", "-W"]]
    monkeypatch.setattr(apertium, "_apertium_binary", lambda: "/opt/apertium/bin/apertium")
    assert apertium.engine_version("eng-spa") == first
    assert len(calls) == 5


@pytest.mark.skipif(fst.find_analyser("es") is None or morphology.find_morph_analyser("en", "es") is None,
                    reason="apertium-eng-spa (lt-proc, apertium-tagger) not installed: scripts/setup.sh")
def test_an_apertium_run_asks_dpkg_once_per_question(monkeypatch, fresh_dpkg_caches):
    """What an Apertium EN→ES run with FST acceptance and morphology asks dpkg (issue 35 item 4, "engine versions
    read once per run"): the engine's version (``apertium`` and the mode's package) and the analysers' (the same
    package, ``lttoolbox``, ``apertium``) — four questions, each asked once (eight ``dpkg-query`` processes before
    :mod:`mtboard.core.debian`, four of them repeats). The versions are the installed ones, as ``dpkg-query``
    prints them."""
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(args, **kw):
        calls.append(list(args))
        return real(args, **kw)

    monkeypatch.setattr(debian.subprocess, "run", counting)
    version = apertium.engine_version("eng-spa")
    spa = fst.find_analyser("es")
    morph = morphology.find_morph_analyser("en", "es")
    asked = [(c[1], c[-1]) for c in calls]
    assert asked == [("-W", "apertium"), ("-S", "/usr/share/apertium/modes/eng-spa.mode"),
                     ("-W", "apertium-eng-spa"), ("-W", "lttoolbox")], asked

    def dpkg(pkg: str) -> str:
        return real(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True).stdout

    assert version == f"apertium {dpkg('apertium')}; apertium-eng-spa {dpkg('apertium-eng-spa')}"
    assert (spa.package_version, spa.lttoolbox_version) == (dpkg("apertium-eng-spa"), dpkg("lttoolbox"))
    assert (morph.package_version, morph.apertium_version) == (dpkg("apertium-eng-spa"), dpkg("apertium"))


def test_package_version_reads_status_and_refuses_what_is_not_a_package_name(monkeypatch, fresh_dpkg_caches):
    """Hand-written ``dpkg-query`` answers (the shapes of dpkg 1.21's output): a package whose configuration files
    only are left (``deinstall ok config-files``) has no version, though dpkg prints one; one whose files are on
    disk (``triggers-pending``, ``half-configured``) has; a Multi-Arch package installed twice has its version when
    both agree, none when they differ; a name outside Debian Policy's package names never reaches ``dpkg-query``; no
    ``dpkg-query`` (not Debian) is None. ``-S``: diversion lines skipped (``/bin/sh`` is dash's), architecture
    qualifiers dropped, several owners None."""
    calls: list[list[str]] = []
    answers = {"apertium-eng-spa": _Done("install ok installed\t0.8.1-2\n"),
               "apertium-old": _Done("deinstall ok config-files\t0.1-1\n"),
               "lttoolbox": _Done("install ok triggers-pending\t3.7.1-1+b2\n"),
               "apertium": _Done("install ok half-configured\t3.8.3-1+b2\n"),
               "libtwo": _Done("install ok installed\t1.0-1\ninstall ok installed\t1.0-1\n"),
               "libskew": _Done("install ok installed\t1.0-1\ninstall ok installed\t1.0-2\n"),
               "/bin/sh": _Done("diversion by dash from: /bin/sh\ndiversion by dash to: /bin/sh.distrib\n"
                                "dash: /bin/sh\n"),
               "/a": _Done("apertium-x, apertium-y: /a\n"), "/b": _Done("libfoo:amd64: /b\n"),
               "/c": _Done("libx:amd64, libx:i386: /c\n"), "/d": _Done("liba:amd64, libb:amd64: /d\n"),
               "/e": _Done("libe: /e/f\n")}

    def fake_run(args, **_):
        calls.append(list(args))
        if args[-1] == "gone":
            raise FileNotFoundError("dpkg-query")
        return answers.get(args[-1], _Done("", 1))

    monkeypatch.setattr(debian.subprocess, "run", fake_run)
    assert debian.package_version("apertium-eng-spa") == "0.8.1-2"
    assert debian.package_version("apertium-old") is None
    assert debian.package_version("lttoolbox") == "3.7.1-1+b2" and debian.package_version("apertium") == "3.8.3-1+b2"
    assert debian.package_version("libtwo") == "1.0-1" and debian.package_version("libskew") is None
    assert debian.package_version("gone") is None
    assert debian.package_version("not-there") is None
    assert debian.package_version("-W") is None and debian.package_version("Apertium") is None
    assert debian.package_version("a") is None
    assert debian.owning_package("/bin/sh") == "dash"
    assert debian.owning_package("/a") is None and debian.owning_package("/b") == "libfoo"
    assert debian.owning_package("/c") == "libx" and debian.owning_package("/d") is None
    assert debian.owning_package("/e") is None
    assert debian.package_version("apertium-eng-spa") == "0.8.1-2"
    assert [c[-1] for c in calls] == ["apertium-eng-spa", "apertium-old", "lttoolbox", "apertium", "libtwo",
                                      "libskew", "gone", "not-there", "/bin/sh", "/a", "/b", "/c", "/d", "/e"]


def test_an_installed_mode_starts_without_apertium_l(monkeypatch, tmp_path):
    """A mode whose file is where the program reads it starts with no ``apertium -l`` process (issue 35 item 4); a
    mode without one still asks ``apertium -l`` and is refused with the installed modes listed."""
    from mtboard.backends.base import parse_method
    from mtboard.core.errors import ConfigError

    (tmp_path / "modes").mkdir()
    (tmp_path / "modes" / "eng-spa.mode").write_text("cat\n", encoding="utf-8")
    monkeypatch.setenv("APERTIUM_DATADIR", str(tmp_path))
    monkeypatch.setattr(apertium, "_apertium_binary", lambda: "/usr/bin/apertium")
    asked: list[list[str]] = []

    class Listed:
        returncode, stdout, stderr = 0, "eng-cat\neng-spa\n", ""

    def fake_run(args, **_):
        asked.append(list(args))
        return Listed()

    monkeypatch.setattr(apertium.subprocess, "run", fake_run)
    assert apertium.mode_file_present("eng-spa", "/usr/bin/apertium")
    assert not apertium.mode_file_present("eng-fra", "/usr/bin/apertium")
    apertium.ApertiumBackend(parse_method("apertium:eng-spa"), apy_url="").start()
    assert asked == []
    with pytest.raises(ConfigError, match="installed modes: eng-cat, eng-spa"):
        apertium.ApertiumBackend(parse_method("apertium:eng-fra"), apy_url="").start()
    assert asked == [["/usr/bin/apertium", "-l"]]


def test_mode_files_agree_with_apertium_l(monkeypatch):
    """Without ``$APERTIUM_DATADIR`` the program's prefix decides: every mode ``apertium -l`` lists has its file
    there, and a name it does not list has none (the installed Apertium; skipped without it)."""
    exe = apertium._apertium_binary()
    if exe is None:
        pytest.skip("apertium is not installed")
    monkeypatch.delenv("APERTIUM_DATADIR", raising=False)
    modes = apertium.installed_modes()
    assert "eng-spa" in modes
    assert all(apertium.mode_file_present(m, exe) for m in modes)
    assert not apertium.mode_file_present("eng-xxx", exe)

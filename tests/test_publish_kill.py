"""Issue 34 item 1, acceptance: SIGKILL during each phase of ``mtboard build`` leaves the previous site byte-identical
and the next build succeeds; the same for every command that rewrites a folder or a file (``sweep collect``,
``rescore``, ``review sample``, ``submit``).

Each test runs the real command (``python -m mtboard …``, a child process) once to completion on small inputs (the
hand-made toy cards of test_site_cards.py; committed cards of this checkout), snapshots what it published (every file
under the folder, hidden ones included → SHA-256), then for several seeds starts it again and kills it with SIGKILL at
a random point, asserts after each kill that the published state is the previous one byte for byte (or, once the
command's single commit point has passed, the whole new one), and finally runs the command to completion: it succeeds,
publishes the expected state and leaves no staging folder or temp file behind.

Kill points: ``mtboard build`` — a random moment inside each phase (load, compute, render: the windows the reference
build measured; MkDocs: from the moment its staging folder appears, a random part of the MkDocs time the reference
build printed); the others — from the moment their staging folder or temp file appears (the write itself), or a random
moment of the reference run's time. Each kill's phase is printed (``pytest -s``) and checked against what the file
system showed at the kill (a render kill had the docs staging folder, an MkDocs kill the site's)."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_site_cards import write_fixture_tree  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CARD = ROOT / "submissions" / "mtb-en-es-dev" / "baseline-echo__baseline__32e6f8fa41bf.json"
SWEEP_REL = "sweeps/gemma-270m-temperature.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCE_DATE_EPOCH": "1795000000"}
LOG: list[str] = []


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` (hidden ones included): file → SHA-256 of its bytes, folder → "dir",
    symlink → "-> target"."""
    out: dict[str, str] = {}
    if not folder.exists():
        return out
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = f"-> {os.readlink(p)}"
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def mtboard(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mtboard", *map(str, args)], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, timeout: float = 300) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def staging(parent: Path, name: str) -> list[str]:
    """Names of ``name``'s staging folders (not their lock files) in ``parent``."""
    return sorted(p.name for p in parent.glob(f".{name}.mtboard-staging-*") if not p.name.endswith(".lock"))


def temps(folder: Path, name: str) -> list[str]:
    """atomic_write's temp files of ``name`` in ``folder``."""
    return sorted(p.name for p in folder.glob(f".{name}.*.tmp"))


def kill_when(proc: subprocess.Popen, ready, delay: float) -> bool:
    """Wait until ``ready()`` is true (polled every millisecond), sleep ``delay`` seconds, SIGKILL ``proc``. Returns
    False when the process ended before (nothing was killed)."""
    while not ready():
        if proc.poll() is not None:
            return False
        time.sleep(0.001)
    if delay:
        time.sleep(delay)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    return proc.returncode == -signal.SIGKILL


def kill_at(proc: subprocess.Popen, started: float, at: float) -> bool:
    """SIGKILL ``proc`` ``at`` seconds after ``started`` (False when it ended before)."""
    while time.perf_counter() - started < at:
        if proc.poll() is not None:
            return False
        time.sleep(0.001)
    return kill_when(proc, lambda: True, 0)


PHASES = ["load", "compute", "render", "mkdocs", "publish"]

MARKED = """
import os, runpy, sys
from pathlib import Path

marks = Path(os.environ["PHASE_MARKS"])


def mark(name, fn):
    def wrapped(*args, **kwargs):
        if not (marks / name).exists():
            (marks / name).touch()
        return fn(*args, **kwargs)
    return wrapped


import mtboard.core.publish as publish
import mtboard.site.build as build
build.load_inputs = mark("load", build.load_inputs)
build.build_ledger = mark("compute", build.build_ledger)
build.render.render_pages = mark("render", build.render.render_pages)
build._mkdocs = mark("mkdocs", build._mkdocs)
publish.Stage.publish = mark("publish", publish.Stage.publish)
sys.argv = ["mtboard", *sys.argv[1:]]
runpy.run_module("mtboard", run_name="__main__", alter_sys=True)
"""
"""``python -m mtboard ARGS`` with a marker file touched as each phase of the build starts (PHASE_MARKS/load, compute,
render, mkdocs, publish — the first ``Stage.publish`` is the site's swap): the same code, so a kill can be aimed at a
phase however loaded the machine is."""


def test_sigkill_in_every_phase_of_mtboard_build_leaves_the_previous_site(tmp_path: Path) -> None:
    write_fixture_tree(tmp_path, bad=True)  # 7 cards, 3 rejected files
    build = ["build", "--submissions", tmp_path / "submissions", "--corpora", tmp_path / "corpora",
             "--out", tmp_path / "b" / "site", "--docs", tmp_path / "b" / "docs"]
    site, docs, parent = tmp_path / "b" / "site", tmp_path / "b" / "docs", tmp_path / "b"
    started = time.perf_counter()
    rc, out, err = finish(mtboard(*build))  # the previous site
    total = time.perf_counter() - started
    assert rc == 0, err
    secs = {k: float(v) for k, v in re.findall(r"(\w+) ([0-9.]+)s", out.split("rejected (", 1)[1])}
    assert set(secs) == set(PHASES)
    before_site, before_docs = snapshot(site), snapshot(docs)
    assert "index.html" in before_site and ".mtboard-site" in before_site and ".mtboard-docs" in before_docs
    assert sorted(p.name for p in parent.iterdir()) == ["docs", "site"]
    # the next build has other inputs (one card fewer), so its site differs from the previous one
    next(p for p in (tmp_path / "submissions").rglob("google-gemma-3-270m__chat__*.json")).unlink()

    marks = tmp_path / "marks"
    plan = ["load", "compute", "render", "mkdocs", "mkdocs", "publish"]  # the swap last: it may publish the new site
    kills: list[tuple[int, str, str, str]] = []  # (seed, phase aimed at, phase reached, staging folders seen)
    after_publish_kill = None
    attempts = [(seed, phase, random.Random(seed).uniform(0.0, 0.7)) for seed, phase in enumerate(plan)]
    while attempts:
        seed, phase, part = attempts.pop(0)
        shutil.rmtree(marks, ignore_errors=True)
        marks.mkdir()
        earlier = set(staging(parent, "site") + staging(parent, "docs"))  # an earlier kill's, removed only later
        proc = subprocess.Popen([sys.executable, "-c", MARKED, *map(str, build)], cwd=ROOT,
                                env={**ENV, "PHASE_MARKS": str(marks)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # a random moment inside the phase: its start plus a part of what it took in the previous build
        killed = kill_when(proc, (marks / phase).exists, 0.0 if phase == "publish" else part * secs[phase])
        out, err = proc.communicate()
        # (the swap and the removal of the old trees take milliseconds: a build may finish before its kill lands)
        assert killed or phase == "publish", f"seed {seed}: the build ended before the kill ({phase}): {err[-2000:]}"
        reached = [p for p in PHASES if (marks / p).exists()][-1]  # the phase the build was in at the kill
        fs = ("site staging" if set(staging(parent, "site")) - earlier
              else "docs staging" if set(staging(parent, "docs")) - earlier else "no staging folder")
        kills.append((seed, phase, reached if killed else "finished", fs))
        if reached != phase and part > 0.01:  # this build ran faster than the previous one: aim earlier
            attempts.insert(0, (seed, phase, part / 4))
        if phase == "publish":
            after_publish_kill = (snapshot(site), snapshot(docs))
            continue
        # the published folders are the previous build's, byte for byte, whatever the phase
        assert snapshot(site) == before_site, f"seed {seed} ({phase}): the site changed"
        assert snapshot(docs) == before_docs, f"seed {seed} ({phase}): the docs changed"
        assert reached != "mkdocs" or fs == "site staging", kills[-1]
        leftovers = {p.name for p in parent.iterdir()} - {"site", "docs"}
        assert all(re.fullmatch(r"\.(site|docs)\.mtboard-staging-[0-9a-f]{12}(\.lock)?", n) for n in leftovers)
    assert {reached for _, _, reached, _ in kills} == set(PHASES), kills  # every phase was hit

    # the next build succeeds, removes every leftover and publishes the new site
    rc, out, err = finish(mtboard(*build))
    assert rc == 0, err
    assert "6 cards" in out
    assert sorted(p.name for p in parent.iterdir()) == ["docs", "site"]
    new_site, new_docs = snapshot(site), snapshot(docs)
    assert new_site != before_site and "index.html" in new_site
    # killed in the swap: the previous site whole, or the new one whole (never a mix); docs follow the site
    assert after_publish_kill[0] in (before_site, new_site) and after_publish_kill[1] in (before_docs, new_docs)
    swapped = after_publish_kill[0] == new_site
    LOG.append(f"build: previous build {total:.1f}s ({', '.join(f'{k} {v:.1f}s' for k, v in secs.items())}); "
               f"{len(kills)} kills, site intact after each: "
               + "; ".join(f"seed {s} aimed {a}, in {r} [{fs}]" for s, a, r, fs in kills)
               + f"; the swap kill left the {'new' if swapped else 'previous'} site whole")
    print(LOG[-1])


def _committed_sweep_cards() -> dict[str, Path]:
    from test_workflows_sweep_job import committed_sweep_cards

    return committed_sweep_cards()


def test_sigkill_during_sweep_collect_files_nothing_or_everything(tmp_path: Path) -> None:
    cards = _committed_sweep_cards()
    ids = sorted(cards)[:4]
    harness = tmp_path / "harness"
    for part in ("corpora", "sweeps", "prompts"):
        shutil.copytree(ROOT / part, harness / part)
    first = harness / cards[ids[0]].relative_to(ROOT)  # already filed before: kept, listed as "already"
    first.parent.mkdir(parents=True)
    first.write_bytes(cards[ids[0]].read_bytes())
    downloaded = tmp_path / "downloaded"
    for cid in ids:
        (downloaded / f"sweep-card-{cid}").mkdir(parents=True)
        shutil.copy(cards[cid], downloaded / f"sweep-card-{cid}" / "card.json")
    collect = ["sweep", "collect", harness / SWEEP_REL, downloaded, "--root", harness]
    subs = harness / "submissions"
    before = snapshot(subs)

    reference = tmp_path / "reference"  # the run to completion, on a copy: what a finished collect publishes
    shutil.copytree(harness, reference / "harness", symlinks=True)
    shutil.copytree(downloaded, reference / "downloaded")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mtboard", "sweep", "collect", reference / "harness" / SWEEP_REL,
                             reference / "downloaded", "--root", reference / "harness"], cwd=ROOT, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    staged_at = None
    while proc.poll() is None:
        if staged_at is None and staging(reference / "harness", "submissions"):
            staged_at = time.perf_counter() - started
        time.sleep(0.001)
    total = time.perf_counter() - started
    rc, out, err = finish(proc)
    assert rc == 0 and "collected   3 new card(s), 1 already submitted" in out, out + err
    after = snapshot(reference / "harness" / "submissions")
    files = lambda snap: sorted(k for k, v in snap.items() if v != "dir")  # noqa: E731
    assert staged_at is not None and len(files(after)) == len(files(before)) + 3

    outcomes = []
    for seed in range(3):
        rng = random.Random(seed)
        proc = mtboard(*collect)
        if seed < 2:  # while the cards are being filed into the staging copy
            killed = kill_when(proc, lambda: bool(staging(harness, "submissions")),
                               rng.uniform(0, 0.5) * (total - staged_at))
            where = "filing"
        else:  # anywhere in the run (start-up, validation of every card, filing)
            killed = kill_at(proc, time.perf_counter(), rng.uniform(0.2, 0.8) * total)
            where = "anywhere"
        if not killed:
            finish(proc)
        now = snapshot(subs)
        assert now in (before, after), f"seed {seed}: submissions/ is neither the old nor the new folder"
        outcomes.append(f"seed {seed} {where}: {'killed' if killed else 'finished'}, "
                        f"{'old' if now == before else 'new'} folder")
        if now == after:  # published just before the kill: start again from the previous state
            shutil.rmtree(subs)
            first.parent.mkdir(parents=True)
            first.write_bytes(cards[ids[0]].read_bytes())
    rc, out, err = finish(mtboard(*collect))
    assert rc == 0, out + err
    assert snapshot(subs) == after and staging(harness, "submissions") == []
    assert not list(harness.glob(".submissions.mtboard-staging-*"))
    LOG.append(f"sweep collect: reference {total:.1f}s (staging from {staged_at:.1f}s); " + "; ".join(outcomes))
    print(LOG[-1])


def _kill_file_writer(tmp_path: Path, name: str, args: list, dest: Path, ref_dest: Path, ref_args: list,
                      seeds: int = 2) -> None:
    """The kill test of a command that writes one file ``dest`` atomically: after each kill ``dest`` holds its old
    bytes or the whole new file; the next run succeeds and leaves no temp file beside it."""
    old = b"the previous file\n"
    dest.write_bytes(old)
    started = time.perf_counter()
    rc, out, err = finish(mtboard(*ref_args))
    total = time.perf_counter() - started
    assert rc == 0, out + err
    new = ref_dest.read_bytes()
    outcomes = []
    for seed in range(seeds):
        rng = random.Random(seed)
        proc = mtboard(*args)
        if seed == 0:  # the moment the temp file appears: inside the write
            killed = kill_when(proc, lambda: bool(temps(dest.parent, dest.name)), 0)
        else:
            killed = kill_at(proc, time.perf_counter(), rng.uniform(0.3, 1.0) * total)
        if not killed:
            finish(proc)
        got = dest.read_bytes()
        assert got in (old, new), f"{name} seed {seed}: {dest.name} is neither the old nor the new file"
        outcomes.append(f"seed {seed}: {'killed' if killed else 'finished'}, {'old' if got == old else 'new'} file"
                        + (f", {len(temps(dest.parent, dest.name))} temp file(s) left" if killed else ""))
        dest.write_bytes(old)
    rc, out, err = finish(mtboard(*args))
    assert rc == 0, out + err
    assert dest.read_bytes() == new and temps(dest.parent, dest.name) == []
    LOG.append(f"{name}: reference {total:.1f}s; " + "; ".join(outcomes))
    print(LOG[-1])


def test_sigkill_during_rescore_keeps_the_previous_card(tmp_path: Path) -> None:
    dest, ref = tmp_path / "out" / "rescored.json", tmp_path / "ref.json"
    dest.parent.mkdir()
    _kill_file_writer(tmp_path, "rescore", ["rescore", CARD, "--out", dest, "--corpora", ROOT / "corpora"], dest, ref,
                      ["rescore", CARD, "--out", ref, "--corpora", ROOT / "corpora"])


def test_sigkill_during_review_sample_keeps_the_previous_sheet(tmp_path: Path) -> None:
    dest, ref = tmp_path / "out" / "sheet.yaml", tmp_path / "ref.yaml"
    dest.parent.mkdir()
    _kill_file_writer(tmp_path, "review sample", ["review", "sample", CARD, "--out", dest], dest, ref,
                      ["review", "sample", CARD, "--out", ref])


def test_sigkill_during_submit_leaves_no_card_or_the_card_with_its_body(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    other = ROOT / "submissions" / "mtb-en-es-dev" / "baseline-empty__baseline__9098cb401d85.json"
    existing = repo / other.relative_to(ROOT)
    existing.parent.mkdir(parents=True)
    existing.write_bytes(other.read_bytes())
    src = tmp_path / "work" / CARD.name
    src.parent.mkdir()
    src.write_bytes(CARD.read_bytes())
    body = src.parent / "pr-body-32e6f8fa41bf.md"
    dest = repo / CARD.relative_to(ROOT)
    submit = ["submit", src, "--root", repo, "--corpora", ROOT / "corpora"]
    before = snapshot(repo)
    started = time.perf_counter()
    rc, out, err = finish(mtboard(*submit))
    total = time.perf_counter() - started
    assert rc == 0, out + err
    after, body_bytes = snapshot(repo), body.read_bytes()
    assert dest.read_bytes() == CARD.read_bytes()
    outcomes = []
    for seed in range(3):
        if dest.exists():  # start again from the previous state
            dest.unlink()
            body.unlink()
        rng = random.Random(seed)
        proc = mtboard(*submit)
        if seed == 0:  # inside the card's write (the body file is written before it)
            killed = kill_when(proc, lambda: bool(temps(dest.parent, dest.name)), 0)
        elif seed == 1:  # inside the body file's write
            killed = kill_when(proc, lambda: bool(temps(body.parent, body.name)), 0)
        else:
            killed = kill_at(proc, time.perf_counter(), rng.uniform(0.3, 1.0) * total)
        if not killed:
            finish(proc)
        now = {k: v for k, v in snapshot(repo).items() if not re.search(r"/\.[^/]+\.tmp$", k)}
        assert now in (before, after), f"seed {seed}: submissions/ is neither the old nor the new state"
        if now == after:
            assert body.read_bytes() == body_bytes  # never a card without its body file
            rc, out, err = finish(mtboard(*submit))  # the card is in place: the next run says so
            assert rc == 1 and "already submitted as submissions/mtb-en-es-dev/" in err, err
        outcomes.append(f"seed {seed}: {'killed' if killed else 'finished'} with "
                        f"{'no card' if now == before else 'the card and its body'}")
    if dest.exists():
        dest.unlink()
        body.unlink()
    # the next run after the kills (their temp files still there) files the card and leaves nothing else
    rc, out, err = finish(mtboard(*submit))
    assert rc == 0, out + err
    assert snapshot(repo) == after and body.read_bytes() == body_bytes
    assert sorted(p.name for p in src.parent.iterdir()) == sorted([src.name, body.name])
    LOG.append(f"submit: reference {total:.1f}s; " + "; ".join(outcomes))
    print(LOG[-1])

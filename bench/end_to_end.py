"""End to end: ``mtboard run`` with Apertium against the peer harness ``mt-eval-harness`` 0.4.0 on the same 355
entries, side by side in one process tree (issue 35 item 5; acceptance: CPU ratio ≥ 60× with a cold semantic cache,
≥ 100× warm).

What runs, each as a child process (CPU time = ``resource.getrusage`` of the children, which includes every
grandchild they waited for — the ``apertium`` pipelines — plus this process's own; wall time by ``perf_counter``):

* **mtboard cold**: ``python -m mtboard run corpora/mtb-en-es-dev.json --method apertium:eng-spa`` (the
  ``development`` segment: 355 entries) with ``MTBOARD_SEMANTIC_CACHE`` pointing at a new, empty SQLite file, so every
  text is embedded (docs/environment.md);
* **mtboard warm**: the same command in a fresh work directory with that cache file now filled;
* **peer** (when ``mt_eval_harness`` is importable from ``--peer-path`` or this interpreter): ``python -m
  mt_eval_harness run --method apertium --no-cache`` on the same 355 entries (sources and references copied into its
  corpus format). Its Apertium method calls an APy service (``GET /translate?langpair=…&q=…``, one text per request);
  there is none here, so this script serves that endpoint on loopback (``--serve-apy``, started and stopped inside
  the peer's measurement, its CPU counted on the peer's side) and translates each request with the same local
  ``apertium -f txt eng-spa`` program mtboard runs (``-u`` for the peer's ``markUnknown=no``). The peer's language
  cards come from a folder written here (English and Spanish: code, name, ISO 639-1) with
  ``MT_EVAL_NO_REMOTE_REGISTRY=1``: nothing leaves the machine.

``--baseline-root DIR`` also times another mtboard checkout (e.g. the main branch before a change) in the same run, so
before → after is read from one table. ``--repeat N`` runs each mtboard step N times and keeps the fastest CPU.

**Bytecode.** Each side runs from compiled bytecode, as an installed package does (``pip install`` compiles every
module; the peer's ``/tmp/peer`` holds its ``__pycache__``). mtboard runs from a checkout, where a shell with
``PYTHONDONTWRITEBYTECODE=1`` (this machine's, for one) makes Python compile its ~100 modules from source in every
process — 0.35–0.45 s of CPU a run (``builtins.compile`` under cProfile) that the peer never pays. So each checkout
first makes one untimed warm-up run (a cold one, with a cache file of its own) with ``PYTHONPYCACHEPREFIX`` set to
a folder in the bench's temporary directory (the checkout itself is not written to), and every timed run reads its
bytecode from there. ``--source`` times the old way (every run compiles from source, no warm-up), to compare.

One command (the peer installed with ``pip install --target /tmp/peer mt-eval-harness==0.4.0``)::

    PYTHONPATH=. .venv/bin/python bench/end_to_end.py --peer-path /tmp/peer

Without the peer it prints mtboard's figures and says the peer is missing. Exit status 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpora" / "mtb-en-es-dev.json"
METHOD = "apertium:eng-spa"
MODE = "eng-spa"
SEGMENT = "development"
PEER_VERSION = "0.4.0"
TARGET_COLD, TARGET_WARM = 60.0, 100.0
ISO3 = {"en": "eng", "es": "spa"}


@dataclass
class Timing:
    name: str
    cpu_s: float
    wall_s: float
    ok: bool
    note: str = ""


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def _timed(name: str, fn) -> Timing:
    c0, w0 = _cpu(), time.perf_counter()
    ok, note = fn()
    return Timing(name, _cpu() - c0, time.perf_counter() - w0, ok, note)


def mtboard_step(root: Path, cache: Path, work: Path, tag: str, pycache: Path | None = None) -> tuple[bool, str]:
    """One ``mtboard run`` of the 355 entries; ``pycache``: the ``PYTHONPYCACHEPREFIX`` folder its bytecode is read
    from and written to (None: the caller's environment, e.g. compiling from source under
    ``PYTHONDONTWRITEBYTECODE``)."""
    env = dict(os.environ, PYTHONPATH=str(root), MTBOARD_SEMANTIC_CACHE=str(cache))
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    proc = subprocess.run([sys.executable, "-m", "mtboard", "run", str(CORPUS), "--method", METHOD,
                           "--work-dir", str(work / f"wd-{tag}"), "--out", str(work / f"card-{tag}.json")],
                          cwd=root, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}"
    card = json.loads((work / f"card-{tag}.json").read_text(encoding="utf-8"))
    return True, f"{len(card['results'])} entries, chrF++ {card['scores']['chrf_plus_plus']:.2f}"


def measure_mtboard(root: Path, label: str, work: Path, repeat: int, bytecode: bool = True) -> list[Timing]:
    """Cold then warm, ``repeat`` times each (a fresh cache file for every cold run); the fastest CPU of each.
    ``bytecode``: first one untimed warm-up run that writes every module's bytecode under the bench's temporary
    folder, which the timed runs then read (module docstring); False: every run compiles from source."""
    pycache = work / f"pycache-{label}" if bytecode else None
    if pycache is not None:
        ok, note = mtboard_step(root, work / f"{label}-warmup-semantic.sqlite3", work, f"{label}-warmup", pycache)
        print(f"| {label} warm-up (untimed: writes the bytecode) | | | {note if ok else 'FAILED ' + note} |",
              flush=True)
    best: dict[str, Timing] = {}
    for i in range(repeat):
        cache = work / f"{label}-{i}-semantic.sqlite3"
        for kind in ("cold", "warm"):
            t = _timed(f"{label} {kind}", lambda: mtboard_step(root, cache, work, f"{label}-{kind}-{i}", pycache))
            if kind not in best or (t.ok and t.cpu_s < best[kind].cpu_s):
                best[kind] = t
    return [best["cold"], best["warm"]]


# -- the peer ---------------------------------------------------------------------------------------------------------


def find_peer(peer_path: str | None) -> str | None:
    """The folder to put on the peer's PYTHONPATH ("" for this interpreter's own packages), or None when absent."""
    if peer_path:
        return peer_path if (Path(peer_path) / "mt_eval_harness").is_dir() else None
    return "" if importlib.util.find_spec("mt_eval_harness") is not None else None


def peer_version(path: str) -> str:
    code = "import importlib.metadata as m; print(m.version('mt-eval-harness'))"
    env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    return out.stdout.strip() or "?"


def serve_apy(port: int) -> None:
    """APy's ``/translate`` on 127.0.0.1:port, one ``apertium`` process per request (the peer's job)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: PLC0415
    from urllib.parse import parse_qs, urlsplit  # noqa: PLC0415

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            url = urlsplit(self.path)
            q = parse_qs(url.query)
            if url.path.rstrip("/").endswith("/translate") and "q" in q and "langpair" in q:
                src, _, tgt = q["langpair"][0].partition("|")
                mode = f"{ISO3.get(src, src)}-{ISO3.get(tgt, tgt)}"
                unknown = ["-u"] if q.get("markUnknown", ["yes"])[0] == "no" else []
                proc = subprocess.run(["apertium", "-f", "txt", *unknown, mode], input=q["q"][0].encode("utf-8"),
                                      capture_output=True, check=False)
                status = 200 if proc.returncode == 0 else 500
                payload = {"responseData": {"translatedText": proc.stdout.decode("utf-8", "replace").rstrip("\n")},
                           "responseStatus": status}
            else:
                status, payload = 404, {"message": "not found"}
            body = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peer_inputs(work: Path) -> tuple[Path, Path, int]:
    """The peer's corpus (the segment's 355 entries: id, source, reference) and its two language cards."""
    doc = json.loads(CORPUS.read_text(encoding="utf-8"))
    ds = doc["dataset"]
    entries = [{"id": e["id"], "source": e["source"], "reference": e["reference"]}
               for e in doc["entries"] if e["segment"] == SEGMENT]
    corpus = work / "peer-corpus.json"
    corpus.write_text(json.dumps({"dataset": {"id": ds["id"], "language_pair": {
        "source": ISO3[ds["source_language"]], "target": ISO3[ds["target_language"]]}}, "entries": entries},
        ensure_ascii=False), encoding="utf-8")
    cards = work / "peer-cards"
    cards.mkdir(exist_ok=True)
    for code, name, iso1 in (("eng", "English", "en"), ("spa", "Spanish", "es")):
        (cards / f"{code}.json").write_text(json.dumps({"code": code, "name": name, "iso639_1": iso1}),
                                            encoding="utf-8")
    return corpus, cards, len(entries)


def peer_step(path: str, work: Path) -> tuple[bool, str]:
    corpus, cards, n = peer_inputs(work)
    port = _free_port()
    shim = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve-apy", str(port)])
    try:
        for _ in range(100):  # until the port answers (≤ 10 s)
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        env = dict(os.environ, APERTIUM_API_URL=f"http://127.0.0.1:{port}", MT_EVAL_CARDS_DIR=str(cards),
                   MT_EVAL_NO_REMOTE_REGISTRY="1", HOME=str(work / "peer-home"))
        if path:
            env["PYTHONPATH"] = path
        out = work / "peer-out"
        proc = subprocess.run([sys.executable, "-m", "mt_eval_harness", "run", "--non-interactive", "--corpus",
                               str(corpus), "--method", "apertium", "--no-cache", "-o", str(out), "-y"],
                              cwd=work, env=env, capture_output=True, text=True, check=False)
    finally:
        shim.terminate()
        shim.wait()
    if proc.returncode != 0:
        return False, f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}"
    reports = sorted(out.glob("*_report.json"))
    return True, f"{n} entries, report {reports[-1].name if reports else 'missing'}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer-path", help="folder holding mt_eval_harness (pip install --target); default: this "
                                        "interpreter's packages")
    ap.add_argument("--baseline-root", type=Path, help="another mtboard checkout to time too (before → after)")
    ap.add_argument("--repeat", type=int, default=1, help="mtboard runs per step (fastest CPU kept; default 1)")
    ap.add_argument("--no-peer", action="store_true", help="skip the peer even when installed")
    ap.add_argument("--source", action="store_true", help="mtboard compiles its modules from source in every run "
                                                          "(no bytecode warm-up; see the module docstring)")
    ap.add_argument("--serve-apy", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_apy:
        serve_apy(args.serve_apy)
        return
    if shutil.which("apertium") is None:
        sys.exit("apertium is not installed (apt-get install apertium apertium-eng-spa)")
    with tempfile.TemporaryDirectory(prefix="mtboard-e2e-") as tmp:
        work = Path(tmp)
        print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        print(f"mtboard runs from {'source (compiled in every run)' if args.source else 'bytecode (warm-up first)'}",
              flush=True)
        print("| step | CPU s | wall s | note |\n| --- | --- | --- | --- |", flush=True)

        def show(new: list[Timing]) -> list[Timing]:
            for r in new:  # as each step ends: a peer that runs long leaves mtboard's figures printed
                print(f"| {r.name} | {r.cpu_s:.2f} | {r.wall_s:.2f} | {r.note if r.ok else 'FAILED ' + r.note} |",
                      flush=True)
            return new

        rows = show(measure_mtboard(ROOT, "mtboard", work, max(1, args.repeat), not args.source))
        if args.baseline_root:
            rows += show(measure_mtboard(args.baseline_root.resolve(), "baseline", work, max(1, args.repeat),
                                         not args.source))
        peer = None if args.no_peer else find_peer(args.peer_path)
        if peer is not None:
            version = peer_version(peer)
            rows += show([_timed(f"peer mt-eval-harness {version}", lambda: peer_step(peer, work))])
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
        if args.no_peer:
            print("peer: skipped (--no-peer)")
            return
        if peer is None:
            print("peer: mt-eval-harness is not installed — only mtboard's figures (install it with "
                  f"`pip install --target /tmp/peer mt-eval-harness=={PEER_VERSION}` and pass --peer-path /tmp/peer)")
            return
        p = rows[-1]
        if version != PEER_VERSION:
            print(f"note: the peer is {version}, the issue's figures are for {PEER_VERSION}")
        if not p.ok:
            print("peer: the run failed, no ratio")
            return
        for r in rows[:-1]:
            if r.ok:
                target = TARGET_COLD if r.name.endswith("cold") else TARGET_WARM
                cpu = p.cpu_s / r.cpu_s
                print(f"ratio peer / {r.name}: CPU {cpu:.1f}× (target ≥ {target:g}×: "
                      f"{'met' if cpu >= target else 'NOT met'}), wall {p.wall_s / r.wall_s:.1f}×")


if __name__ == "__main__":
    main()

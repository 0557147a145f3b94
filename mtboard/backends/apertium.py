"""Apertium rule-based MT backend: ``apertium:MODE`` (issue 3, backend 3; method class ``pipeline``).

``MODE`` is a translation direction exactly as ``apertium -l`` lists it (``eng-spa``, ``spa-eng``,
``eng-cat_valencia`` …). Two channels:

* **Local process** (default): many segments per ``apertium -f txt MODE`` call. Segments are split into paragraph
  *units* at their own blank lines, units are joined with one blank line (``"\\n\\n"``), and the output is split at
  blank lines again. Apertium keeps a blank line as a format block, so the unit count is preserved; the count is
  verified for every call and a batch whose count does not match (or whose process fails) is bisected, so only the
  unit that breaks the separator ends up alone in a process. One process per sentence would be ~100× slower
  (``../shared/corpus-sources.md``: ≈4 segments/s against ≈500/s batched on 2 cores).
* **APY** when ``APERTIUM_APY_URL`` is set: one HTTP ``/translate`` request per segment through
  :func:`mtboard.llm.get_json` (only ``mtboard.llm`` imports httpx). mtboard never starts APY itself (it binds all
  interfaces).

Unknown-word marks (``*word`` unknown, ``#word`` generation error, ``@word`` transfer error) are kept in
``raw_predicted``; scoring strips them (``strip_unknown_marks = True`` tells the runner so).

Measured caveat (Apertium 3.8.3, apertium-eng-spa 0.8.1): the part-of-speech tagger (``apertium-tagger -g``) keeps
state for the life of its process, so a segment's output can depend on what was translated before it in the same
stream: after one sentence such as "If a target was included, the return value", later segments choose differently
("most" → "más" instead of "la mayoría de"). On 60 sampled Python-documentation paragraphs in a 500-segment batch,
6 differed from a one-process-per-segment translation; a blank-line sentinel or null-flush mode (``-z``, which does
reset transfer variables) does not change this, because the tagger state survives both. APY keeps one pipeline
per pair, so it behaves the same way. Outputs are deterministic for the same segments in the same order (the runner
sends entries in corpus order); exact standalone output would need one process per segment (~100× slower).

Doctor facts: :func:`installed_modes`, :func:`engine_version`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field

from mtboard.backends.base import Backend, Options, TranslateRequest
from mtboard.core import debian
from mtboard.core.decoding import answer_text, clean, decode_bytes
from mtboard.core.errors import BackendError, ConfigError
from mtboard.score.fst import ISO639_3
from mtboard.core.languages import primary
from mtboard.inputs.runspec import BackendContext, MethodSpec, endpoint_host_sha256
from mtboard.core.schema import BackendFacts, ErrorKind, MethodClass, TranslationRecord

APERTIUM = "apertium"
MODES_DIR = "/usr/share/apertium/modes"
APY_ENV = "APERTIUM_APY_URL"

# A blank line: a newline, then one or more lines holding only whitespace (spaces, tabs, \r, …).
_PARAGRAPH_SEP = re.compile(r"\n(?:[^\S\n]*\n)+")
_MODE_RE = re.compile(r"^[A-Za-z0-9_]+(-[A-Za-z0-9_]+)+$")


def _apertium_binary() -> str | None:
    return shutil.which(APERTIUM)


def installed_modes() -> list[str]:
    """Translation directions of the local Apertium install, as ``apertium -l`` prints them (sorted).

    Returns [] when the ``apertium`` binary is not on PATH. Raises BackendError when ``apertium -l`` fails.
    """
    exe = _apertium_binary()
    if exe is None:
        return []
    proc = subprocess.run([exe, "-l"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise BackendError(f"'apertium -l' exited with {proc.returncode}: {proc.stderr.strip()[:200]}",
                           where="apertium", fix="reinstall apertium (apt-get install apertium)")
    return sorted(line.strip() for line in proc.stdout.splitlines() if line.strip())


def mode_file_present(mode: str, exe: str) -> bool:
    """Whether ``MODE.mode`` is where the ``apertium`` program ``exe`` reads it: ``$APERTIUM_DATADIR/modes`` when
    that variable is set (the script's own variable), else ``PREFIX/share/apertium/modes`` for a program at
    ``PREFIX/bin/apertium`` (symbolic links resolved: ``/usr/share/apertium/modes`` for ``/usr/bin/apertium``). A file
    check, so :meth:`ApertiumBackend.start` accepts an installed mode without starting ``apertium -l`` (a ``bash``
    script and a ``basename`` per installed mode: ~0.04 s of CPU and ~0.06 s wall a run; issue 35 item 4). False
    means "not known": the caller asks :func:`installed_modes`."""
    data = os.environ.get("APERTIUM_DATADIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.realpath(exe))), "share", "apertium")
    return os.path.isfile(os.path.join(data, "modes", f"{mode}.mode"))


def engine_version(mode: str) -> str | None:
    """``"apertium 3.8.3-1+b2; apertium-eng-spa 0.8.1-2"`` — Debian package versions of the engine and of the
    language pair that provides ``mode`` (:mod:`mtboard.core.debian`: the package owning the mode file and the two
    versions). Falls back to ``apertium -V`` off Debian; None if unknown.

    Read once per process for a mode and the ``apertium`` program on PATH (what the answer depends on; issue 35
    item 4: a run asked twice, three ``dpkg-query`` calls each), and each ``dpkg-query`` question once per process
    whoever asks it (the FST and morphology scorers ask for the same packages): installing a package mid-process is
    not seen."""
    return _engine_version(mode, _apertium_binary())


@functools.lru_cache(maxsize=64)
def _engine_version(mode: str, exe: str | None) -> str | None:
    parts = []
    core = debian.package_version("apertium")
    if core:
        parts.append(f"apertium {core}")
    else:
        if exe:
            try:
                out = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                out = ""
            if out:
                parts.append(out)
    pkg = debian.owning_package(os.path.join(MODES_DIR, f"{mode}.mode"))
    if pkg:
        ver = debian.package_version(pkg)
        parts.append(f"{pkg} {ver}" if ver else pkg)
    return "; ".join(parts) or None


# --------------------------------------------------------------------------------------------------------------------
# Segment ⇄ unit mapping


@dataclass
class _Unit:
    """One paragraph of one segment: ``text`` has no blank line and no leading/trailing whitespace."""

    seg: int
    text: str


@dataclass
class _Layout:
    """How to rebuild a segment: ``parts`` are literal strings or unit indices (ints)."""

    parts: list[str | int]


def split_units(sources: list[str]) -> tuple[list[_Unit], list[_Layout]]:
    """Split each source at its blank lines into units; whitespace (including the blank lines) stays literal.

    ``"  A\\n\\nB\\n"`` → units ``A``, ``B`` and layout ``["  ", 0, "\\n\\n", 1, "\\n"]``. Whitespace-only sources
    produce no unit.
    """
    units: list[_Unit] = []
    layouts: list[_Layout] = []
    for seg, src in enumerate(sources):
        parts: list[str | int] = []
        pos = 0
        pieces: list[tuple[str, str]] = []  # (text, following separator)
        for m in _PARAGRAPH_SEP.finditer(src):
            pieces.append((src[pos:m.start()], m.group(0)))
            pos = m.end()
        pieces.append((src[pos:], ""))
        for text, sep in pieces:
            stripped = text.strip()
            if stripped:
                lead = text[: len(text) - len(text.lstrip())]
                trail = text[len(text.rstrip()):]
                if lead:
                    parts.append(lead)
                parts.append(len(units))
                units.append(_Unit(seg, stripped))
                if trail:
                    parts.append(trail)
            elif text:
                parts.append(text)
            if sep:
                parts.append(sep)
        layouts.append(_Layout(parts))
    return units, layouts


def join_units(layout: _Layout, outputs: list[str | None]) -> str | None:
    """Rebuild one segment from translated units (None if any of its units failed)."""
    out = []
    for part in layout.parts:
        if isinstance(part, int):
            text = outputs[part]
            if text is None:
                return None
            out.append(text)
        else:
            out.append(part)
    return "".join(out)


# --------------------------------------------------------------------------------------------------------------------
# Backend


class ApertiumOptions(Options):
    """``--backend-opt`` settings of the apertium backend (none of them changes an output)."""

    timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    """Per-process timeout, seconds: ``timeout_s + 0.05 s × units`` per call (per request with APY)."""
    apy_concurrency: int = Field(4, ge=1)
    """Parallel APY requests (``$APERTIUM_APY_URL``)."""


class ApertiumBackend(Backend):
    """``apertium:MODE`` — see the module docstring.

    Args:
        method: parsed method spec (``method.model`` is the mode).
        options: :class:`ApertiumOptions`.
        max_units: most paragraph units per process call (default 1000). Not a ``--backend-opt``: the tagger's
            state crosses units in one process, so batching can change outputs (module docstring).
        max_chars: most characters per process call (default 200,000; same caveat).
        apy_url: APY base URL; default ``$APERTIUM_APY_URL``; ``""`` forces the local process.

    Raises (from :meth:`start`): ConfigError for an unknown mode (listing the installed modes), BackendError when
    Apertium is not installed.
    """

    name: ClassVar[str] = "apertium"
    method_class: ClassVar[MethodClass] = MethodClass.pipeline
    Options: ClassVar[type[Options]] = ApertiumOptions
    prompt_format: ClassVar[Literal["raw"] | None] = "raw"
    """Takes the raw source (no prompt template)."""
    strip_unknown_marks: ClassVar[bool] = True
    """Scoring strips Apertium's ``*``/``#``/``@`` marks from ``predicted``; ``raw_predicted`` keeps them."""
    default_concurrency: ClassVar[int] = 2
    """Apertium batches in flight (each is a pipeline of ~10 processes)."""
    writes_raw: ClassVar[bool] = True
    """One raw line per entry through :attr:`raw_sink` (:meth:`_keep_raw`): the entry's output as the process (or
    APY) sent it, bytes that are not UTF-8 kept as their ``surrogateescape`` escapes — ``raw_predicted`` is the
    repaired text (review 2 of issue 33, finding 6)."""
    preferred_batch_size: ClassVar[int] = 1000
    """Entries per :meth:`translate` call that use one process well (the runner may send more or fewer)."""

    def __init__(self, method: MethodSpec, context: BackendContext | None = None, options: Options | None = None, *,
                 max_units: int = 1000, max_chars: int = 200_000, apy_url: str | None = None):
        super().__init__(method, context, options)
        self.mode = method.model
        self.max_units = max(1, max_units)
        self.max_chars = max(1, max_chars)
        self.timeout_s = float(self.options.timeout_s)  # type: ignore[attr-defined]
        self.apy_url = self.endpoint_url(None) if apy_url is None else (apy_url.rstrip("/") or None)
        self.apy_concurrency = int(self.options.apy_concurrency)  # type: ignore[attr-defined]
        self.process_calls = 0
        """Number of apertium processes started (batching diagnostics)."""
        self._exe: str | None = None
        self._started = False

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    @classmethod
    def check_languages(cls, model: str, source_language: str, target_language: str) -> None:
        """Refuse a mode whose language pair is not the dataset's (``eng-spa`` on an EN→FR corpus).

        The mode's three-letter codes (before any ``_variant``) are compared with the dataset's BCP 47 primary
        subtags through :data:`mtboard.score.fst.ISO639_3`; pairs outside that table are not judged.
        Raises: ConfigError naming both pairs.
        """
        parts = (model or "").split("_")[0].split("-")
        if len(parts) != 2:
            return
        want = [ISO639_3.get(primary(lang)) for lang in (source_language, target_language)]
        for side, code, expected in zip(("source", "target"), parts, want):
            if expected is not None and code != expected:
                raise ConfigError(f"Apertium mode {model!r} translates {parts[0]}→{parts[1]}, but the dataset's "
                                  f"{side} language is {source_language if side == 'source' else target_language!r}",
                                  field="--method", fix=f"use a mode for {want[0] or source_language}→"
                                                        f"{want[1] or target_language} (apertium -l lists them)")

    def start(self) -> None:
        if not _MODE_RE.match(self.mode or ""):
            raise ConfigError(f"{self.mode!r} is not an Apertium mode name", field="--method",
                              fix="write apertium:SRC-TGT as 'apertium -l' lists it, e.g. apertium:eng-spa")
        if self.apy_url:
            parts = urlsplit(self.apy_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"{APY_ENV} is not an http(s) URL", field=APY_ENV,
                                  fix="set it like http://127.0.0.1:2737 or unset it to use the local apertium")
            self._started = True
            return
        self._exe = _apertium_binary()
        if self._exe is None:
            raise BackendError("the 'apertium' program is not on PATH", where="apertium",
                               fix=f"apt-get install apertium apertium-{self.mode.split('_')[0]} "
                                   f"(or set {APY_ENV} to an APY service)")
        if mode_file_present(self.mode, self._exe):  # installed: no `apertium -l` process (issue 35 item 4)
            self._started = True
            return
        modes = installed_modes()
        if self.mode not in modes:
            listed = ", ".join(modes) if modes else "none"
            raise ConfigError(f"Apertium mode {self.mode!r} is not installed; installed modes: {listed}",
                              field="--method", fix="pick one of the installed modes or apt-get install the pair "
                                                    "package (apt-cache search apertium)")
        self._started = True

    @classmethod
    def endpoint_url(cls, base_url: str | None) -> str | None:
        """``$APERTIUM_APY_URL`` when set (an APY service), else None (the local ``apertium`` program)."""
        return os.environ.get(APY_ENV, "").rstrip("/") or None

    def close(self) -> None:
        self._started = False

    def describe(self) -> BackendFacts:
        """api_provider (``apertium`` or ``apertium-apy``), engine_version (dpkg versions, local only),
        endpoint_host_sha256 (APY only), model_id (the mode)."""
        if self.apy_url:
            return BackendFacts(api_provider="apertium-apy", model_id=self.mode,
                                endpoint_host_sha256=endpoint_host_sha256(self.apy_url))
        return BackendFacts(api_provider="apertium", model_id=self.mode, engine_version=engine_version(self.mode))

    # -- translation -------------------------------------------------------------------------------------------------

    async def translate(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        """One record per request, same order. Per-entry failures are recorded (kind ``backend`` or, for APY,
        ``transport``), never raised."""
        if not self._started:
            self.start()
        if not requests:
            return []
        t0, t_start = time.perf_counter(), time.time()
        if self.apy_url:
            return await self._translate_apy(requests)
        units, layouts = split_units([r.source for r in requests])
        outputs: list[str | None] = [None] * len(units)
        errors: dict[int, str] = {}
        for lo, hi in self._chunks(units):
            await self._run_range(units, lo, hi, outputs, errors)
        batch_s = time.perf_counter() - t0  # one process call for the whole batch: no per-entry latency exists
        seg_errors_by: dict[int, list[str]] = {}
        for u, reason in sorted(errors.items()):
            seg_errors_by.setdefault(units[u].seg, []).append(reason)
        records = []
        for i, req in enumerate(requests):
            received = text = join_units(layouts[i], outputs)
            repairs = 0
            if text is not None:  # stdout kept its undecodable bytes escaped until here: the one text boundary
                text, repairs = answer_text((text,))
            seg_errors = seg_errors_by.get(i, [])
            self._keep_raw(req, t_start, received, seg_errors[0] if seg_errors else None)
            records.append(TranslationRecord(
                entry_id=req.entry_id, raw_predicted=text, latency_s=None, batch_latency_s=batch_s, model_id=self.mode,
                error=seg_errors[0] if seg_errors else None,
                error_kind=ErrorKind.backend if seg_errors else None, text_repairs=repairs))
        return records

    def _keep_raw(self, req: TranslateRequest, t_start: float, received: object, error: str | None,
                  status: int | None = None) -> None:
        """Hand the runner the entry's raw line (:attr:`raw_sink`; nothing when no runner listens): ``request``
        is the source sent, ``response`` the entry's output as received — stdout decoded with ``surrogateescape``
        (:func:`mtboard.core.decoding.decode_bytes`), so ``json.loads(line)["response"].encode("utf-8",
        "surrogateescape")`` gives the bytes Apertium printed for it (layout as :func:`join_units` rebuilds it);
        APY: its ``translatedText`` as parsed (JSON-escaped lone surrogates kept), or the parsed error body (None
        when not JSON). ``error`` is our one-line reason (already text)."""
        if self.raw_sink is None:
            return
        line = {"entry_id": req.entry_id, "run_index": req.run_index, "t_start": t_start, "t_end": time.time(),
                "endpoint": "apy" if self.apy_url else "apertium", "request": {"source": req.source},
                "response": received, "error": error}
        if status is not None:
            line["status"] = status
        self.raw_sink(line)

    def _chunks(self, units: list[_Unit]) -> list[tuple[int, int]]:
        chunks, lo, chars = [], 0, 0
        for i, unit in enumerate(units):
            if i > lo and (i - lo >= self.max_units or chars + len(unit.text) > self.max_chars):
                chunks.append((lo, i))
                lo, chars = i, 0
            chars += len(unit.text) + 2
        if lo < len(units):
            chunks.append((lo, len(units)))
        return chunks

    async def _run_range(self, units: list[_Unit], lo: int, hi: int, outputs: list[str | None],
                         errors: dict[int, str]) -> None:
        """Translate units[lo:hi] in one process; bisect on a count mismatch or a failed process."""
        texts = [u.text for u in units[lo:hi]]
        ok, result = await self._call("\n\n".join(texts), len(texts))
        if ok:
            if len(texts) == 1:
                outputs[lo] = result.strip()
                return
            pieces = result.split("\n\n")
            # An empty piece for a non-empty unit means Apertium dropped text (it silently stops at bytes it cannot
            # decode, for one): treat it like a count mismatch so bisection isolates the unit.
            if len(pieces) == len(texts) and all(p.strip() for p in pieces):
                for k, piece in enumerate(pieces):
                    outputs[lo + k] = piece.strip()
                return
            reason = f"apertium returned {len(pieces)} paragraphs for {len(texts)}"
        else:
            reason = result
        if len(texts) == 1:
            errors[lo] = reason
            return
        mid = (lo + hi) // 2
        await self._run_range(units, lo, mid, outputs, errors)
        await self._run_range(units, mid, hi, outputs, errors)

    async def _call(self, text: str, n_units: int) -> tuple[bool, str]:
        """Run ``apertium -f txt MODE`` on ``text``; (True, stdout) or (False, one-line reason). stdout is decoded
        with ``surrogateescape`` (:func:`mtboard.core.decoding.decode_bytes`): bytes that are not UTF-8 stay escaped
        until :meth:`translate` passes each entry's text through :func:`~mtboard.core.decoding.answer_text`."""
        assert self._exe is not None
        self.process_calls += 1
        proc = await asyncio.create_subprocess_exec(
            self._exe, "-f", "txt", self.mode, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True)
        try:
            # Lone surrogates (valid in JSON, not in UTF-8) become U+FFFD-like "?" instead of bytes Apertium
            # would stop at.
            out, err = await asyncio.wait_for(proc.communicate(text.encode("utf-8", "replace")),
                                              timeout=self.timeout_s + 0.05 * n_units)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            return False, f"apertium timed out after {self.timeout_s + 0.05 * n_units:.0f} s"
        except BaseException:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            raise
        if proc.returncode != 0:
            msg = err.decode("utf-8", "replace").strip().replace("\n", " ")[:200]
            return False, f"apertium exited with {proc.returncode}: {msg}"
        return True, decode_bytes(out)

    async def _translate_apy(self, requests: list[TranslateRequest]) -> list[TranslationRecord]:
        from mtboard.llm import get_json  # noqa: PLC0415 - httpx only for an APY service, not the local program

        src, _, tgt = self.mode.partition("-")
        langpair = f"{src}|{tgt}"
        sem = asyncio.Semaphore(self.apy_concurrency)

        async def one(req: TranslateRequest) -> TranslationRecord:
            if not req.source.strip():
                return TranslationRecord(entry_id=req.entry_id, raw_predicted=req.source, latency_s=0.0,
                                         model_id=self.mode)
            async with sem:
                t0, t_start = time.perf_counter(), time.time()
                try:
                    status, body = await asyncio.to_thread(
                        get_json, f"{self.apy_url}/translate",
                        params={"langpair": langpair, "q": req.source, "markUnknown": "yes"},
                        timeout_s=self.timeout_s)
                except ConnectionError as exc:
                    error = clean(f"APY: {exc}"[:300])
                    self._keep_raw(req, t_start, None, error)
                    return TranslationRecord(entry_id=req.entry_id, raw_predicted=None, model_id=self.mode,
                                             latency_s=time.perf_counter() - t0, error=error,
                                             error_kind=ErrorKind.transport)
                latency = time.perf_counter() - t0
            text = None
            if isinstance(body, dict) and isinstance(body.get("responseData"), dict):
                text = body["responseData"].get("translatedText")
            if status == 200 and isinstance(text, str):
                self._keep_raw(req, t_start, text, None, status)
                text, repairs = answer_text((text,))  # a JSON-escaped lone surrogate becomes U+FFFD, counted
                return TranslationRecord(entry_id=req.entry_id, raw_predicted=text, latency_s=latency,
                                         model_id=self.mode, text_repairs=repairs)
            detail = body.get("explanation") or body.get("message") if isinstance(body, dict) else None
            detail = clean(detail) if isinstance(detail, str) else detail
            kind = ErrorKind.transport if status == 429 or status >= 500 or status == 0 else ErrorKind.backend
            error = clean(f"APY answered HTTP {status}: {detail or ''}"[:300])
            self._keep_raw(req, t_start, body, error, status)
            return TranslationRecord(entry_id=req.entry_id, raw_predicted=None, model_id=self.mode,
                                     latency_s=latency, error=error, error_kind=kind)

        return list(await asyncio.gather(*(one(r) for r in requests)))

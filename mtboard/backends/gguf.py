"""Local GGUF model backend: ``gguf:REPO@REVISION/FILE.gguf`` or ``gguf:PATH`` (issue 3, backend 2).

Run exactly as the JA→EN write-up does, one model at a time (``../shared/spec/screen-translator-bench-ja-en.txt``,
"Method"):

1. **Fit check** (:func:`fit_check`): file size (from the Hub's file metadata or the local cache, before anything is
   downloaded) + 1.8 GB headroom > free VRAM (pynvml) → :class:`~mtboard.core.errors.DeferredError`, nothing downloaded.
   No NVIDIA GPU (``NVMLError_LibraryNotFound``, no device) → CPU with a warning, and the same check against
   available RAM (``MemAvailable``).
2. **Pinned download** (:func:`resolve_model`): ``hf_hub_download(repo, file, revision=<40 hex>)``; then the file's
   SHA-256 is computed, checked against the Hub's LFS hash (the cache blob name) and recorded
   (``model_file_sha256``, ``model_revision``). ``gguf:PATH`` hashes the local file (optionally checked against
   ``model_sha256``).
3. **Server** (:class:`mtboard.backends.local.server.LocalServer`): llama-server or llama-cpp-python on a free loopback port,
   ``n_ctx`` 2048, GPU layers all/none, explicit thread count; always stopped.
4. **Canary** (:func:`canary_verdict`): 5 fixed lines must each produce a visible translation with the run's own
   prompt and settings, else :class:`~mtboard.core.errors.BackendError` with the outputs shown.
5. **Latency gate**: lines sent one at a time, each with 6 lines of history; median ≤ 2 s and p90 ≤ 3 s per line
   (configurable); recorded in the card as :class:`~mtboard.core.schema.LocalModelGate`; ``latency_gate=record``
   (default) records and warns, ``enforce`` aborts a failing model (the write-up's use), ``off`` skips it.

Then translation goes through the openai backend (:class:`~mtboard.backends.openai.OpenAIBackend`) pointed at the
server. Prompt-format sensitivity stays visible: Gemma 3 270M (a base model without chat template) fails the canary
with a chat prompt (llama-cpp-python falls back to a Llama-2 template and the model rambles in template markup) and
passes with the few-shot completion prompt (default for this backend).

Settings come from ``--backend-opt`` (:class:`GGUFOptions`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import statistics
import time
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Literal

from pydantic import Field

from mtboard.backends.local import sandbox, server as localserver
from mtboard.backends.base import Options, Rerun, TranslateRequest
from mtboard.backends.openai import OpenAIBackend
from mtboard.core.errors import BackendError, ConfigError, DeferredError, MtboardError
from mtboard.core.languages import primary
from mtboard.llm import LLMClient, LLMResult, serverinfo
from mtboard.backends.local.server import LLAMA_SERVER, LocalServer
from mtboard.inputs.runspec import BackendContext, MethodSpec, RunSpec
from mtboard.core.text import TEMPLATE_MARKUP
from mtboard.core.schema import BackendFacts, ErrorKind, LocalModelGate, MethodClass

log = logging.getLogger("mtboard.gguf")

GB = 1e9
HEADROOM_GB = 1.8
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HF_REF = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)@(?P<rev>[^/]*)/(?P<file>.+)$")

# Fixed lines, hand-written by the mtboard authors for the canary and the latency gate (not from any corpus).
CANARY_LINES: dict[str, list[str]] = {
    "en": [
        "Good morning, how are you today?",
        "The train leaves at seven o'clock.",
        "Please close the door when you leave.",
        "I lost my keys yesterday evening.",
        "This file cannot be opened.",
    ],
}
GATE_LINES: dict[str, list[str]] = {
    "en": [  # one short scene, in order; each gate line is sent with the lines before it as history
        "Excuse me, is this seat taken?",
        "No, please sit down.",
        "Thank you. The train is very full today.",
        "It is always like this on Fridays.",
        "Are you going all the way to the coast?",
        "Yes, I am visiting my sister.",
        "That sounds nice. Does she live near the sea?",
        "Her house is only five minutes from the beach.",
        "I have not seen the sea for years.",
        "You should come in the summer, the water is warm.",
        "Maybe I will. What is the town called?",
        "It is a small fishing village, you would not know it.",
        "Try me, I know this coast quite well.",
        "All right, it is called Port Saint Mary.",
        "I went there as a child with my parents!",
        "Then you know the old lighthouse on the hill.",
        "Of course. Is the little café still open?",
        "It closed last winter, sadly.",
    ],
}
_TEMPLATE_MARKUP = TEMPLATE_MARKUP  # the early gate of every prompted run uses the same list (mtboard.run.gate, mtboard.core.text)


class GGUFOptions(Options):
    """``--backend-opt`` settings of the gguf backend (values may arrive as strings from the CLI)."""

    # the ranges are the card's (method.local: LocalModelGate), so a value the card refuses is refused before the
    # model is started (issue 33 item 4)
    n_ctx: int = Field(2048, ge=0)
    """Context size (tokens) the server is started with (JA→EN write-up: ``-c 2048``)."""
    n_gpu_layers: int | None = Field(None, ge=-1)
    """Layers offloaded to the GPU; default 99 (all) with a GPU, 0 without."""
    n_threads: int | None = Field(None, ge=-1)
    """CPU threads; default all CPUs this process may use (llama-cpp-python's own default is half the cores)."""
    server: Literal["auto", "llama-server", "llama-cpp-python"] = "auto"
    """Which server runs the model: llama.cpp's ``llama-server``, llama-cpp-python's, or ``auto`` (the first
    installed, in that order)."""
    headroom_gb: float = HEADROOM_GB
    """Fit-check headroom on top of the file size (GB)."""
    canary: Literal["enforce", "record"] = "enforce"
    """``enforce`` (default, JA→EN write-up: a model whose canary fails is not run) or ``record`` (the failure and
    the canary outputs go into the card's ``method.local`` and the run goes on — for publishing a deliberately
    mismatched prompt format, e.g. a chat or zero-shot prompt on a base model, as a visible negative result)."""
    latency_gate: Literal["enforce", "record", "off"] = "record"
    """``record`` (default, as issue 3 asks: the result goes into the card and a failure is a warning), ``enforce``
    (a failing model is aborted, as in the JA→EN write-up, where the gate decides who goes on) or ``off``."""
    latency_median_s: float = 2.0
    """Latency-gate limit on the median per-line latency, seconds."""
    latency_p90_s: float = 3.0
    """Latency-gate limit on the 90th-percentile per-line latency, seconds."""
    gate_history: int = 6
    """History lines sent with each latency-gate line."""
    gate_lines: int = 12
    """Lines timed by the latency gate."""
    hf_cache_dir: str | None = Field(None, json_schema_extra={"machine_path": True})
    """Hugging Face cache folder (default: huggingface_hub's, i.e. ``HF_HUB_CACHE``)."""
    model_sha256: str | None = None
    """Expected SHA-256 of the GGUF file (checked when given)."""
    startup_timeout_s: float = 180.0
    """How long the server may take to load the model and answer, seconds."""
    seed: int | None = Field(default=None, ge=0)
    """Sampling seed sent with every request (llama.cpp / llama-cpp-python ``seed``; the request of replicate *r*
    gets ``seed + r``) and recorded in the card's ``method.sampling.seed``: with a temperature above 0 the answers
    are then a function of the prompt and the seed, so a re-run (``mtboard verify``) reproduces them. None
    (default): no seed is sent (the server's own seed sequence; not reproducible above temperature 0)."""
    sandbox: Literal["on", "off"] = "on"
    """``on`` (default): the server runs in :mod:`mtboard.backends.local.sandbox` (no network, empty environment, read-only files;
    issue 21) and the run stops when the sandbox is unavailable; ``off``: development only, with a warning and
    ``method.local.sandbox`` = :data:`mtboard.backends.local.sandbox.OFF_RECORD` in the card."""


# --------------------------------------------------------------------------------------------------------------------
# Model reference, size, fit check, download, hashing


@dataclass(frozen=True)
class ModelRef:
    """A parsed ``gguf:`` model: either a pinned Hub file (repo, revision, filename) or a local path."""

    text: str
    repo: str | None = None
    revision: str | None = None
    filename: str | None = None
    path: Path | None = None

    @property
    def is_hub(self) -> bool:
        return self.repo is not None

    @property
    def basename(self) -> str:
        return Path(self.filename).name if self.filename else Path(str(self.path)).name

    @property
    def slug(self) -> str:
        """Short model name for the card: ``REPO/FILE@REV12`` or the file name."""
        if self.is_hub:
            return f"{self.repo}/{self.filename}@{(self.revision or '')[:12]}"
        return self.basename


def parse_model_ref(text: str) -> ModelRef:
    """``REPO@REVISION/FILE.gguf`` (REVISION = a 40-hex commit) or a path to a ``.gguf`` file.

    Raises: ConfigError for an unpinned or malformed Hub reference, or a path that is not a ``.gguf`` file.
    """
    m = _HF_REF.match(text)
    if m and not Path(text).exists():
        rev = m.group("rev")
        if not _HEX40.match(rev):
            raise ConfigError(f"revision {rev!r} is not a 40-hex commit hash", field="--method",
                              fix="pin the model: gguf:OWNER/REPO@<40-hex commit>/FILE.gguf (a branch or tag can "
                                  "move; the commit is on the Hub's 'Files' history page)")
        if not m.group("file").endswith(".gguf"):
            raise ConfigError(f"{m.group('file')!r} is not a .gguf file", field="--method",
                              fix="name the .gguf file inside the repository")
        return ModelRef(text=text, repo=m.group("repo"), revision=rev, filename=m.group("file"))
    path = Path(text).expanduser()
    if not path.is_file():
        hint = ("pin a Hub file as gguf:OWNER/REPO@<40-hex commit>/FILE.gguf"
                if "/" in text and not text.startswith(("/", ".", "~")) else "give the path of a .gguf file")
        raise ConfigError(f"no GGUF file at {text!r}", field="--method", fix=hint)
    if path.suffix != ".gguf":
        raise ConfigError(f"{text!r} is not a .gguf file", field="--method", fix="give the path of a .gguf file")
    return ModelRef(text=text, path=path.resolve())


def model_size(ref: ModelRef, cache_dir: str | None = None) -> int:
    """Size in bytes of the model file, without downloading it.

    Hub files: huggingface_hub's file metadata (``hf_hub_download(..., dry_run=True)``, which answers from the local
    cache for a cached commit and with a HEAD request otherwise; older huggingface_hub: ``try_to_load_from_cache`` then
    ``get_hf_file_metadata``). Raises BackendError when the size cannot be learned (offline and not cached, no such
    file, no access).
    """
    if not ref.is_hub:
        assert ref.path is not None
        return ref.path.stat().st_size
    import huggingface_hub as hf

    try:
        try:
            info = hf.hf_hub_download(ref.repo, ref.filename, revision=ref.revision, cache_dir=cache_dir,
                                      dry_run=True)
            size = getattr(info, "file_size", None)
        except TypeError:  # huggingface_hub without dry_run
            cached = hf.try_to_load_from_cache(ref.repo, ref.filename, revision=ref.revision, cache_dir=cache_dir)
            if isinstance(cached, str):
                return os.path.getsize(cached)
            meta = hf.get_hf_file_metadata(hf.hf_hub_url(ref.repo, ref.filename, revision=ref.revision))
            size = meta.size
    except Exception as exc:  # noqa: BLE001 - huggingface_hub raises many types; report one line
        raise BackendError(f"cannot read the size of {ref.repo}/{ref.filename}@{ref.revision[:12]}: "
                           f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                           where="gguf", fix="check the repository, file name and revision; offline "
                                             "(HF_HUB_OFFLINE=1) the file must already be in the cache") from None
    if not isinstance(size, int) or size <= 0:
        raise BackendError(f"the Hub reported no size for {ref.repo}/{ref.filename}", where="gguf")
    return size


@dataclass
class FitResult:
    """Outcome of :func:`fit_check`: where the model will run and what was free."""

    device: str
    """``"cpu"`` or the GPU name(s)."""
    n_gpu_layers: int
    free_bytes: int | None
    need_bytes: int
    warning: str | None = None


def gpu_free_memory() -> tuple[list[tuple[str, int]], str | None]:
    """``([(gpu name, free bytes), …], None)`` via pynvml, or ``([], reason)`` when there is no usable NVIDIA GPU
    (``NVMLError_LibraryNotFound`` on machines without the driver, no device, other NVML errors)."""
    try:
        import pynvml
    except ImportError:
        return [], "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        return [], "no NVIDIA driver (NVML library not found)"
    except pynvml.NVMLError as exc:
        return [], f"NVML: {exc}"
    try:
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            name = name.decode() if isinstance(name, bytes) else str(name)
            out.append((name, int(pynvml.nvmlDeviceGetMemoryInfo(h).free)))
        return out, (None if out else "no NVIDIA GPU found")
    except pynvml.NVMLError as exc:
        return [], f"NVML: {exc}"
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def available_ram() -> int | None:
    """``MemAvailable`` from /proc/meminfo in bytes (None where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def fit_check(size_bytes: int, *, headroom_gb: float = HEADROOM_GB, n_gpu_layers: int | None = None,
              name: str = "model") -> FitResult:
    """JA→EN fit check: ``size + headroom > free memory`` → DeferredError (nothing is downloaded or started).

    With a GPU (and ``n_gpu_layers`` not 0) free VRAM is the sum over visible NVIDIA devices (llama.cpp splits
    layers across them). Without one the model runs on the CPU (``FitResult.warning`` says why) and the same rule is
    applied to available RAM. Raises: DeferredError.
    """
    need = int(size_bytes + headroom_gb * GB)
    if n_gpu_layers != 0:
        gpus, reason = gpu_free_memory()
        if gpus:
            free = sum(f for _, f in gpus)
            names = ", ".join(n for n, _ in gpus)
            if need > free:
                raise DeferredError(
                    f"{name} deferred: {size_bytes / GB:.2f} GB file + {headroom_gb:.1f} GB headroom > "
                    f"{free / GB:.2f} GB free VRAM on {names}; nothing was downloaded",
                    where="gguf", fix="run it on a larger GPU, free GPU memory, or pass n_gpu_layers=0 for CPU")
            return FitResult(device=names, n_gpu_layers=99 if n_gpu_layers is None else n_gpu_layers,
                             free_bytes=free, need_bytes=need)
        warning = f"{reason}: running {name} on the CPU"
    else:
        warning = None
    ram = available_ram()
    if ram is not None and need > ram:
        raise DeferredError(f"{name} deferred: {size_bytes / GB:.2f} GB file + {headroom_gb:.1f} GB headroom > "
                            f"{ram / GB:.2f} GB available RAM (CPU); nothing was downloaded", where="gguf",
                            fix="run it on a machine with more memory or a GPU")
    return FitResult(device="cpu", n_gpu_layers=0, free_bytes=ram, need_bytes=need, warning=warning)


def sha256_file(path: Path) -> str:
    """SHA-256 (hex) of a file, read in 4 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(4 << 20):
            h.update(block)
    return h.hexdigest()


def hub_lfs_sha256(pointer: Path) -> str | None:
    """The Hub's SHA-256 of an LFS file from its cache layout: ``snapshots/REV/FILE`` links to ``blobs/<sha256>``
    (the LFS etag). None when the cache copy is not such a link (e.g. a copy on a filesystem without symlinks)."""
    try:
        target = os.readlink(pointer)
    except OSError:
        return None
    name = Path(target).name
    return name if _HEX64.match(name) else None


def resolve_model(ref: ModelRef, *, cache_dir: str | None = None, expected_sha256: str | None = None
                  ) -> tuple[Path, str]:
    """Download (Hub, pinned revision) or locate (path) the file, hash it and check the hash.

    Returns ``(path, sha256)``. Raises BackendError when the download fails or a hash does not match.
    """
    if ref.is_hub:
        import huggingface_hub as hf

        try:
            local = hf.hf_hub_download(ref.repo, ref.filename, revision=ref.revision, cache_dir=cache_dir)
        except Exception as exc:  # noqa: BLE001
            raise BackendError(f"download of {ref.repo}/{ref.filename}@{ref.revision[:12]} failed: "
                               f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}",
                               where="gguf", fix="check the network or pre-fill the cache (HF_HUB_CACHE)") from None
        path = Path(local)
        lfs = hub_lfs_sha256(path)
    else:
        assert ref.path is not None
        path, lfs = ref.path, None
    digest = sha256_file(path)
    if lfs is not None and digest != lfs:
        raise BackendError(f"SHA-256 of {path.name} is {digest[:16]}…, the Hub's LFS hash is {lfs[:16]}… "
                           "(corrupt or altered download)", where="gguf",
                           fix="delete the cached file (huggingface-cli delete-cache) and run again")
    if expected_sha256 is not None and digest != expected_sha256.lower():
        raise BackendError(f"SHA-256 of {path.name} is {digest}, expected {expected_sha256}", where="gguf",
                           field="model_sha256", fix="use the file you meant, or correct model_sha256")
    return path, digest


# --------------------------------------------------------------------------------------------------------------------
# Canary and latency gate


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def visible_text(text: str | None) -> str:
    """Output as a reader would see it: a trailing literal ``</s>`` removed, whitespace trimmed."""
    t = (text or "").strip()
    while t.endswith("</s>"):
        t = t[:-4].rstrip()
    return t


def canary_verdict(source: str, result: LLMResult) -> str | None:
    """None when ``result`` is a visible translation of ``source``; else the reason (one line).

    Not a translation: any error (token cap, empty, transport, …), no visible text, chat-template markup in the output
    (``[INST]``, ``<start_of_turn>``, …: the model is continuing a template it does not know), the source returned
    unchanged, or the source repeated inside a longer output (prompt echo).
    """
    if result.error_kind is not None:
        return f"{result.error_kind.value}: {result.error or ''}".strip()
    text = visible_text(result.text)
    if not text:
        return "no visible text"
    marks = [m for m in _TEMPLATE_MARKUP if m in text]
    if marks:
        return f"chat-template markup in the output ({marks[0]})"
    if _norm(text) == _norm(source):
        return "source returned untranslated"
    if len(source) >= 12 and _norm(source) in _norm(text):
        return "the output repeats the source"
    return None


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no values")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _short(text: str | None, n: int = 60) -> str:
    t = " ".join((text or "").split())
    return repr(t if len(t) <= n else t[: n - 1] + "…")


# --------------------------------------------------------------------------------------------------------------------
# Backend


class GGUFBackend(OpenAIBackend):
    """``gguf:REPO@REVISION/FILE.gguf`` or ``gguf:PATH`` — see the module docstring.

    Construct as ``GGUFBackend(method, context, GGUFOptions(...))``; ``context.prompt``, ``source_language`` and
    ``target_language`` are needed for the canary and the gate.
    ``on_warning`` receives one-line warnings (default: the ``mtboard.gguf`` logger).

    :meth:`start` runs fit check → download/hash → server → canary → latency gate, and stops the server if any step
    fails. :meth:`close` / :meth:`aclose` always stop it.
    """

    name: ClassVar[str] = "gguf"
    method_class: ClassVar[MethodClass] = MethodClass.raw_llm
    model_optional: ClassVar[bool] = False
    default_prompt: ClassVar[str] = "few-shot-completion"
    default_concurrency: ClassVar[int] = 1
    preferred_batch_size: ClassVar[int] = 1
    Options: ClassVar[type[Options]] = GGUFOptions
    priced: ClassVar[bool] = False
    endpoint_env: ClassVar[str | None] = None
    local_gate: ClassVar[bool] = True
    model_is_path: ClassVar[bool] = True

    def __init__(self, method: MethodSpec, context: BackendContext | None = None, options: Options | None = None, *,
                 on_warning: Callable[[str], None] | None = None):
        super().__init__(method, context, options)
        self.settings: GGUFOptions = self.options  # type: ignore[assignment]
        self.ref = parse_model_ref(method.model)
        self.on_warning = on_warning or log.warning
        self.warnings: list[str] = []
        self.server: LocalServer | None = None
        self.fit: FitResult | None = None
        self.model_path: Path | None = None
        self.model_sha256: str | None = None
        self.gate: LocalModelGate | None = None
        self.gate_outputs: list[dict[str, Any]] = []
        """Every canary/gate request: line, history length, output, error, latency (for the work-dir report)."""

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        self.on_warning(message)

    # -- lifecycle ---------------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Fit check, download + hash, server, canary, latency gate (module docstring). Idempotent.

        Raises: DeferredError (does not fit), ConfigError (settings, languages), BackendError (download, hash,
        server, canary, enforced latency gate). The server is stopped before any of these propagate.
        """
        if self._client is not None:
            return
        s = self.settings
        impl = localserver.implementation(s.server)  # fail early (before any download) when no server is installed
        if s.sandbox == "on":
            sandbox.require()  # likewise when the sandbox the server must run in is unavailable (issue 21)
        n_gpu_layers = s.n_gpu_layers
        if impl.gpu_offload is False and n_gpu_layers != 0 and gpu_free_memory()[0]:
            self._warn(f"{impl.version} was built without GPU offload: {self.ref.slug} runs on the CPU")
            n_gpu_layers = 0
        size = model_size(self.ref, s.hf_cache_dir)
        self.fit = fit_check(size, headroom_gb=s.headroom_gb, n_gpu_layers=n_gpu_layers, name=self.ref.slug)
        if self.fit.warning:
            self._warn(self.fit.warning)
        self.model_path, self.model_sha256 = resolve_model(self.ref, cache_dir=s.hf_cache_dir,
                                                           expected_sha256=s.model_sha256)
        self.server = LocalServer(self.model_path, n_ctx=s.n_ctx, n_gpu_layers=self.fit.n_gpu_layers,
                                  n_threads=s.n_threads, implementation=s.server,
                                  startup_timeout_s=s.startup_timeout_s, on_warning=self._warn,
                                  alias=self.ref.basename, sandbox=s.sandbox == "on")
        try:
            self.server.start()
            assert self.server.base_url is not None
            self.gate = self._run_gates()
            self._client = LLMClient(self.server.base_url, None, concurrency=max(1, self.context.concurrency),
                                     timeout_s=self.context.timeout_s, max_retries=self.context.max_retries,
                                     trust_env=False,  # our own server: never through a proxy
                                     uds=self.server.uds)
        except BaseException:
            self._stop_server()
            raise

    def _stop_server(self) -> None:
        if self.server is not None:
            self.server.stop()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._stop_server()

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self._stop_server()

    @classmethod
    def prompt_evidence(cls, model: str, base_url: str | None) -> list[tuple[str, str]] | None:
        """The GGUF file's own metadata (``general.architecture``, ``general.basename`` / ``general.name``, whether it
        carries a chat template; :func:`mtboard.llm.serverinfo.gguf_evidence`) when the file is a local path (a
        pinned Hub file is not looked up here), and its file name. ``[]`` for a reference that cannot be parsed.
        Never raises."""
        try:
            ref = parse_model_ref(model)
        except MtboardError:
            return []
        out: list[tuple[str, str]] = []
        if ref.path is not None and ref.path.is_file():
            out += serverinfo.gguf_evidence(ref.path)
        out.append(("gguf.file_name", ref.basename))
        return out

    @classmethod
    def public_model(cls, model: str) -> str:
        """The model part recorded in the card: a local ``PATH`` becomes its file name, so a card never carries the
        contributor's folders (``/home/<name>/…``); the weights stay identified by ``model_file_sha256``. A pinned
        Hub reference (``REPO@REVISION/FILE.gguf``) is kept as typed."""
        if "@" in model:
            return model
        return Path(model).name or model

    @classmethod
    def model_slug_for(cls, model: str, effort: str | None = None) -> str:
        """:attr:`ModelRef.slug` of a published model part: ``REPO/FILE@REV12`` for a pinned Hub file, else the file
        name (what :meth:`describe` reports)."""
        m = _HF_REF.match(model)
        if m and "@" in model:
            return f"{m.group('repo')}/{m.group('file')}@{m.group('rev')[:12]}"
        return Path(model).name or model

    @classmethod
    def check_local_gate(cls, gate: LocalModelGate, source_language: str, sample_sources: list[str]) -> list[str]:
        """``canary_passed`` must be :func:`canary_verdict` over the fixed lines (or the corpus sample lines), the
        recorded outputs and their error kinds (``canary_errors``); a gate recorded without error kinds is checked one
        way only (a passed canary needs every output to pass the output rules: an unrecorded error can only make it
        fail). ``latency_passed`` must follow from the recorded median/p90 and their limits."""
        problems = []
        lang = primary(source_language) if source_language else ""
        lines = CANARY_LINES.get(lang) or [x for x in sample_sources if x.strip()][:5]
        if gate.canary_errors and len(gate.canary_errors) == len(gate.canary_outputs) == len(lines):
            why = [canary_verdict(line, LLMResult(text=out, error_kind=ErrorKind(err) if err else None))
                   for line, out, err in zip(lines, gate.canary_outputs, gate.canary_errors)]
            if gate.canary_passed != (not any(why)):
                problems.append(f"canary_passed is {str(gate.canary_passed).lower()} but the recorded outputs and "
                                f"errors say {str(not any(why)).lower()}")
        elif gate.canary_errors:
            problems.append(f"{len(gate.canary_errors)} canary error kinds for {len(gate.canary_outputs)} outputs and "
                            f"{len(lines)} lines")
        elif gate.canary_passed:
            if len(gate.canary_outputs) != len(lines):
                problems.append(f"canary_passed but {len(gate.canary_outputs)} canary outputs for {len(lines)} lines")
            else:
                for line, out in zip(lines, gate.canary_outputs):
                    why = canary_verdict(line, LLMResult(text=out))
                    if why:
                        problems.append(f"canary_passed but an output fails the canary rule ({why})")
                        break
        g = gate
        nums = (g.latency_median_s, g.latency_p90_s, g.latency_threshold_median_s, g.latency_threshold_p90_s)
        if g.latency_passed is not None and all(x is not None for x in nums):
            want = g.latency_median_s <= g.latency_threshold_median_s and g.latency_p90_s <= g.latency_threshold_p90_s
            if g.latency_passed != want:
                problems.append(f"latency_passed is {str(g.latency_passed).lower()} but the recorded median/p90 and "
                                f"limits say {str(want).lower()}")
        return problems

    @classmethod
    def endpoint_url(cls, base_url: str | None) -> str | None:
        """None: the harness starts its own loopback server, whose address says nothing about the method."""
        return None

    @classmethod
    def rerun(cls, spec: RunSpec, facts: BackendFacts, *, model_path: Path | None = None) -> Rerun:
        """Re-run as recorded: the same n_ctx, the recorded canary mode (a card that published its failed canary
        on purpose re-runs with ``canary=record``) and the file's SHA-256 checked. A card names a local file only
        by file name and hash (never the contributor's folders), so ``model_path`` must supply it; a pinned Hub
        reference is downloaded again. Raises: ConfigError when a local file is needed and not given."""
        model = spec.method.model
        opts: dict[str, Any] = {}
        if "@" not in model:
            if model_path is None:
                raise ConfigError(f"the card's model is a local GGUF file ({model}); it is not downloadable",
                                  field="--model-path", fix="pass --model-path /path/to/" + model)
            model = str(model_path)
        if facts.model_file_sha256:
            opts["model_sha256"] = facts.model_file_sha256
        gate = facts.local
        if gate is not None and not gate.canary_passed:
            opts["canary"] = "record"
        if gate is not None and gate.n_ctx:
            opts["n_ctx"] = gate.n_ctx
        seed = facts.sampling.get("seed")
        if isinstance(seed, int) and not isinstance(seed, bool):
            opts["seed"] = seed  # the recorded seed: a temperature > 0 card re-runs to the same answers
        return Rerun(method=spec.method.with_model(model).text, backend_options=opts)

    def describe(self) -> BackendFacts:
        provider = self._client.api_provider if self._client is not None else None
        if provider in (None, "openai-compatible") and self.server is not None and self.server.version:
            provider = self.server.version.split()[0].replace("llama-server", "llama.cpp")
        return super().describe().model_copy(update={
            "api_provider": provider or "local",
            "endpoint_host_sha256": None,  # a loopback server; the host says nothing about the method
            "model_id": self.ref.basename,
            "model_slug": self.ref.slug,
            "model_revision": self.ref.revision,
            "model_file_sha256": self.model_sha256,
            "engine_version": self.server.version if self.server is not None else None,
            "local": self.gate,
        })

    def _local_weights_sha256(self, path: str) -> str | None:
        """The file this backend started its server with was hashed before it started (:func:`resolve_model`)."""
        return self.model_sha256

    def sampling(self, stop: list[str] | None = None) -> dict[str, Any]:
        """The OpenAI backend's sampling record plus ``seed`` when the ``seed`` option is set (the base seed;
        replicate *r* is sent ``seed + r``)."""
        s = super().sampling(stop)
        if self.settings.seed is not None:
            s["seed"] = self.settings.seed
        return s

    def build_request(self, req: TranslateRequest):  # type: ignore[override]
        llm_req = super().build_request(req)
        if self.settings.seed is not None:
            llm_req.extra["seed"] = self.settings.seed + req.run_index
        llm_req.model = self.ref.basename  # the server's alias; the spec text may hold a local path
        if self.server is not None and self.server.server_name == LLAMA_SERVER:
            # evaluate every prompt from an empty KV cache: a re-run then gives the card's answers whatever was asked
            # before (issue 21; llama-cpp-python gets the same through mtboard.backends.local.llama_cpp_fresh)
            llm_req.extra["cache_prompt"] = False
        return llm_req

    # -- canary and gate ---------------------------------------------------------------------------------------------

    def _lines(self) -> tuple[list[str], list[str]]:
        """(5 canary lines, gate scene lines) for the source language: the fixed lines, else corpus samples."""
        lang = primary(self.context.source_language) if self.context.source_language else ""
        need = self.settings.gate_history + self.settings.gate_lines
        if lang in CANARY_LINES:
            return CANARY_LINES[lang], GATE_LINES[lang]
        samples = [s for s in self.context.sample_sources if s.strip()]
        if len(samples) < 5:
            raise ConfigError(f"no fixed canary lines for source language {lang or '?'!r} and fewer than 5 sample "
                              "sources", field="BackendContext.sample_sources",
                              fix=f"pass at least {need} corpus source lines as sample_sources")
        return samples[:5], samples

    def _request_for(self, source: str, history: list[str], index: int) -> TranslateRequest:
        prompt = self.context.prompt
        if prompt is None:
            return TranslateRequest(entry_id=index, source=source, prompt=source, history=history)
        if not self.context.source_language or not self.context.target_language:
            raise ConfigError("the gguf canary needs the corpus languages", field="BackendContext.source_language",
                              fix="the runner must set source_language and target_language")
        r = prompt.render(source, self.context.source_language, self.context.target_language, history=history)
        return TranslateRequest(entry_id=index, source=source, prompt=r.prompt, messages=r.messages,
                                history=history, stop=list(r.stop))

    def _run_gates(self) -> LocalModelGate:
        """Canary then latency gate, on a private client and event loop (the runner calls start() in a worker
        thread; called from inside a running loop, the gates run on a helper thread instead)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._gates_async())
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(lambda: asyncio.run(self._gates_async())).result()

    async def _gates_async(self) -> LocalModelGate:
        s = self.settings
        assert self.server is not None and self.server.base_url is not None and self.fit is not None
        canary, scene = self._lines()
        gate = LocalModelGate(canary_passed=False, n_ctx=s.n_ctx, n_threads=self.server.n_threads,
                              n_gpu_layers=self.fit.n_gpu_layers, server=self.server.version,
                              device=self.fit.device, sandbox=self.server.sandbox_record)
        async with LLMClient(self.server.base_url, None, concurrency=1, timeout_s=self.context.timeout_s,
                             max_retries=self.context.max_retries, trust_env=False, uds=self.server.uds) as client:
            await client.probe()
            outputs, errors, failures = [], [], []
            for i, line in enumerate(canary):
                res = await client.complete(self.build_request(self._request_for(line, [], i)))
                why = canary_verdict(line, res)
                outputs.append(res.text or "")
                errors.append(res.error_kind.value if res.error_kind is not None else None)
                self.gate_outputs.append({"phase": "canary", "source": line, "history": 0, "output": res.text,
                                          "error": res.error, "verdict": why or "ok", "latency_s": res.latency_s})
                if why:
                    failures.append(f"{_short(line, 40)} → {_short(res.text)} ({why})")
            gate = gate.model_copy(update={"canary_outputs": outputs, "canary_errors": errors,
                                           "canary_passed": not failures})
            if failures and s.canary == "record":
                self._warn(f"canary failed ({len(failures)} of {len(canary)} lines), recorded in the card "
                           "(canary=record): " + "; ".join(failures))
            elif failures:
                fmt = self.context.prompt.format if self.context.prompt is not None else "raw"
                raise BackendError(f"canary failed: {len(failures)} of {len(canary)} lines gave no visible "
                                   f"translation with the {fmt} prompt: " + "; ".join(failures), where="gguf",
                                   fix="use the prompt format the model card documents (base models: "
                                       "--prompt few-shot-completion)")
            if s.latency_gate == "off":
                return gate
            h = s.gate_history
            if len(scene) < h + 1:
                raise ConfigError(f"the latency gate needs at least {h + 1} lines, has {len(scene)}",
                                  field="gate_history")
            latencies = []
            for k in range(s.gate_lines):
                idx = h + k % (len(scene) - h)
                history = scene[idx - h: idx]
                req = self.build_request(self._request_for(scene[idx], history, 100 + k))
                t0 = time.perf_counter()
                res = await client.complete(req)
                dt = time.perf_counter() - t0
                latencies.append(dt)
                self.gate_outputs.append({"phase": "latency", "source": scene[idx], "history": len(history),
                                          "output": res.text, "error": res.error, "latency_s": dt})
        med = statistics.median(latencies)
        p90 = percentile(latencies, 90)
        passed = med <= s.latency_median_s and p90 <= s.latency_p90_s
        gate = gate.model_copy(update={"latency_median_s": round(med, 4), "latency_p90_s": round(p90, 4),
                                       "latency_threshold_median_s": s.latency_median_s,
                                       "latency_threshold_p90_s": s.latency_p90_s, "latency_passed": passed})
        if not passed:
            msg = (f"latency gate failed: median {med:.2f} s (limit {s.latency_median_s:g}), p90 {p90:.2f} s "
                   f"(limit {s.latency_p90_s:g}) per line with {h} lines of history on {self.fit.device}")
            if s.latency_gate == "enforce":
                raise BackendError(msg, where="gguf", fix="use a GPU or a smaller model, or pass latency_gate=record "
                                                          "to run anyway (the result is recorded in the card)")
            self._warn(msg)
        return gate


__all__ = ["GGUFBackend", "GGUFOptions", "ModelRef", "parse_model_ref", "model_size", "fit_check", "FitResult",
           "gpu_free_memory", "resolve_model", "sha256_file", "hub_lfs_sha256", "canary_verdict", "visible_text",
           "percentile", "CANARY_LINES", "GATE_LINES"]

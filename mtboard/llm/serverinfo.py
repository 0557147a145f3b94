"""What a model server reports about itself and the weights it serves (issue 22): pure functions over the JSON each
server answers, so they are testable without a server. :meth:`mtboard.llm.LLMClient.probe` asks, these read.

Where each server says it (every endpoint is public API of the server named; nothing is guessed from the name typed):

==================  =====================================  =============================================================
server              asked                                  read
==================  =====================================  =============================================================
any                 ``GET /v1/models``                     ``data[].id`` (the served names), ``owned_by``; vLLM also
                                                           ``root`` (the model it loaded: a Hugging Face repo or path)
llama.cpp           ``GET /props``                         ``model_path`` (the GGUF file), ``build_info`` (``b4567-…``)
llama-cpp-python    ``GET /openapi.json``                  ``info.version`` (the package version); the GGUF file is the
                                                           ``/v1/models`` id unless the server was given an alias
Ollama              ``GET /api/version``,                  version; ``details.family``; the weights blob in the
                    ``POST /api/show`` ``{"model": …}``,   modelfile's ``FROM …/blobs/sha256-<hex>`` (Ollama stores
                    ``GET /api/tags``                      blobs under their SHA-256, so this is the GGUF file's hash);
                                                           the model's manifest ``digest``
vLLM                ``GET /version``                       ``version``; a ``root`` inside a Hugging Face cache
                                                           (``models--ORG--NAME/snapshots/<40 hex>``) names the repo
                                                           and the commit it was loaded at
==================  =====================================  =============================================================

:class:`ServerIdentity` holds the result. ``weights_path`` is a path on the server's machine: it is runtime only
(a backend may hash the file when the server runs on this machine) and never written to any artifact; only its file
name is published.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HF_SNAPSHOT = re.compile(r"models--(?P<org>[^/\\]+?)--(?P<name>[^/\\]+)[/\\]snapshots[/\\](?P<rev>[0-9a-f]{40})")
_OLLAMA_BLOB = re.compile(r"^FROM\s+\S*?sha256[-:](?P<hex>[0-9a-f]{64})\s*$", re.MULTILINE)
_HF_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass
class ServerIdentity:
    """What the server said about itself and the model serving a request (see the module docstring).

    Every field is None / empty when the server did not say it.
    """

    provider: str | None = None
    """Channel (llama.cpp, llama-cpp-python, ollama, vllm, openai-compatible, …)."""
    engine: str | None = None
    """Server build as it reports it: ``llama.cpp b4567-abc1234``, ``llama-cpp-python 0.3.36``, ``ollama 0.5.7``,
    ``vllm 0.6.3``."""
    model_ids: list[str] = field(default_factory=list)
    """``/v1/models`` ids as listed (at most 50)."""
    served: str | None = None
    """The listed id serving the requested model (see :func:`pick_served`)."""
    weights_path: str | None = None
    """GGUF file path on the server's machine (llama.cpp ``/props`` ``model_path``; llama-cpp-python's model id).
    Runtime only: never written anywhere."""
    weights_name: str | None = None
    """Public name of the weights: the GGUF file name, the Hugging Face repo vLLM loaded, or Ollama's model name."""
    weights_sha256: str | None = None
    """SHA-256 of the weights file when the server reports it (Ollama's content-addressed blob)."""
    revision: str | None = None
    """Version of the weights: the Hugging Face commit vLLM loaded, or Ollama's manifest digest."""
    family: str | None = None
    """Model family as the server reports it (Ollama ``details.family``, e.g. ``gemma3``)."""
    architecture: str | None = None
    """The weights' ``general.architecture`` as the server reports it (Ollama ``/api/show`` ``model_info``)."""
    base_name: str | None = None
    """The weights' ``general.basename`` (Ollama ``/api/show`` ``model_info``; e.g. ``translategemma``)."""
    chat_template: bool | None = None
    """Whether the weights carry a chat template (llama.cpp ``/props`` ``chat_template``; Ollama ``/api/show``
    ``template`` other than the bare ``{{ .Prompt }}``); None when the server does not say. A model without one is
    a base (pretrained) model: it continues text and follows no instruction format."""

    @property
    def identifies_weights(self) -> bool:
        """True when the server named the weights (not only the name the request used)."""
        return self.weights_name is not None


def basename(path: str) -> str:
    """The last component of a POSIX or Windows path (a server may run on either)."""
    name = PurePosixPath(path).name
    if "\\" in name:
        name = PureWindowsPath(name).name
    return name


def looks_like_path(value: str) -> bool:
    """True for an absolute or relative file path (``/…``, ``./…``, ``C:\\…``, ``…/x.gguf``), False for a model
    name such as ``gemma3:270m`` or ``Qwen/Qwen3-8B``."""
    return (value.startswith(("/", "./", "../", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", value))
            or value.lower().endswith(".gguf"))


def model_list(data: Any) -> list[dict[str, Any]]:
    """The model objects of a ``/v1/models`` answer (``{"data": [...]}`` or Ollama's ``{"models": [...]}``)."""
    if not isinstance(data, dict):
        return []
    items = data.get("data") if isinstance(data.get("data"), list) else data.get("models")
    return [i for i in items if isinstance(i, dict)][:50] if isinstance(items, list) else []


def pick_served(ids: list[str], requested: str | None) -> str | None:
    """The listed id that serves ``requested``: the same id; Ollama's ``NAME`` for ``NAME:latest``; else the only
    id when the server lists exactly one (llama.cpp and llama-cpp-python serve their one model under any name).
    None when no id can be told."""
    if requested:
        if requested in ids:
            return requested
        if ":" not in requested and f"{requested}:latest" in ids:
            return f"{requested}:latest"
    return ids[0] if len(ids) == 1 else None


def vllm_root(root: str) -> tuple[str | None, str | None]:
    """``(weights name, revision)`` from the ``root`` vLLM reports: a Hugging Face cache snapshot path gives
    ``("ORG/NAME", "<40 hex>")``; a repo id ``ORG/NAME`` itself; another path its last folder name."""
    m = _HF_SNAPSHOT.search(root)
    if m:
        return f"{m.group('org')}/{m.group('name')}", m.group("rev")
    if _HF_REPO.match(root) and not looks_like_path(root):
        return root, None
    name = basename(root.rstrip("/\\"))
    return (name or None), None


def llama_cpp_props(data: Any) -> tuple[str | None, str | None]:
    """``(model_path, engine)`` from llama.cpp's ``/props``: engine ``llama.cpp <build_info>``."""
    if not isinstance(data, dict):
        return None, None
    path = data.get("model_path")
    build = data.get("build_info")
    return (path if isinstance(path, str) and path else None,
            f"llama.cpp {build}" if isinstance(build, str) and build else None)


def openapi_version(data: Any) -> str | None:
    """``info.version`` of an OpenAPI document (llama-cpp-python's FastAPI app sets it to its package version)."""
    info = data.get("info") if isinstance(data, dict) else None
    v = info.get("version") if isinstance(info, dict) else None
    return v if isinstance(v, str) and v else None


def ollama_show(data: Any) -> tuple[str | None, str | None]:
    """``(weights blob SHA-256, family)`` from Ollama's ``/api/show`` answer."""
    if not isinstance(data, dict):
        return None, None
    blob = None
    modelfile = data.get("modelfile")
    if isinstance(modelfile, str):
        m = _OLLAMA_BLOB.search(modelfile)
        blob = m.group("hex") if m else None
    details = data.get("details")
    fam = details.get("family") if isinstance(details, dict) else None
    return blob, (fam if isinstance(fam, str) and fam else None)


def ollama_model_info(data: Any) -> tuple[str | None, str | None]:
    """``(general.architecture, general.basename)`` from Ollama's ``/api/show`` ``model_info`` (keys as the GGUF
    file has them; Ollama docs/api.md "Show Model Information")."""
    info = data.get("model_info") if isinstance(data, dict) else None
    if not isinstance(info, dict):
        return None, None
    arch, base = info.get("general.architecture"), info.get("general.basename")
    return (arch if isinstance(arch, str) and arch else None, base if isinstance(base, str) and base else None)


def props_chat_template(data: Any) -> bool | None:
    """Whether llama.cpp's ``/props`` reports a chat template (``chat_template``, a non-empty string); None when the
    answer has no such field."""
    t = data.get("chat_template") if isinstance(data, dict) else None
    return bool(t.strip()) if isinstance(t, str) else None


def ollama_chat_template(data: Any) -> bool | None:
    """Whether Ollama's ``/api/show`` ``template`` is a chat template: False for the bare ``{{ .Prompt }}`` Ollama
    gives a model imported without one, None when there is no ``template``."""
    t = data.get("template") if isinstance(data, dict) else None
    if not isinstance(t, str):
        return None
    return re.sub(r"\s+", "", t) not in ("", "{{.Prompt}}")


_GGUF_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""GGUF value types of fixed size (bytes): uint8, int8, uint16, int16, uint32, int32, float32, bool, uint64, int64,
float64; 8 is a string (uint64 length + UTF-8 bytes), 9 an array (uint32 element type + uint64 count + elements)."""
_GGUF_NAMES = {"general.architecture": "gguf.general.architecture", "general.basename": "gguf.general.name",
               "general.name": "gguf.general.name"}


def gguf_evidence(path: str | Path) -> list[tuple[str, str]]:
    """What a GGUF file's key-value header says about the model's family: ``("gguf.general.architecture", …)``,
    ``("gguf.general.name", …)`` (``general.basename``, then ``general.name``) and
    ``("gguf.tokenizer.chat_template", "present" | "absent")``, for :func:`mtboard.inputs.native.choose`.

    Reads the header as the GGUF specification lays it out (ggml ``docs/gguf.md``: magic ``GGUF``, uint32 version
    ≥ 2, uint64 tensor count, uint64 key-value count, then the key-value pairs, little-endian), skipping values it
    does not need and stopping before the tensor descriptions (the ``gguf`` package's ``GGUFReader`` parses all of
    them: half a minute for a 270M model on a busy machine). ``[]`` when the file is not a readable GGUF header.
    Never raises."""
    import struct  # noqa: PLC0415

    found: dict[str, str] = {}
    template = False
    try:
        with open(path, "rb") as fh:
            def read(n: int) -> bytes:
                b = fh.read(n)
                if len(b) != n:
                    raise EOFError
                return b

            def string() -> str:
                (n,) = struct.unpack("<Q", read(8))
                if n > 1 << 24:
                    raise ValueError("string too long")
                return read(n).decode("utf-8", "replace")

            def skip(vtype: int) -> None:
                if vtype in _GGUF_FIXED:
                    fh.seek(_GGUF_FIXED[vtype], 1)
                elif vtype == 8:
                    (n,) = struct.unpack("<Q", read(8))
                    fh.seek(n, 1)
                elif vtype == 9:
                    etype, count = struct.unpack("<IQ", read(12))
                    if etype in _GGUF_FIXED:
                        fh.seek(_GGUF_FIXED[etype] * count, 1)
                    else:
                        for _ in range(count):
                            skip(etype)
                else:
                    raise ValueError(f"unknown GGUF value type {vtype}")

            if read(4) != b"GGUF" or struct.unpack("<I", read(4))[0] < 2:
                return []
            _tensors, kv_count = struct.unpack("<QQ", read(16))
            for _ in range(min(kv_count, 100_000)):
                key = string()
                (vtype,) = struct.unpack("<I", read(4))
                if key in _GGUF_NAMES and vtype == 8:
                    found[key] = string().strip()[:200]
                elif key == "tokenizer.chat_template" and vtype == 8:
                    template = bool(string().strip())
                else:
                    skip(vtype)
    except (OSError, EOFError, ValueError, struct.error):
        if not found:
            return []
    out = [(_GGUF_NAMES[k], found[k]) for k in _GGUF_NAMES if found.get(k)]
    return out + [("gguf.tokenizer.chat_template", "present" if template else "absent")]


def prompt_evidence(ident: ServerIdentity) -> list[tuple[str, str]]:
    """What ``ident`` says about the model's family, as :func:`mtboard.inputs.native.choose` reads it:
    ``(source, value)`` pairs, metadata first (Ollama's ``general.architecture`` and ``details.family``), then names
    (Ollama's ``general.basename``; llama.cpp's ``/props`` ``model_path`` file name; vLLM's ``root`` repo; the Ollama
    model name; the ``/v1/models`` id serving the request, its file name when it is a path). Never a folder path."""
    out: list[tuple[str, str]] = []
    if ident.architecture:
        out.append(("ollama.model_info.general.architecture", ident.architecture))
    if ident.family:
        out.append(("ollama.details.family", ident.family))
    if ident.base_name:
        out.append(("ollama.model_info.general.basename", ident.base_name))
    if ident.weights_name:
        source = {"llama.cpp": "props.model_path", "vllm": "vllm.root", "ollama": "ollama.model"}.get(
            ident.provider or "", "v1/models.id")
        out.append((source, ident.weights_name))
    if ident.served and ident.served != ident.weights_name:
        out.append(("v1/models.id", basename(ident.served) if looks_like_path(ident.served) else ident.served))
    if ident.chat_template is not None:
        source = "ollama.template" if ident.provider == "ollama" else "props.chat_template"
        out.append((source, "present" if ident.chat_template else "absent"))
    return out


def ollama_digest(tags: Any, name: str) -> str | None:
    """The manifest ``digest`` Ollama's ``/api/tags`` lists for ``name`` (``sha256:`` prefix dropped)."""
    for m in model_list(tags):
        if name in (m.get("name"), m.get("model")):
            d = m.get("digest")
            if isinstance(d, str):
                d = d.removeprefix("sha256:")
                return d if _HEX64.match(d) else None
    return None


def weights_from_models(provider: str | None, served: str | None, item: dict[str, Any] | None
                        ) -> tuple[str | None, str | None, str | None]:
    """``(weights path, weights name, revision)`` that the ``/v1/models`` entry of the served model tells:
    a GGUF file path (llama.cpp / llama-cpp-python without an alias), vLLM's ``root``, Ollama's model name."""
    if served is None:
        return None, None, None
    if provider == "vllm" and item is not None and isinstance(item.get("root"), str) and item["root"]:
        name, rev = vllm_root(item["root"])
        return None, name, rev
    if provider in ("llama.cpp", "llama-cpp-python") and looks_like_path(served):
        return served, basename(served), None
    if provider == "ollama":
        return None, served, None
    return None, None, None


__all__ = ["ServerIdentity", "basename", "looks_like_path", "model_list", "pick_served", "vllm_root",
           "llama_cpp_props", "openapi_version", "ollama_show", "ollama_model_info", "ollama_digest",
           "weights_from_models", "prompt_evidence", "props_chat_template", "ollama_chat_template", "gguf_evidence"]

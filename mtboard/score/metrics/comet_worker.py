"""COMET scoring worker: runs inside the COMET environment, not inside mtboard's (docs/neural_metrics.md).

``unbabel-comet`` (all releases up to 2.2.7) requires ``huggingface-hub<1.0`` and ``numpy<2.0`` through its pins and
``transformers<5``, while mtboard requires ``huggingface_hub>=1.0``: the two cannot share one environment (pip:
``ResolutionImpossible``). So :mod:`mtboard.score.metrics.neural` runs this file **as a script** with the Python of a
separate environment (``scripts/setup.sh --comet`` → ``.venv-comet``) and talks to it in JSON. The file imports only
the standard library at module level and never imports mtboard, so it runs in an environment where mtboard is not
installed.

Protocol: ``python comet_worker.py REQUEST.json RESULT.json``. The request holds ``repo_id``, ``revision`` (40-hex
commit), ``samples`` (list of ``{"src", "mt"[, "ref"]}``), ``batch_size``, ``device`` (``cpu`` | ``cuda``) and
optionally ``cache_dir``. The result holds ``scores`` (one float per sample, in order), ``system_score`` (COMET's own
mean), ``commit`` (the snapshot folder the revision resolved to), ``model_path``, ``class_identifier``,
``pretrained_model`` (the encoder named in ``hparams.yaml``) and ``versions`` of the packages that computed them.

The model is resolved with ``huggingface_hub.snapshot_download(repo_id, revision=…, cache_dir=…)`` and loaded with
``comet.load_from_checkpoint`` on ``checkpoints/model.ckpt`` — the same calls ``comet-score`` makes, with the revision
pinned. mtboard starts this script inside the bubblewrap sandbox with an empty environment and ``HF_HUB_OFFLINE=1``
(issue 34 item 5): it has no network, so mtboard's own process puts the model and its encoder's tokenizer and
configuration into the cache first (:func:`mtboard.score.metrics.neural.prepare_model`), and ``cache_dir`` is where
the sandbox shows that cache.
"""

from __future__ import annotations

import json
import sys


def score(request: dict) -> dict:
    """Score ``request["samples"]`` with the COMET model ``repo_id@revision`` (see the module docstring).

    Raises: whatever huggingface_hub, comet or torch raise (the caller reports the worker's stderr).
    """
    import importlib.metadata as md
    import os
    from pathlib import Path

    import yaml
    from huggingface_hub import snapshot_download

    path = Path(snapshot_download(repo_id=request["repo_id"], revision=request["revision"],
                                  cache_dir=request.get("cache_dir")))
    with open(path / "hparams.yaml", encoding="utf-8") as f:
        hparams = yaml.safe_load(f)
    import torch
    from comet import load_from_checkpoint

    torch.manual_seed(0)
    model = load_from_checkpoint(str(path / "checkpoints" / "model.ckpt"))
    model.eval()
    cuda = request.get("device", "cpu") == "cuda"
    out = model.predict(request["samples"], batch_size=int(request["batch_size"]), gpus=1 if cuda else 0,
                        accelerator="gpu" if cuda else "cpu", progress_bar=False, num_workers=0)
    versions = {name: md.version(name) for name in ("unbabel-comet", "torch", "transformers", "huggingface-hub",
                                                     "pytorch-lightning")}
    return {"scores": [float(s) for s in out.scores], "system_score": float(out.system_score),
            "commit": path.name, "model_path": str(path), "class_identifier": hparams.get("class_identifier"),
            "pretrained_model": hparams.get("pretrained_model"), "versions": versions,
            "device": "cuda" if cuda else "cpu", "torch_threads": torch.get_num_threads(),
            "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE", "")}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: comet_worker.py REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        request = json.load(f)
    result = score(request)
    with open(argv[2], "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

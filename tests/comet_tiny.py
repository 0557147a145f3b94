"""Test support, run as a script with the COMET environment's Python (never imported by the suite):

``python comet_tiny.py build DIR`` builds tiny COMET models with random weights (fixed seed) in exactly the layout
``comet.load_from_checkpoint`` expects, inside a Hugging Face cache laid out the way huggingface_hub stores a snapshot
(``DIR/hub/models--OWNER--NAME/{blobs/<sha256>, snapshots/<rev>/…, refs/main}``), so that
``snapshot_download(repo_id, revision=rev)`` resolves it with ``HF_HUB_OFFLINE=1``:

* the encoder: a tiny XLM-R config (2 layers, width 16) and a SentencePiece unigram tokenizer trained here on a few
  sentences, saved as a ``transformers`` fast tokenizer in ``DIR/encoder`` — each model's ``hparams.yaml`` names this
  folder as ``pretrained_model`` (COMET loads tokenizer and config from it, the weights from the checkpoint);
* stored as ``Unbabel/wmt22-comet-da`` — a tiny ``regression_metric`` (that model's class: src, mt, ref);
* stored as ``Unbabel/wmt22-cometkiwi-da`` — a tiny ``referenceless_regression_metric`` (src, mt).

The real repository names, in a temporary cache only, so that mtboard's real code path — the pinned model id, the
revision given as ``--revision`` — resolves them offline; the made-up revisions can never collide with a real commit
in a real cache (that would need a SHA-1 collision). It prints a JSON object {repo_id: revision}.

``python comet_tiny.py direct SPEC.json`` prints, for each ``{"checkpoint", "samples", "batch_size"}`` of the list in
SPEC.json, the segment scores ``comet`` itself gives (``load_from_checkpoint(...).predict``): the independent value
the test compares mtboard's path with. Hand-made test fixture: the sentences below train only the tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

SENTENCES = [
    "The cat sits on the mat.", "El gato se sienta en la alfombra.", "Good morning, how are you today?",
    "Buenos días, ¿cómo estás hoy?", "The train leaves at seven in the evening.", "El tren sale a las siete de la tarde.",
    "Please close the door when you leave.", "Por favor, cierra la puerta cuando salgas.",
    "Translation quality is measured by people and by metrics.", "La calidad se mide con personas y con métricas.",
]


def build_encoder(folder: Path) -> None:
    """A SentencePiece unigram tokenizer trained with ``tokenizers`` (XLM-R's special tokens and post-processor) and a
    tiny XLM-R config. ``tokenizers`` rather than ``sentencepiece`` + conversion: transformers converts a slow
    SentencePiece model through sentencepiece's protobuf module, which needs protobuf ≥ 5 while unbabel-comet pins
    protobuf < 5 (real COMET encoders ship a ready ``tokenizer.json``, so they never convert)."""
    from tokenizers import SentencePieceUnigramTokenizer, processors
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    sp = SentencePieceUnigramTokenizer()
    sp.train_from_iterator(SENTENCES * 4, vocab_size=120, special_tokens=specials, unk_token="<unk>",
                           show_progress=False)
    inner = sp._tokenizer
    inner.post_processor = processors.RobertaProcessing(sep=("</s>", inner.token_to_id("</s>")),
                                                        cls=("<s>", inner.token_to_id("<s>")))
    tok = XLMRobertaTokenizerFast(tokenizer_object=inner, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                  cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                  model_max_length=62)
    tok.save_pretrained(str(folder))
    XLMRobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=64, pad_token_id=tok.pad_token_id,
                     bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id).save_pretrained(str(folder))


def build_model(kind: str, encoder: Path, staging: Path, seed: int) -> None:
    import pytorch_lightning as pl
    import torch
    import yaml
    from comet.models import ReferencelessRegression, RegressionMetric

    torch.manual_seed(seed)
    cls = RegressionMetric if kind == "regression_metric" else ReferencelessRegression
    model = cls(pretrained_model=str(encoder), load_pretrained_weights=False, hidden_sizes=[8], layer="mix",
                layer_transformation="sparsemax", layer_norm=False, pool="avg", activations="Tanh",
                dropout=0.1)
    hparams = dict(model.hparams)
    hparams["class_identifier"] = kind
    (staging / "checkpoints").mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams, "epoch": 0, "global_step": 0,
                "pytorch-lightning_version": pl.__version__}, staging / "checkpoints" / "model.ckpt")
    (staging / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")


def lay_out_cache(hub: Path, repo_id: str, staging: Path) -> str:
    """Move ``staging``'s files into huggingface_hub's cache layout; returns the revision (a made-up commit id: the
    SHA-1 of the files' SHA-256s)."""
    files = sorted(p for p in staging.rglob("*") if p.is_file())
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    rev = hashlib.sha1("".join(digests[p] for p in files).encode()).hexdigest()
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(rev)
    for p in files:
        blob = repo / "blobs" / digests[p]
        shutil.copyfile(p, blob)
        link = repo / "snapshots" / rev / p.relative_to(staging)
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, link.parent), link)
    shutil.rmtree(staging)
    return rev


def build(root: Path) -> dict[str, str]:
    encoder = root / "encoder"
    build_encoder(encoder)
    revs = {}
    for repo_id, kind, seed in (("Unbabel/wmt22-comet-da", "regression_metric", 1234),
                                ("Unbabel/wmt22-cometkiwi-da", "referenceless_regression_metric", 4321)):
        staging = root / "staging"
        build_model(kind, encoder, staging, seed)
        revs[repo_id] = lay_out_cache(root / "hub", repo_id, staging)
    return revs


def direct(spec_file: str) -> list[list[float]]:
    from comet import load_from_checkpoint

    with open(spec_file, encoding="utf-8") as f:
        specs = json.load(f)
    out = []
    for spec in specs:
        model = load_from_checkpoint(spec["checkpoint"])
        out.append([float(s) for s in model.predict(spec["samples"], batch_size=spec["batch_size"], gpus=0,
                                                    accelerator="cpu", progress_bar=False).scores])
    return out


if __name__ == "__main__":
    if sys.argv[1] == "build":
        print(json.dumps(build(Path(sys.argv[2]))))
    else:
        print(json.dumps(direct(sys.argv[2])))

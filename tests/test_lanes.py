"""The test lanes' own machinery (tests/conftest.py, docs/TESTING.md): a model-server test runs on one CPU, so the
servers it starts size their thread pools to one thread — and two workers' model-server tests take different CPUs."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import MODEL_SERVERS, model_server_cpu

from mtboard.backends.local import server


def test_a_model_server_test_takes_the_cpu_fewest_others_hold():
    assert model_server_cpu([0, 1], [], "gw0") == 0  # nothing taken: gwN prefers CPU N mod 2
    assert model_server_cpu([0, 1], [], "gw1") == 1
    assert model_server_cpu([0, 1], [], "gw2") == 0
    assert model_server_cpu([0, 1], [0], "gw2") == 1  # gw0's server is on 0: gw2 takes 1, not its preferred 0
    assert model_server_cpu([0, 1], [1], "gw1") == 0
    assert model_server_cpu([0, 1], [0, 1], "gw2") == 0  # both held once: the preference decides
    assert model_server_cpu([0, 1], [0, 0, 1], "gw2") == 1
    assert model_server_cpu([7, 3], [], "gw1") == 7  # sorted: [3, 7]
    assert model_server_cpu([5], [5, 5], "gw3") == 5  # one CPU: that one
    assert model_server_cpu([2, 5], [], "main") == 2


def test_a_pinned_process_and_its_children_see_one_cpu():
    """What the pin relies on: mtboard's default thread count is the CPUs this process may use, and a child process
    (a model server) inherits the mask."""
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(before)})
        assert server.default_threads() == 1
        child = subprocess.run([sys.executable, "-c", "import os; print(len(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, check=True)
        assert child.stdout.strip() == "1"
    finally:
        os.sched_setaffinity(0, before)
    assert os.sched_getaffinity(0) == before


def test_every_module_that_starts_a_model_server_is_listed():
    """A test module that starts llama-cpp-python or COMET (by the names its code uses) is in MODEL_SERVERS, so its
    slow tests are pinned."""
    from pathlib import Path

    starts = ("llama_cpp.server", "fresh_llama_server", "LocalServer(", "gemma.assemble(", "comet_worker",
              "llama_reference", "neural_sandbox")
    found = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        if path.stem == "test_lanes":
            continue
        text = path.read_text(encoding="utf-8")
        if "pytest.mark.slow" in text and any(s in text for s in starts):
            found.add(path.stem)
    assert {"test_judges_gemma", "test_runner_llama", "test_native_prompts", "test_sandbox"} <= found  # the scan sees
    missing = {m for m in found if m not in MODEL_SERVERS}
    assert not missing, f"add to tests/conftest.py MODEL_SERVERS (or show they start no server): {sorted(missing)}"

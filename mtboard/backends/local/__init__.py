"""Local model servers (issue 30, docs/ARCHITECTURE.md): starting llama-server / llama-cpp-python
(:mod:`~mtboard.backends.local.server`), inside the bubblewrap sandbox (:mod:`~mtboard.backends.local.sandbox`); the
script llama-cpp-python runs with a fresh KV cache per prompt (``llama_cpp_fresh.py``, never imported). The only place
that starts long-running processes.
"""

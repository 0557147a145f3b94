"""CLI command: ``mtboard plugin-gate`` (issue 18): where a plugin card's verification may run.

Prints one word — builtin | approved | unapproved — and, for plugin cards, the ``pip install`` requirement of the
recorded release; exit 0 (1 only for an unreadable card or approved list).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from mtboard.cli.app import app, fail, guarded


@app.command("plugin-gate")
@guarded
def plugin_gate_cmd(
    card: Annotated[Path, typer.Argument(help="The run card (read as untrusted data).")],
    approved: Annotated[Path, typer.Option("--approved", help="The maintained approved-plugins list.")]
    = Path("plugins/approved.yaml"),
    check_installed: Annotated[bool, typer.Option("--check-installed", help="Also require the installed plugin "
                                                  "(read from its files, never imported) to be the release the card "
                                                  "records; exit 1 otherwise.")] = False,
    plugin_dir: Annotated[Optional[Path], typer.Option("--plugin-dir", help="With --check-installed: the folder the "
                                                       "plugin was installed into (pip install --target). It is "
                                                       "searched after the harness's own packages, so nothing in it "
                                                       "can shadow them, and nothing in it is imported or run.")]
    = None,
) -> None:
    """Decide whether a card's method may be verified next to the API secrets: builtin (no plugin), approved (the
    exact plugin release is pinned in the approved list) or unapproved (verify in a job without secrets)."""
    from mtboard.core.documents import load_card
    from mtboard.verify.plugins import gate, load_approved

    c = load_card(card)
    decision = gate(c, load_approved(approved))
    typer.echo(decision)
    if c.method.plugin is not None:
        typer.echo(f"requirement {c.method.plugin.distribution}=={c.method.plugin.version}")
    if check_installed:
        import sys

        from mtboard.backends.base import plugin_record

        if plugin_dir is not None:
            # appended, not prepended (as PYTHONPATH would be): the harness's modules resolve first; importlib.metadata
            # finds the plugin's dist-info here. No .pth file of this folder is read (it is not a site directory).
            sys.path.append(str(plugin_dir.resolve()))

        if plugin_record(c.method.backend) != c.method.plugin:
            fail(f"the installed provider of backend {c.method.backend!r} is not the release the card records")
        typer.echo("installed release matches the card")

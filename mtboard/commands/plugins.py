"""CLI command: ``mtboard plugin-gate`` (issue 18): where a plugin card's verification may run.

Prints one word — builtin | approved | unapproved — and, for plugin cards, the ``pip install`` requirement of the
recorded release; exit 0 (1 only for an unreadable card or approved list).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mtboard.cli import app, fail, guarded


@app.command("plugin-gate")
@guarded
def plugin_gate_cmd(
    card: Annotated[Path, typer.Argument(help="The run card (read as untrusted data).")],
    approved: Annotated[Path, typer.Option("--approved", help="The maintained approved-plugins list.")]
    = Path("plugins/approved.yaml"),
    check_installed: Annotated[bool, typer.Option("--check-installed", help="Also require the installed plugin "
                                                  "(read from its files, never imported) to be the release the card "
                                                  "records; exit 1 otherwise.")] = False,
) -> None:
    """Decide whether a card's method may be verified next to the API secrets: builtin (no plugin), approved (the
    exact plugin release is pinned in the approved list) or unapproved (verify in a job without secrets)."""
    from mtboard.documents import load_card
    from mtboard.plugins import gate, load_approved

    c = load_card(card)
    decision = gate(c, load_approved(approved))
    typer.echo(decision)
    if c.method.plugin is not None:
        typer.echo(f"requirement {c.method.plugin.distribution}=={c.method.plugin.version}")
    if check_installed:
        from mtboard.backends.base import plugin_record

        if plugin_record(c.method.backend) != c.method.plugin:
            fail(f"the installed provider of backend {c.method.backend!r} is not the release the card records")
        typer.echo("installed release matches the card")

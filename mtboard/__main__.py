"""``python -m mtboard`` runs the CLI (:func:`mtboard.cli.entry.main`, as the ``mtboard`` console script does)."""

from mtboard.cli.entry import main

main()

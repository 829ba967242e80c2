"""``python -m kcspec``: the same as the ``kcspec`` command."""

from kcspec.cli import run

run()

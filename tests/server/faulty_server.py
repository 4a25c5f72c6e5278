"""`cudalint server` with a hover handler that raises: what any handler bug looks like."""

import sys

import cudalint.server.hover as hover


def broken(server, params):
    raise RuntimeError("injected hover failure")


hover.hover = broken

from cudalint.frontend.cli import main  # noqa: E402

sys.exit(main(["server"]))

"""`python -m cudalint.server` is `cudalint server`."""

import sys

from cudalint.frontend.cli import main

sys.exit(main(["server", *sys.argv[1:]]))

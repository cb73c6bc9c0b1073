"""`python -m mcpsqueeze.cli`: as the console script (`mcpsqueeze.__main__`), a wrapped backend starts
before click is imported."""

import sys

from ..transports import prestart_from_command_line

prestart_from_command_line(sys.argv[1:])

from . import main  # noqa: E402 - after the backend's start, on purpose

main()

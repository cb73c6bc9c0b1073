"""The `mcpsqueeze` console script (and `python -m mcpsqueeze`).

`wrap -- COMMAND` spawns COMMAND before the command line parser (click) is even imported, so that the
backend's start overlaps ours; then the CLI runs as usual.
"""

from __future__ import annotations

import sys

from .transports import prestart_from_command_line

__all__ = ["main"]


def main() -> None:
    prestart_from_command_line(sys.argv[1:])
    from .cli import main as cli

    cli()


if __name__ == "__main__":
    main()

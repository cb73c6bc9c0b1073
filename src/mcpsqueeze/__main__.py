"""The `mcpsqueeze` console script (and `python -m mcpsqueeze`)."""

from __future__ import annotations

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    main()

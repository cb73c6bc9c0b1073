"""`python -m mcpsqueeze.cli`, as the console script."""

from . import main

main()

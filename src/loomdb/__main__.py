"""`python -m loomdb` runs the command line."""

from .cli import main

main()

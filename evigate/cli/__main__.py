"""`python -m evigate.cli …` runs the same command line as the `evigate` script."""

from evigate.cli import main

main()

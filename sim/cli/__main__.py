"""``python -m sim.cli``: the ``sniff`` command."""

from sim.cli.main import main

main()

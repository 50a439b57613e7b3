"""``python -m otfair``: the ``otfair`` command line (:mod:`otfair.cli`)."""

from otfair.cli import main

if __name__ == "__main__":
    main()

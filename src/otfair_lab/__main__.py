"""``python -m otfair_lab``: the ``otfair`` command line (:mod:`otfair_lab.cli`)."""

from otfair_lab.cli import main

if __name__ == "__main__":
    main()

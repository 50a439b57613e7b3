"""``python -m otfair_lab.reproduction``: re-judge the committed reports and their quoted counts.

For every report folder under ``--root`` (default ``docs/reproduction``; the folders of
:data:`otfair_lab.reproduction._write.REPORTS`), re-judge ``comparison.csv`` with the current
rule and rewrite ``index.md`` (:func:`otfair_lab.reproduction.rejudge_report`); then rewrite
the generated counts block of each ``--readme`` file (default ``README.md`` and
``ROOT/README.md``). No run, no store: the values are the CSVs'.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from otfair_lab.reproduction._rejudge import rejudge_report, update_counts_block
from otfair_lab.reproduction._write import REPORTS


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m otfair_lab.reproduction", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("docs/reproduction"))
    parser.add_argument("--readme", type=Path, action="append", default=None)
    parser.add_argument("--when", default=None, help="Date written in the reports' header.")
    args = parser.parse_args(argv)
    root: Path = args.root
    if not root.is_dir():
        parser.error(f"--root {root} is not a directory")
    for folder, paper in REPORTS.items():
        if (root / folder / "comparison.csv").is_file():
            print(rejudge_report(paper, root / folder, when=args.when))
    readmes = args.readme if args.readme is not None else [Path("README.md"), root / "README.md"]
    for readme in readmes:
        prefix = os.path.relpath(root, readme.parent).replace(os.sep, "/")
        prefix = "" if prefix == "." else f"{prefix}/"
        changed = update_counts_block(readme, root, prefix)
        print(f"{readme}: counts {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Package version: the single source of truth.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``), so the installed metadata,
``otfair.__version__``, ``otfair --version``, the documentation site and ``CHANGELOG.md``'s
latest entry all name this version (``tests/test_release_files.py`` keeps them together).
"""

__version__ = "0.2.0"

"""`python -m capidx`: the same CLI as the `capidx` script, for when the script is not on PATH.

`capidx` has no folder of its own in this repository: its subpackages are top-level folders mapped by
setuptools' package-dir (pyproject.toml). This folder is mapped to `capidx` itself and holds only this
file, so `capidx` stays a namespace package (no `__init__.py`) in wheels and editable installs alike.
"""

from capidx.cli import main

if __name__ == "__main__":
    main()

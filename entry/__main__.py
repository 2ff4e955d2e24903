"""The `capidx` command (the console script) and `python -m capidx`: the same CLI.

`capidx` has no folder of its own in this repository: its subpackages are top-level folders mapped by
setuptools' package-dir (pyproject.toml). This folder is mapped to `capidx` itself and holds no `__init__.py`,
so `capidx` stays a namespace package in wheels and editable installs alike.

The CLI is imported inside `main`, not at the top of this module: loading click and the commands takes a few
tens of milliseconds, and a Ctrl-C in that time ends the command with 130 like a Ctrl-C later, not with the
traceback of an interrupted import.
"""

import sys


def main() -> None:
    try:
        from capidx.cli import main as run
    except KeyboardInterrupt:
        print(file=sys.stderr)  # the shell's prompt on a line of its own, after the terminal's ^C
        sys.exit(130)
    run()


if __name__ == "__main__":
    main()

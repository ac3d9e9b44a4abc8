#!/usr/bin/env python3
"""onepass's command line from a checkout: `python render.py --chapter 02` is the `onepass` command
(onepass/cli.py), for a project installed with `make install` (or `pip install -e .`)."""
import sys

try:
    from onepass.cli import main
except ModuleNotFoundError as exc:
    if (exc.name or "").split(".")[0] != "onepass":
        raise
    sys.exit("onepass is not installed in this Python: run `make install` (or "
             "`pip install -e . --no-deps` in the project's venv) first")

if __name__ == "__main__":
    sys.exit(main())

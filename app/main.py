"""Entry point of the ``dbxray`` command."""
import sys

from dbxray.app.cli import main as _main


def main() -> None:
    sys.exit(_main())


if __name__ == "__main__":
    main()

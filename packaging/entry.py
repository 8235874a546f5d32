"""Entry point of the frozen bundle."""
import sys

from dbxray.app.cli import main

if __name__ == "__main__":
    sys.exit(main())

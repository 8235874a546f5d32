"""Entry point of the frozen bundle."""
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # as app/main.py: no spinning BLAS threads

from dbxray.app.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

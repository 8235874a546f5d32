"""Entry point of the ``dbxray`` command."""
import os
import sys

# numpy's OpenBLAS starts one spinning thread per core at import (~0.1 s of a command's
# start on two cores) for matrix products dbxray never makes large (the estimators'
# few-element vectors); one thread unless the user chose otherwise
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from dbxray.app.cli import main as _main  # noqa: E402


def main() -> None:
    sys.exit(_main())


if __name__ == "__main__":
    main()

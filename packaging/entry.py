"""Entry point of the frozen bundle: the ``dbxray`` command's own (app/main.py)."""
from dbxray.app.main import main

if __name__ == "__main__":
    main()

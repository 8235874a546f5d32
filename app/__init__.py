"""dbxray application: main window, workers, export and the CLI."""
__version__ = "0.1.0"

"""Entry point of the ``dbxray`` command."""
import os
import sys

# numpy's OpenBLAS starts one spinning thread per core at import (~0.1 s of a command's
# start on two cores) for matrix products dbxray never makes large (the estimators'
# few-element vectors); one thread unless the user chose otherwise
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from dbxray.app.cli import is_headless, main as _main  # noqa: E402

#: the exit status of a command whose reader closed stdout early (``dbxray scan --json | head``):
#: what a shell reports for a program that SIGPIPE ended (128 + 13)
EXIT_STDOUT_CLOSED = 141


def main() -> None:
    headless = is_headless(sys.argv[1:])
    try:
        code = _main()
    except BrokenPipeError:
        if not headless or not _stdout_closed():
            raise
        code = EXIT_STDOUT_CLOSED
    if headless:
        # the command's output is written: no interpreter teardown (app/fastexit.py)
        from dbxray.app.fastexit import exit_without_teardown
        exit_without_teardown(code)
    sys.exit(code)


def _stdout_closed() -> bool:
    """Whether stdout's reader is gone (the pipe a BrokenPipeError came from, not another:
    a pipe without readers polls as an error); if so, stdout is pointed at /dev/null so
    that nothing more is written nor reported (the Python documentation's advice for
    SIGPIPE, the signal module's notes)."""
    import select
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if not any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0)):
            return False
    except (OSError, ValueError, AttributeError):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    return True


if __name__ == "__main__":
    main()

"""Progress of a long CLI command on stderr: monotonic (a figure never goes back, whatever
order the phases report in), a bar redrawn in place on a terminal, a plain line at every
10% otherwise (logs and CI output stay readable), and a last line when it ends."""
from __future__ import annotations

import sys
from typing import TextIO


class ProgressPrinter:
    """A ``progress(done, total, message)`` callback for the compressor layer's jobs."""

    def __init__(self, what: str, stream: TextIO | None = None, tty: bool | None = None, width: int = 30):
        self.what = what
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self.shown = -1.0          # the highest fraction shown so far
        self.step = -1             # the last 10% step printed (not a terminal)
        self.drawn = False

    def __call__(self, done: float, total: float, message: str = "") -> None:
        frac = min(1.0, max(0.0, done / total)) if total else 1.0
        if frac < self.shown:
            frac = self.shown                   # never backwards
        if self.tty:
            if frac == self.shown and not message:
                return
            fill = int(round(self.width * frac))
            bar = "#" * fill + "." * (self.width - fill)
            self.stream.write(f"\r{self.what} [{bar}] {frac * 100:3.0f}% {message[:60]:<60}")
            self.drawn = True
        else:
            step = int(frac * 10)
            if step > self.step:
                self.step = step
                self.stream.write(f"{self.what}: {step * 10}%{(' ' + message[:80]) if message else ''}\n")
        self.shown = frac
        self.stream.flush()

    def close(self, message: str = "done") -> None:
        """The last line: the bar at 100% (terminal) or the 100% line, then ``message``."""
        if self.shown < 1.0:
            self(1, 1, "")
        if self.tty and self.drawn:
            self.stream.write("\n")
        self.stream.write(f"{self.what}: {message}\n")
        self.stream.flush()

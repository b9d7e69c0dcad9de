"""Progress lines on stderr for long work; `--quiet` silences them."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self._last_step = -1

    def say(self, message: str) -> None:
        if not self.quiet:  # one write: a line is never split (collect/ort_stage.session_log may capture descriptor 2
            # meanwhile, in another thread, and pass the line on after it)
            self.stream.write(f"[qdqreport {time.perf_counter() - self.start:6.1f}s] {message}\n")
            self.stream.flush()

    def count(self, what: str, done: int, total: int) -> None:
        """Report every tenth of the way (and the last item), not every item."""
        step = (10 * done) // max(total, 1)
        if step != self._last_step or done == total:
            self._last_step = step
            self.say(f"{what}: {done}/{total}")

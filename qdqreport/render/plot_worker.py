"""The report's plots drawn in other processes while this one reads the bundle and runs the rules (issue 12).

Importing matplotlib (0.4-0.6 s) and drawing the figures (up to 0.6 s for six) are most of a `qdqreport report`
run. `report` forks a worker before its other imports (start_plot_worker): the worker imports matplotlib while the
main process imports the rest, reads the bundle, runs the rules and builds the ReportModel; the parts of the model
the plots read are then sent to the worker through a pipe (pickled, 10-60 KB, the report model's views as plain
namespaces: the worker never imports the report model, 0.1-0.14 s off its path), the worker forks once more to share
the figures between two cores (PlotJob.cost), and the SVGs of report_plots come back the same way. The SVGs are the ones this process
would draw (the same code and matplotlib; every figure is its own Figure, drawn in any order), so report.html is
byte-identical.

Anything that goes wrong on the way (no worker, a crash, an exception while drawing, a reply that cannot be read,
no reply within TIMEOUT_S) gives None, and the caller draws the plots itself, where an error is raised and
reported as before. Warnings raised while drawing are sent back and issued again here.

Only on Linux (fork, no system framework that breaks in a forked child), with two or more usable cores, in a
process running one thread (a host with threads is not forked), and when a core is free: at a 1-minute load
average of the cores less half a core or more, the forks only add their cost (on the 2-core machine at load
3.5-4.6: +10-20% CPU and wall, docs/BENCHMARKS.md) and the plots are drawn in process. QDQREPORT_PLOT_WORKER=0
turns the worker off, =1 starts it whatever the load.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import select
import signal
import sys
import threading
import time
import warnings
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from qdqreport.render.plots import PlotJob
    from qdqreport.report.model import ReportModel

ENV_SWITCH = "QDQREPORT_PLOT_WORKER"
TIMEOUT_S = 300.0  # no reply by then: the worker is killed and the plots are drawn here
_REGISTRIES: dict[str, dict] = {}  # warnings issued again, per file they came from: each shown once, as in process


class PlotWorker:
    """A forked process that will draw one report's plots (draw), or is killed and reaped (close)."""

    def __init__(self, pid: int, to_worker: int, from_worker: int) -> None:
        self._pid: int | None = pid
        self._to: int | None = to_worker
        self._from: int | None = from_worker

    def draw(self, model: ReportModel) -> dict[str, Any] | None:
        """report_plots(model), drawn by the worker; None when it could not: the caller draws them."""
        if self._pid is None:
            return None
        try:
            _write_all(self._to, pickle.dumps(plot_data(model), protocol=pickle.HIGHEST_PROTOCOL))
            self._close_fd("_to")
            status, plots, caught = pickle.loads(_read_all(self._from, time.monotonic() + TIMEOUT_S))
        except Exception:  # noqa: BLE001  a worker's trouble is never the report's: draw here instead
            return None
        finally:
            self.close()
        if status != "ok":
            return None
        _issue_again(caught)
        return plots

    def close(self) -> None:
        """Close the pipes, end the worker if it still runs (killed by its pid) and reap it."""
        self._close_fd("_to")
        self._close_fd("_from")
        pid, self._pid = self._pid, None
        if pid is None:
            return
        try:
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    def _close_fd(self, name: str) -> None:
        fd = getattr(self, name)
        if fd is not None:
            setattr(self, name, None)
            os.close(fd)


def plot_data(model: ReportModel) -> SimpleNamespace:
    """What report_plots reads of *model* (findings, comparisons, precision, layers, engine) with every view of
    qdqreport.report as a SimpleNamespace of its fields, so that unpickling it loads no module of the report model.
    Values of other classes (analysis records and judgements) stay as they are. A plot that reads a view's property
    finds no attribute in the worker, which fails, and the plots are drawn in process (tests/test_plot_worker.py
    checks that the worker draws every kind of plot)."""
    return SimpleNamespace(**{name: _plain(getattr(model, name))
                              for name in ("findings", "comparisons", "precision", "layers", "engine")})


def _plain(value: Any) -> Any:
    if type(value).__module__.startswith("qdqreport.report.") and dataclasses.is_dataclass(value):
        return SimpleNamespace(**{f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if type(value) in (list, tuple):
        return type(value)(_plain(item) for item in value)
    if type(value) is dict:
        return {key: _plain(item) for key, item in value.items()}
    return value


def start_plot_worker() -> PlotWorker | None:
    """Fork the worker (it starts importing matplotlib at once), or None where the plots are drawn in process."""
    switch = os.environ.get(ENV_SWITCH, "")
    if switch == "0" or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return None
    if threading.active_count() != 1 or _cores() < 2 or (switch != "1" and _busy()):
        return None
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    _flush_std()
    try:
        pid = os.fork()
    except OSError:
        for fd in (down_r, down_w, up_r, up_w):
            os.close(fd)
        return None
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        _serve(down_r, up_w)  # never returns
    os.close(down_r)
    os.close(up_w)
    return PlotWorker(pid, down_w, up_r)


# --- in the worker -------------------------------------------------------------------------------
def _serve(from_parent: int, to_parent: int) -> None:
    """The worker's whole life: import, wait for the model, draw, reply, exit (never returns, never runs the
    parent's exit handlers or flushes its buffers)."""
    try:
        from qdqreport.render import plots  # matplotlib: what this process is here to import

        data = _read_all(from_parent)
        os.close(from_parent)
        if not data:  # the parent stopped before the model (an error, or it draws itself)
            os._exit(0)
        model = pickle.loads(data)
    except BaseException:  # noqa: BLE001  the parent draws instead, and raises what there is to raise
        _answer_and_exit(to_parent, None)
    _answer_and_exit(to_parent, lambda: plots.report_plots(model, draw=_shared_draw))


def _answer_and_exit(fd: int, compute: Callable[[], Any] | None) -> None:
    """In a forked process: send ("ok", compute(), the warnings it raised) through *fd*, or ("error", None, []) when it
    raises (or there is nothing to compute: the other side then draws and raises itself), then leave at once."""
    code = 1
    try:
        if compute is None:
            raise RuntimeError("nothing to draw")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reply: tuple = ("ok", compute(), _portable(caught))
    except BaseException:  # noqa: BLE001  the other side draws again and raises what there is to raise
        reply = ("error", None, [])
    try:
        _write_all(fd, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    finally:
        os._exit(code)


def _shared_draw(jobs: list[PlotJob]) -> list[str | None]:
    """Draw *jobs* in this process and a forked one, about half the cost each; results in job order."""
    mine, theirs = _share(jobs)
    if not theirs:
        return [job.draw() for job in jobs]
    read_fd, write_fd = os.pipe()
    _flush_std()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _answer_and_exit(write_fd, lambda: {i: jobs[i].draw() for i in theirs})
    os.close(write_fd)
    try:
        svgs: list[str | None] = [None] * len(jobs)
        for i in mine:
            svgs[i] = jobs[i].draw()
        data = _read_all(read_fd)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    status, drawn, caught = pickle.loads(data) if data else ("error", None, [])
    if status != "ok":
        drawn = {i: jobs[i].draw() for i in theirs}  # raises here what the other process met
    _issue_again(caught)
    for i in theirs:
        svgs[i] = drawn[i]
    return svgs


def _share(jobs: list[PlotJob]) -> tuple[list[int], list[int]]:
    """Job indices for this process and for the other: the costliest first, each to the less loaded side."""
    costly = sorted((i for i, job in enumerate(jobs) if job.cost > 0), key=lambda i: -jobs[i].cost)
    if len(costly) < 2 or _cores() < 2:
        return list(range(len(jobs))), []
    loads = [0.0, 0.0]
    sides: list[list[int]] = [[], []]
    for i in costly:
        side = 0 if loads[0] <= loads[1] else 1
        loads[side] += jobs[i].cost
        sides[side].append(i)
    sides[0].extend(i for i, job in enumerate(jobs) if job.cost <= 0)
    return sorted(sides[0]), sorted(sides[1])


# --- helpers -------------------------------------------------------------------------------------
def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _busy() -> bool:
    """No core to spare: the 1-minute load average is at least the usable cores less half a core."""
    try:
        return os.getloadavg()[0] >= _cores() - 0.5
    except OSError:
        return True


def _flush_std() -> None:
    # Text buffered before a fork would otherwise be written by both processes.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _portable(caught: list[warnings.WarningMessage]) -> list[tuple[str, type[Warning], str, int]]:
    return [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _issue_again(caught: list[tuple[str, type[Warning], str, int]]) -> None:
    for message, category, filename, lineno in caught:
        warnings.warn_explicit(message, category, filename, lineno, registry=_REGISTRIES.setdefault(filename, {}))


def _write_all(fd: int | None, data: bytes) -> None:
    assert fd is not None
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd: int | None, deadline: float | None = None) -> bytes:
    """Everything until the writer closes its end; TimeoutError after *deadline* (time.monotonic())."""
    assert fd is not None
    chunks = []
    while True:
        if deadline is not None:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("plot worker: no reply")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)

"""The plot worker (render/plot_worker.py): `qdqreport report` draws its plots in forked processes while the main one
reads the bundle (issue 12). The plots are the ones drawn in process; any trouble in the worker means the plots are
drawn in process, as before; the worker never outlives the run; the main process never imports matplotlib."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.render import plot_worker, plots
from qdqreport.report.model import build_report

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ROOT / "corpus" / "lay_all_convs"  # six plots: two comparisons, precision bars, the per-layer line
ENGINE = ROOT / "sample_bundles" / "trt_mobilenet_qat_layerinfo"  # the engine precision map
DBNET = ROOT / "corpus" / "det_fp16_default"  # a threshold on the cosine plot, the FP16 control's comparison

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                                reason="the worker runs on Linux with two or more cores only")


@pytest.fixture(autouse=True)
def whatever_the_load(monkeypatch):
    monkeypatch.setenv("QDQREPORT_PLOT_WORKER", "1")  # on a busy machine the worker is not started (_busy)


def model_of(path: Path):
    bundle = Bundle(path)
    ctx = Context(bundle)
    return build_report(bundle, run_rules(ctx), ctx)


@pytest.fixture(scope="module")
def model():
    return model_of(LAYERS)


def children() -> set[int]:
    return {int(pid) for pid in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()}


def test_the_worker_draws_the_plots_this_process_draws(model):
    before = children()
    worker = plot_worker.start_plot_worker()
    assert worker is not None
    drawn = worker.draw(model)
    assert drawn == plots.report_plots(model)  # every SVG byte for byte, in the same keys and order
    assert list(drawn) == list(plots.report_plots(model))
    assert sum(svg is not None for svg in drawn["comparisons"][model.comparisons[0].id].values()) == 2
    assert drawn["precision"] and drawn["layers"]
    assert children() == before  # both worker processes reaped


@pytest.mark.parametrize("path", [ENGINE, DBNET], ids=lambda p: p.name)
def test_the_worker_draws_every_kind_of_plot(path):
    # A plot that read something plot_data leaves out (a view's property) would fail in the worker: drawn is None.
    model = model_of(path)
    worker = plot_worker.start_plot_worker()
    assert worker is not None
    assert worker.draw(model) == plots.report_plots(model)


@pytest.mark.parametrize("path", [LAYERS, ENGINE, DBNET], ids=lambda p: p.name)
def test_the_plot_data_unpickles_without_the_report_model(path):
    # The worker never imports the report model (0.1 s on its path): unpickling what it is sent, after the imports
    # of the CLI it is forked from, loads at most the small analysis/records.py.
    data = pickle.dumps(plot_worker.plot_data(model_of(path)), protocol=pickle.HIGHEST_PROTOCOL)
    probe = ("import pickle, sys; import qdqreport.cli, qdqreport.render.plot_worker; before = set(sys.modules); "
             "pickle.loads(sys.stdin.buffer.read()); print(*sorted(set(sys.modules) - before))")
    result = subprocess.run([sys.executable, "-c", probe], input=data, capture_output=True, check=True, cwd=ROOT)
    assert set(result.stdout.decode().split()) <= {"qdqreport.analysis.records"}


def test_a_failing_plot_means_drawing_in_process(model, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(plots, "layers_plot", broken)  # inherited by the forked worker
    before = children()
    worker = plot_worker.start_plot_worker()
    assert worker is not None and worker.draw(model) is None
    assert children() == before
    with pytest.raises(RuntimeError, match="drawing failed"):  # the caller draws, and meets the error itself
        plots.report_plots(model)


def test_a_worker_that_is_never_sent_a_model_is_ended_and_reaped():
    before = children()
    worker = plot_worker.start_plot_worker()
    assert worker is not None and children() != before
    worker.close()
    assert children() == before
    worker.close()  # twice is harmless


def test_warnings_raised_while_drawing_are_issued_in_the_main_process(model, monkeypatch):
    real = plots.precision_bar

    def warns(*args, **kwargs):
        warnings.warn("glyph missing from the font", UserWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(plots, "precision_bar", warns)
    worker = plot_worker.start_plot_worker()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drawn = worker.draw(model)
    assert drawn is not None and drawn["precision"]
    assert [str(w.message) for w in caught] == ["glyph missing from the font"]


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("QDQREPORT_PLOT_WORKER", "0")
    assert plot_worker.start_plot_worker() is None


def test_not_started_when_no_core_is_free(monkeypatch):
    monkeypatch.delenv("QDQREPORT_PLOT_WORKER")
    monkeypatch.setattr(os, "getloadavg", lambda: (len(os.sched_getaffinity(0)) - 0.5, 0.0, 0.0))
    assert plot_worker.start_plot_worker() is None
    monkeypatch.setattr(os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    worker = plot_worker.start_plot_worker()
    assert worker is not None
    worker.close()


def test_the_jobs_are_shared_by_cost(model):
    jobs, _ = plots.plot_jobs(model)
    mine, theirs = plot_worker._share(jobs)
    assert sorted(mine + theirs) == list(range(len(jobs)))
    cost = [sum(jobs[i].cost for i in side) for side in (mine, theirs)]
    assert theirs and abs(cost[0] - cost[1]) <= max(job.cost for job in jobs)


@pytest.mark.slow
def test_report_never_imports_matplotlib_in_the_main_process(tmp_path):
    # The worker imports it; the main process imports only what reading, judging and templating need.
    code = ("import sys; from qdqreport.cli import main; code = main(['report', sys.argv[1], '-o', sys.argv[2]]); "
            "print(code, 'matplotlib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code, str(LAYERS), str(tmp_path / "out")], cwd=ROOT,
                            capture_output=True, text=True, check=True, env={**os.environ, "QDQREPORT_PLOT_WORKER": "1"})
    assert result.stdout.split()[-2:] == ["0", "False"]
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert html.count("<svg") == 6
    off = subprocess.run([sys.executable, "-m", "qdqreport", "report", str(LAYERS), "-o", str(tmp_path / "in-process")],
                         cwd=ROOT, capture_output=True, text=True, env={**os.environ, "QDQREPORT_PLOT_WORKER": "0"})
    assert off.returncode == 0, off.stderr
    for name in ("report.html", "report.md", "findings.json"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "in-process" / name).read_bytes()

"""The per-layer pass's sequential path (a sample's marked values above PIPELINE_BYTES: the synthetic 102 MB model, PP-OCRv4
rec) writes the QDQ run's values, then the local run's, into one set of buffers (layerwise._bound_run, ONNX Runtime's
I/O binding), and a QDQ model read from external data files gives the local graph its weights from that file, not a
copy (models.stored_tensors). Where the values live changes, not what the kernels compute: the rows are the same, bit
for bit (docs/BENCHMARKS.md, session 37)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from qdqreport.collect import layerwise, models
from qdqreport.collect.layerwise import LayerCollector
from test_layer_sessions import same_rows

DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def _rows(fp32: onnx.ModelProto, qdq: onnx.ModelProto, samples) -> tuple[list, LayerCollector]:
    collector = LayerCollector(fp32, qdq, keep_outputs=False)
    collector.add_all(samples)
    result = collector.result()
    return [*result.layer_rows, *result.qnode_rows], collector


def test_the_sequential_path_runs_qdq_and_local_into_shared_buffers_and_gives_thesame_rows(monkeypatch, eval_x) -> None:
    samples = [{"x": eval_x[i:i + 1]} for i in range(4)]
    fp32, qdq = onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx"))
    real = layerwise._bound_run
    bound: list[int] = []

    def counted(session, names, feed, buffers):
        values = real(session, names, feed, buffers)
        bound.append(sum(value is buffer for value, buffer in zip(values, buffers) if buffer is not None))
        return values

    with monkeypatch.context() as patch:
        patch.setattr(layerwise, "PIPELINE_BYTES", 0)  # every sample above it: the sequential path
        patch.setattr(layerwise, "_bound_run", counted)
        rows, collector = _rows(fp32, qdq, samples)
    assert collector.local is not None and collector._buffers
    # 4 QDQ runs and 4 local runs, each writing its values into the buffers
    assert len(bound) == 8 and min(bound) > 50
    with monkeypatch.context() as patch:  # the same path with every run unbound, as before
        patch.setattr(layerwise, "PIPELINE_BYTES", 0)
        patch.setattr(layerwise, "_bound_run", lambda session, names, feed, buffers: session.run(names, feed))
        before, _ = _rows(fp32, qdq, samples)
    same_rows(rows, before)
    pipelined, _ = _rows(fp32, qdq, samples)  # and as the pipelined path folds them
    same_rows(rows, pipelined)


def test_a_sample_of_other_shapes_runs_those_outputs_unbound_and_gives_thesame_rows(monkeypatch, eval_x) -> None:
    """The demo classifier takes any height and width: a sample of another width than the first gets no buffer for
    the values whose shape changed (LayerCollector._fitting), and the rows are those of unbound runs."""
    samples = [{"x": eval_x[0:1]}, {"x": np.ascontiguousarray(eval_x[1:2, :, :, :160])}, {"x": eval_x[2:3]}]
    fp32, qdq = onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx"))
    real = layerwise._bound_run
    fitted: list[int] = []

    def counted(session, names, feed, buffers):
        fitted.append(sum(buffer is not None for buffer in buffers))
        return real(session, names, feed, buffers)

    with monkeypatch.context() as patch:
        patch.setattr(layerwise, "PIPELINE_BYTES", 0)
        patch.setattr(layerwise, "_bound_run", counted)
        rows, _ = _rows(fp32, qdq, samples)
    assert len(fitted) == 6 and fitted[0] == fitted[4] > 50 and fitted[2] < fitted[0]  # QDQ runs: 0, 2, 4
    with monkeypatch.context() as patch:
        patch.setattr(layerwise, "PIPELINE_BYTES", 0)
        patch.setattr(layerwise, "_bound_run", lambda session, names, feed, buffers: session.run(names, feed))
        before, _ = _rows(fp32, qdq, samples)
    same_rows(rows, before)


def test_the_double_buffered_path_runs_qdq_and_local_into_two_sets_of_buffers_and_gives_thesame_rows(monkeypatch,
                                                                                                      eval_x) -> None:
    """A sample of DOUBLE_BUFFER_ABOVE to PIPELINE_BYTES of marked values (DBNet at 160x160): the QDQ runs write into the
    shared buffers and the local runs into a set of their own, the local run overlapping the fold of the QDQ values and
    the next sample's marked runs the fold of the local values; the rows are those of the pipelined path."""
    samples = [{"x": eval_x[i:i + 1]} for i in range(5)]
    fp32, qdq = onnx.load(str(DEMO / "cls_fp32.onnx")), onnx.load(str(DEMO / "cls_int8.onnx"))
    real = layerwise._bound_run
    bound: list[tuple[int, int]] = []

    def counted(session, names, feed, buffers):
        values = real(session, names, feed, buffers)
        written = [value for value, buffer in zip(values, buffers) if buffer is not None and value is buffer]
        bound.append((len(written), id(written[0]) if written else 0))
        return values

    with monkeypatch.context() as patch:
        patch.setattr(layerwise, "DOUBLE_BUFFER_ABOVE", 0)  # every sample above it and below PIPELINE_BYTES
        patch.setattr(layerwise, "_bound_run", counted)
        rows, collector = _rows(fp32, qdq, samples)
    assert collector.local is not None and collector._buffers and collector._local_buffers
    assert not set(map(id, collector._buffers.values())) & set(map(id, collector._local_buffers.values()))
    # 5 QDQ runs and 5 local runs, each writing its values into its own set
    assert len(bound) == 10 and min(count for count, _ in bound) > 50
    qdq_set, local_set = set(map(id, collector._buffers.values())), set(map(id, collector._local_buffers.values()))
    assert sum(first in qdq_set for _, first in bound) == 5 and sum(first in local_set for _, first in bound) == 5
    pipelined, _ = _rows(fp32, qdq, samples)  # as the pipelined path folds them (the demo is below the bound)
    assert _._local_buffers is None
    same_rows(rows, pipelined)
    with monkeypatch.context() as patch:  # and with every run unbound
        patch.setattr(layerwise, "DOUBLE_BUFFER_ABOVE", 0)
        patch.setattr(layerwise, "_bound_run", lambda session, names, feed, buffers: session.run(names, feed))
        unbound, _ = _rows(fp32, qdq, samples)
    same_rows(rows, unbound)


def test_a_value_that_does_not_fit_its_buffer_runs_unbound(eval_x) -> None:
    session = onnxruntime.InferenceSession(str(DEMO / "cls_fp32.onnx"), providers=["CPUExecutionProvider"])
    name = session.get_outputs()[0].name
    feed = {"x": eval_x[:1]}
    expected = session.run([name], feed)[0]
    wrong = np.zeros((expected.size + 1,), np.float32)
    (value,) = layerwise._bound_run(session, [name], feed, [wrong])
    assert value is not wrong and np.array_equal(value, expected) and not wrong.any()
    right = np.empty(expected.shape, np.float32)
    (value,) = layerwise._bound_run(session, [name], feed, [right])
    assert value is right and np.array_equal(value, expected)


def test_the_local_graph_of_a_qdq_model_in_external_data_reads_its_weights_from_the_file(tmp_path, eval_x,
                                                                                        monkeypatch) -> None:
    qdq = _with_initializers(onnx.load(str(DEMO / "cls_int8.onnx")))
    onnx.save_model(qdq, str(tmp_path / "qdq.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="qdq.onnx.data", size_threshold=1024)
    loaded = models.load_model(tmp_path / "qdq.onnx", "--qdq")
    assert loaded.external_data
    samples = [{"x": eval_x[i:i + 1]} for i in range(3)]
    sources: list = []
    real = layerwise.new_session

    def recorded(source, *args, **kwargs):
        sources.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(layerwise, "new_session", recorded)
    fp32 = onnx.load(str(DEMO / "cls_fp32.onnx"))
    rows, collector = _rows(fp32, loaded.proto, samples)
    local = sources[-1]
    assert collector.local is not None and isinstance(local, models.ExternalModel)
    assert local.folder == str(tmp_path)
    in_memory = _with_initializers(onnx.load(str(DEMO / "cls_int8.onnx")))
    before, old = _rows(fp32, in_memory, samples)
    assert not isinstance(sources[-1], models.ExternalModel)
    # the local graph carries references to the file, not the weights
    assert collector.local_model.proto.ByteSize() < old.local_model.proto.ByteSize() / 2
    same_rows(rows, before)


def _with_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """*model* with its Constant nodes' tensors as initializers (the demo's ModelOpt export keeps its weights in
    Constant nodes; quantize_static writes initializers, which external data holds)."""
    kept = []
    for node in model.graph.node:
        value = next((a.t for a in node.attribute if a.name == "value"), None) if node.op_type == "Constant" else None
        if value is None:
            kept.append(node)
            continue
        tensor = onnx.TensorProto()
        tensor.CopyFrom(value)
        tensor.name = node.output[0]
        model.graph.initializer.append(tensor)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return model

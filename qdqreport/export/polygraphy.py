"""export --polygraphy DIR: each stage's outputs as Polygraphy RunResults JSON and the saved
inputs as Polygraphy input JSON, so a GPU machine can replay and compare:

    polygraphy run qdq.onnx --trt --load-inputs DIR/inputs.json --load-outputs DIR/ort_qdq.json

Iteration i is the bundle's sample i. Polygraphy's own serialisation is used (imported here,
lazily: it is in the [collect] extra, not in the renderer's core install).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from qdqreport.bundle.layout import load_stage_outputs, split_key
from qdqreport.bundle.reader import Bundle
from qdqreport.collect.save_inputs import INPUTS_ARTIFACT
from qdqreport.errors import InputError
from qdqreport.export.publish import staged_folder

INPUTS_FILE = "inputs.json"
RUNNER_PREFIX = "qdqreport_"  # runner name in each RunResults: qdqreport_<stage id>


def export_polygraphy(bundle: Bundle, destination: Path, force: bool = False) -> list[Path]:
    """Write <stage>.json per stage with outputs and inputs.json when the bundle saved its inputs."""
    comparator, pjson = _polygraphy()
    stages = [s["id"] for s in bundle.manifest["stages"] if s["status"] == "ok" and bundle.has(s["artifacts"].get("outputs"))]
    inputs = saved_inputs(bundle)
    if not stages and inputs is None:
        raise InputError(f"{bundle.location}: no stage outputs and no saved inputs to export; "
                         "re-run `qdqreport collect` (with --save-inputs for the inputs)")
    names = []
    with staged_folder(destination, force, "--polygraphy") as staging, _quiet():
        for stage_id in stages:
            results = _run_results(comparator, stage_id, _stage_outputs(bundle, stage_id))
            results.save(str(staging / f"{stage_id}.json"))
            names.append(f"{stage_id}.json")
        if inputs is not None:
            pjson.save_json(inputs, str(staging / INPUTS_FILE), description="qdqreport evaluation inputs")
            names.append(INPUTS_FILE)
    return [destination / name for name in names]


def saved_inputs(bundle: Bundle) -> list[OrderedDict] | None:
    """The inputs stored by collect --save-inputs, one feed dict per sample in sample order."""
    path = bundle.manifest["artifacts"].get(INPUTS_ARTIFACT)
    if not isinstance(path, str) or not bundle.has(path):
        return None
    feeds: dict[int, OrderedDict] = {}
    for key, value in bundle.npz(path).items():
        try:
            index, name = split_key(key)
        except ValueError:
            raise InputError(f"{bundle.location}: {path} holds the key {key!r}, not <sample>/<input>; "
                             "re-run `qdqreport collect --save-inputs`") from None
        feeds.setdefault(index, OrderedDict())[name] = value
    if sorted(feeds) != list(range(len(feeds))):
        raise InputError(f"{bundle.location}: {path} skips sample numbers; re-run `qdqreport collect --save-inputs`")
    return [feeds[i] for i in range(len(feeds))]


def _stage_outputs(bundle: Bundle, stage_id: str) -> list[dict]:
    try:
        return load_stage_outputs(bundle, stage_id)
    except ValueError:  # a key that is not <sample>/<output>: the bundle was altered
        raise InputError(f"{bundle.location}: the outputs of stage {stage_id} hold a key that is not "
                         "<sample>/<output>; re-run `qdqreport collect`") from None


def _run_results(comparator, stage_id: str, samples: list[dict]):
    runner = RUNNER_PREFIX + stage_id
    iterations = [comparator.IterationResult(outputs=OrderedDict(sorted(sample.items())), runner_name=runner)
                  for sample in samples]
    return comparator.RunResults([(runner, iterations)])


def _quiet():
    # Polygraphy logs each save with the staging path; the CLI prints the final paths instead.
    from polygraphy.logger import G_LOGGER

    return G_LOGGER.verbosity(G_LOGGER.ERROR)


def _polygraphy():
    try:
        from polygraphy import comparator
        from polygraphy import json as pjson
    except ImportError:
        raise InputError("export --polygraphy needs Polygraphy: pip install 'qdqreport[collect]' "
                         "(or pip install polygraphy)") from None
    return comparator, pjson

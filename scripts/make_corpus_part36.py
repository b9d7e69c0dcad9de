"""The thirty-sixth sealed part of the corpus: a batch made on 2026-11-28 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part36.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex36/wh]

--wheels is a folder holding two package folders (no network at run time): <wheels>/surfaces_onnx_files is
surfaces-onnx-files 0.0.1's package folder (`pip download --no-deps surfaces-onnx-files==0.0.1`, unzipped: its wheel
ships the pre-trained ONNX surrogate models of the surfaces library, each with its meta.json), and <wheels>/surfaces
is surfaces 0.9.0's (`pip download --no-deps surfaces==0.9.0`, unzipped: the black-box optimization benchmark library
that loads those surrogates; its SurrogateLoader, which encodes a configuration for the model and runs it, and its
KNeighborsClassifierFunction, whose class attributes give the search space, are read from it; the package itself is
not installed: its __init__ asks for installed metadata, so the loader module is loaded by itself and the search
space read from the class's source). Nothing comes from a hub. One family only. Nothing is synthetic but the
random-calibration fault's noise: the inputs are the surrogate's own domain, every configuration of the package's
search space (n_neighbors 3, 8, ..., 148, the 4 algorithms) for each of the 12 problems it serves (datasets digits,
iris and wine, its meta.json's encodings, x cv 2, 3, 5 and 10, the package's available_cv), encoded by the package's
own SurrogateLoader._encode_params. These are not measured data: a surrogate's inputs are configurations, and the
evaluation is the whole finite domain an optimizer queries (the healthy calibration's draws are taken from the same
domain, so they repeat evaluation rows). What each case is measured against is the FP32 model's own predictions.
Every label carries "added_for": THIRTY_SIXTH_PART (scripts/corpus_score.py), so the scorer reports the batch apart and
prints only its totals unless --show-sealed (STILL_SEALED). The decision measured was fixed before any model was
made; the recipe was then chosen after a screening of recipes on the evaluation (symmetric MinMax INT8 on the
healthy calibration, pairwise comparisons changed of 85679: all 3 MatMuls 14584; the first two 12138; the first only
6005; the second only 12813; the third only 6815; the second and third 14875; all 3 with percentile 14511): the
first two MatMuls were kept as the recipe, the usual keep-the-output-layer-float practice (as parts 34 and 35 keep
theirs), and all 3 made the sensitive-layer fault; the first-only recipe, which changed fewest, was not taken: it
leaves the hidden layer float, which no user's recipe does. The --measure run then made and measured every case,
nothing re-chosen after it; the labels were written from how each case was made and from what the quantization did
to the task's decisions (--measure: this script's own ONNX Runtime runs, through the package's own SurrogateLoader),
before any rule, report or the scorer was run on the cases; the "harmless" marks (scripts/corpus_score.py's
HARMLESS_POLICY) come from those measurements alone. Two earlier screening runs measured models that were not what
they claimed, and were discarded before any case was made: quant_pre_process's symbolic shape inference stops on the
ai.onnx.ml Scaler, and with it skipped but the optimiser on, the Cast after the Scaler was dropped, no tensor after
the Scaler had a type, and quantize_static quantized the weights only ("failed to infer the type of tensor" for every
activation): 1753 and 1197 comparisons changed, weight-only models; the FP32 model now keeps the Cast
(skip_optimization). Dropped: a sensitive-head fault quantizing the output layer's bias Add as well (the predicted
accuracy itself in INT8): quantize_static writes a QuantizeLinear on the graph output whose INT8 output type does not
match its UINT8 zero-point, and ONNX Runtime refuses the model (a quantizer defect, not a user's fault to label).

New family (a new task kind for the corpus: a surrogate model of a hyperparameter-optimization benchmark, a
regression whose outputs an optimizer compares):
- hpo: surfaces-onnx-files 0.0.1's k_neighbors_classifier.onnx (skl2onnx 1.19.1, opset 21 and ai.onnx.ml 1; Simon
  Blanke's surfaces library, trained on 1224 measured cross-validation runs, R2 0.96): an sklearn MLPRegressor, an
  ai.onnx.ml Scaler (standardisation of the 4 inputs), a Cast, then MatMul + Add + ReLU 4 -> 64, 64 -> 64, and MatMul +
  Add 64 -> 1, a Reshape: input `input` [N, 4] float (n_neighbors, algorithm code, cv folds, dataset code, the order of
  its meta.json's param_names), output `variable` [N, 1], the predicted mean cross-validated accuracy of
  sklearn's KNeighborsClassifier with those hyperparameters on that dataset. The FP32 model is the package's file
  through onnxruntime's quant_pre_process with skip_symbolic_shape and skip_optimization (see above; ONNX's shape
  inference types every tensor after the Cast). Data: evaluation the whole domain, 12 problems x 120 configurations =
  1440 rows (hpo_eval.npz, every row in the bundles); healthy calibration: 144 draws of a random search over the
  domain (each parameter uniformly from its list, seed 20261128), encoded by the package. The decision measured
  (--measure): the package's SurrogateLoader.predict with the case's model as its session, over each problem's 120
  configurations, against FP32's; a comparison-based optimizer decides by comparing two configurations of one
  problem, so the decisions counted are the 12 x 7140 pairs (FP32's exact ties, 1, left out; a tie under the case
  counts as changed): a pair changes when the case orders it otherwise than FP32. Reported beside it: the grid
  search's best configuration per problem (changed or not, and the FP32-predicted accuracy lost by the case's
  choice) and the predicted accuracy's error. The decision changes counted for HARMLESS_POLICY are the pairs changed.
  This surrogate is fragile under INT8: the four algorithms give the same accuracy in truth, so many of a problem's
  configurations are near-ties in its predictions, and every INT8 recipe tried moves thousands of them (the healthy
  controls 12122-12138, 14%, and the best configuration of every problem); the faults are judged against that.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe (RECIPE): the
first two MatMuls (4 -> 64, 64 -> 64) in INT8; the output layer's MatMul (64 -> 1), the Scaler, the Cast, the bias Adds,
the ReLUs and the Reshape float. The healthy control made for TensorRT is quantize_static with TensorRT-compatible
settings (symmetric INT8, zero-points 0, QuantizeBias=False). A MatMul has no bias input (the MLP's biases are separate
Adds), so quantize_static writes no int32 bias with the recipe and QuantizeBias=False makes the same model as
hpo_healthy_ort_sym (as on part 35's and g2p-id's MatMuls); scripts/label_targets.py then leaves the targets the labels
give: the ORT healthy controls onnxruntime (TARGET_ORT), every fault the default, tensorrt (no bundle holds an int32
bias DequantizeLinear node: hpo_overquant's Adds take INT8 inputs, not a quantized bias). The bundles were collected
with the collector of commit e636946 (a worktree of it whose qdqreport/ was unchanged, PYTHONPATH set to it and the
imported qdqreport checked to be the worktree's), and the part was scored while sealed on the rules of e636946 in that
worktree (totals only). Models and data go to build/corpus-work/."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_part2 as part2  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTY_SIXTH_PART = "sealed part 36 (2026-11-28)"  # scripts/corpus_score.py's THIRTY_SIXTH_PART
MODELS = {"hpo": "surfaces KNN-classifier surrogate (surfaces-onnx-files 0.0.1's k_neighbors_classifier.onnx: an "
                 "MLP regressor through skl2onnx, an ai.onnx.ml Scaler, then 4 -> 64 -> 64 -> 1 with ReLUs, 3 MatMuls; "
                 "input a hyperparameter configuration (n_neighbors, algorithm, cv, dataset) encoded by surfaces "
                 "0.9.0's SurrogateLoader, output the predicted cross-validated accuracy; the decision: the "
                 "comparisons a search makes between the configurations of one problem, and the grid search's best "
                 "configuration)"}
PACKAGE_MODEL = "surfaces_onnx_files/k_neighbors_classifier.onnx"
SIBLING_META = "surfaces_onnx_files/k_neighbors_regressor.onnx.meta.json"  # the regressor's column order
KNN_FUNCTION = ("surfaces/test_functions/machine_learning/hyperparameter_optimization/tabular/classification/"
                "test_functions/k_neighbors_classifier.py")
LOADER_FILE = "surfaces/_surrogates/_surrogate_loader.py"
INPUT, OUTPUT = "input", "variable"
CALIB_DRAWS, CALIB_SEED = 144, 20261128  # the random search's draws of the healthy calibration
FEW = 2
DEFAULT_PROBLEM = {"dataset": "digits", "cv": 5}  # KNeighborsClassifierFunction's defaults
WHEELS = Path("/tmp/ex36/wh")  # --wheels (main sets it)


# --- the package's search space and encoding ------------------------------------------------------------------------
def _loader_module():
    """surfaces 0.9.0's _surrogate_loader.py, loaded by itself (the package's __init__ asks for its installed
    metadata, which a folder on sys.path lacks; the loader module needs only numpy, json and onnxruntime)."""
    spec = importlib.util.spec_from_file_location("surfaces_surrogate_loader", WHEELS / LOADER_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def package_loader(model: Path | None = None):
    """The package's SurrogateLoader for the shipped surrogate (its meta.json beside it); *model*: the ONNX file
    whose session it runs instead (the case's model)."""
    loader = _loader_module().SurrogateLoader(WHEELS / PACKAGE_MODEL)
    if model is not None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        loader._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    return loader


def search_space() -> dict[str, list]:
    """KNeighborsClassifierFunction's class attributes read from the package's source (n_neighbors_default,
    algorithm_default, available_cv); the datasets are those the surrogate encodes (its meta.json)."""
    tree = ast.parse((WHEELS / KNN_FUNCTION).read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "KNeighborsClassifierFunction")
    values = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("n_neighbors_default", "algorithm_default", "available_cv"):
                values[name] = eval(compile(ast.Expression(node.value), "<surfaces>", "eval"), {"np": np})  # noqa: S307
    meta = json.loads((WHEELS / (PACKAGE_MODEL + ".meta.json")).read_text(encoding="utf-8"))
    return {"n_neighbors": [int(v) for v in values["n_neighbors_default"]],
            "algorithm": list(values["algorithm_default"]), "cv": [int(v) for v in values["available_cv"]],
            "dataset": list(meta["param_encodings"]["dataset"])}


def problems() -> list[dict]:
    """The surrogate's problems: one per (dataset, cv), as KNeighborsClassifierFunction(dataset, cv) fixes them."""
    space = search_space()
    return [{"dataset": d, "cv": c} for d in space["dataset"] for c in space["cv"]]


def configurations() -> list[dict]:
    """A problem's search space: every (n_neighbors, algorithm) of the package's defaults."""
    space = search_space()
    return [{"n_neighbors": k, "algorithm": a} for a in space["algorithm"] for k in space["n_neighbors"]]


def grid() -> list[dict]:
    """Every configuration of every problem (the surrogate's whole domain, as its trainer enumerates it)."""
    return [{**c, **p} for p in problems() for c in configurations()]


def encode(params: dict) -> np.ndarray:
    """The package's encoding (SurrogateLoader._encode_params): [1, 4] float32 in the meta's parameter order."""
    return package_loader()._encode_params(params)


def encode_all(rows: list[dict]) -> np.ndarray:
    loader = package_loader()
    return np.concatenate([loader._encode_params(r) for r in rows]).astype(np.float32)


def draws(count: int = CALIB_DRAWS, seed: int = CALIB_SEED) -> list[dict]:
    """A random search's draws over the domain (each parameter uniformly from its list, with replacement)."""
    space = search_space()
    rng = np.random.default_rng(seed)
    return [{k: space[k][int(rng.integers(len(space[k])))] for k in ("n_neighbors", "algorithm", "cv", "dataset")}
            for _ in range(count)]


def encode_unit(rows: list[dict]) -> np.ndarray:
    """The fault: each parameter as an optimizer's normalised position, its index in its value list / (len - 1),
    in the meta's order (the unit-cube encoding search libraries keep internally)."""
    space = search_space()
    order = json.loads((WHEELS / (PACKAGE_MODEL + ".meta.json")).read_text(encoding="utf-8"))["param_names"]
    return np.array([[space[k].index(r[k]) / (len(space[k]) - 1) for k in order] for r in rows], np.float32)


def encode_sibling_order(rows: list[dict]) -> np.ndarray:
    """The fault: the package's encoding in the column order of the sibling surrogate's meta.json
    (k_neighbors_regressor: n_neighbors, algorithm, dataset, cv), where this surrogate takes cv, then dataset."""
    order = json.loads((WHEELS / SIBLING_META).read_text(encoding="utf-8"))["param_names"]
    loader = package_loader()
    names = loader.param_names
    assert order != names and sorted(order) == sorted(names), (order, names)
    encoded = encode_all(rows)
    return encoded[:, [names.index(k) for k in order]]


def save(name: str, array: np.ndarray) -> None:
    np.savez(WORK / name, **{INPUT: array.astype(np.float32)})


def fp32(wheels: Path) -> None:
    import onnx
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # skip_symbolic_shape: onnxruntime's symbolic shape inference stops on the ai.onnx.ml Scaler ("Incomplete
    # symbolic shape inference"); skip_optimization: the optimiser drops the float-to-float Cast after the Scaler, and
    # ONNX infers no type for a Scaler's output, so every tensor after it went untyped and quantize_static skipped
    # every activation ("failed to infer the type of tensor"): weights only. ONNX's shape inference still runs.
    quant_pre_process(str(wheels / PACKAGE_MODEL), str(WORK / "hpo_fp32.onnx"), skip_optimization=True,
                      skip_symbolic_shape=True)
    onnx.checker.check_model(onnx.load(str(WORK / "hpo_fp32.onnx")))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    domain = grid()
    assert len(domain) == 12 * 120, len(domain)
    save("hpo_eval.npz", encode_all(domain))
    drawn = draws()
    save("hpo_calib.npz", encode_all(drawn))
    save("hpo_calib_few.npz", encode_all(drawn[:FEW]))
    save("hpo_calib_unit.npz", encode_unit(drawn))
    save("hpo_calib_columns.npz", encode_sibling_order(drawn))
    save("hpo_calib_default.npz", encode_all([{**c, **DEFAULT_PROBLEM} for c in configurations()]))
    rng = np.random.default_rng(CALIB_SEED)
    save("hpo_calib_random.npz", rng.standard_normal((CALIB_DRAWS, 4), dtype=np.float32))


# --- the package's decision --------------------------------------------------------------------------------------
_PREDICTED: dict = {}


def predicted(model: Path) -> np.ndarray:
    """[problem, configuration] accuracies the package's SurrogateLoader.predict gives with *model* as its session."""
    key = str(model)
    if key not in _PREDICTED:
        loader = package_loader(model)
        _PREDICTED[key] = np.array([[loader.predict({**c, **p}) for c in configurations()] for p in problems()])
    return _PREDICTED[key]


def hpo_measure(qdq: Path) -> str:
    ref, probe = predicted(WORK / "hpo_fp32.onnx"), predicted(qdq)
    n = ref.shape[1]
    i, j = np.triu_indices(n, 1)
    pairs = flipped = 0
    best_changed = []
    regret = []
    for r, q in zip(ref, probe):
        d_ref, d_q = np.sign(r[i] - r[j]), np.sign(q[i] - q[j])
        decided = d_ref != 0
        pairs += int(decided.sum())
        flipped += int((decided & (d_q != d_ref)).sum())
        best_changed.append(int(np.argmax(q)) != int(np.argmax(r)))
        regret.append(float(r.max() - r[int(np.argmax(q))]))
    err = np.abs(probe - ref)
    return (f"{flipped} of the {pairs} comparisons between two configurations of one problem decided otherwise than "
            f"by FP32 (12 problems x 7140 pairs, FP32's ties left out; a tie under the case counts as changed); the "
            f"grid search's best configuration changed in {sum(best_changed)} of the 12 problems (FP32-predicted "
            f"accuracy lost by the case's choice: mean {np.mean(regret):.4f}, most {max(regret):.4f}); predicted "
            f"accuracy off by {err.mean():.4f} on average, {err.max():.4f} at most (FP32's range "
            f"{ref.min():.3f}-{ref.max():.3f})")


def measure(case: Case) -> str:
    return hpo_measure(WORK / case.qdq)


# --- models --------------------------------------------------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


HPO_OPS_ALL = ["MatMul", "Add", "Relu", "Reshape"]


def hpo_nodes(selection: str) -> list[str]:
    """Named selections: "matmuls" the 3 MatMuls; "head" those and the last Add (the output's bias: the predicted
    accuracy itself); "body" the first two MatMuls; "all" every node but the Scaler and the Cast (ai.onnx.ml and a
    type cast: nothing onnxruntime quantizes)."""
    import onnx

    nodes = onnx.load(str(WORK / "hpo_fp32.onnx")).graph.node
    matmuls = [n.name for n in nodes if n.op_type == "MatMul"]
    adds = [n.name for n in nodes if n.op_type == "Add"]
    assert len(matmuls) == 3 and len(adds) == 3, (matmuls, adds)
    every = [n.name for n in nodes if n.op_type not in ("Scaler", "Cast")]
    return {"matmuls": matmuls, "head": [*matmuls, adds[-1]], "body": matmuls[:2], "all": every}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort's quantize_static call, fed one configuration a feed ([1, 4])."""
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    if isinstance(nodes, str):
        nodes = hpo_nodes(nodes)
    with np.load(WORK / calib) as data:
        rows = data[INPUT]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.start, self.end = 0, len(rows)

        def __len__(self) -> int:
            return len(rows)

        def set_range(self, start_index: int, end_index: int) -> None:
            self.start, self.end = start_index, end_index

        def get_next(self):
            if self.start >= self.end:
                return None
            self.start += 1
            return {INPUT: rows[self.start - 1:self.start]}

    options = {"ActivationSymmetric": symmetric, "WeightSymmetric": True}
    if not quantize_bias:
        options["QuantizeBias"] = False
    quantize_static(str(WORK / f"{family}_fp32.onnx"), str(WORK / output), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type={"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}[activation],
                    weight_type=QuantType.QInt8, op_types_to_quantize=ops, nodes_to_quantize=nodes,
                    per_channel=per_channel, extra_options=options,
                    calibrate_method={"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                                      "percentile": CalibrationMethod.Percentile}[method])


# --- cases ---------------------------------------------------------------------------------------------------------
HPO_COLLECT_ARGS = ("--batch-axis", f"{INPUT}=0", "--batch-axis", f"{OUTPUT}=0", "--output-kind", f"{OUTPUT}=scalar")
RECIPE = "body"


def hpo_cases() -> list[Case]:
    c, w = "hpo_calib.npz", ["MatMul"]
    what = ("the first two MatMuls (4 -> 64 and 64 -> 64; the output layer's MatMul, 64 -> 1, the predicted accuracy "
            "before its bias, float, and the Scaler, the Adds, ReLUs and the Reshape float)")
    calib = (f"{CALIB_DRAWS} configurations a random search draws over the surrogate's domain (each parameter "
             f"uniformly from the package's lists, seed {CALIB_SEED}), encoded by the package's SurrogateLoader")

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("hpo", calib_file, output, w, RECIPE, **kw)]

    return [
        Case("hpo_healthy_ort_sym", "hpo", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, MinMax, "
             f"per-channel weights, {what}, on {calib}", "hpo_sym.onnx", c, make=recipe(c, "hpo_sym.onnx")),
        Case("hpo_healthy_ort_percentile", "hpo", 0, (), "the same with percentile calibration (99.999%)",
             "hpo_sym_pct.onnx", c, make=recipe(c, "hpo_sym_pct.onnx", method="percentile")),
        Case("hpo_healthy_trt_nobias", "hpo", 0, (), f"onnxruntime quantize_static with TensorRT-compatible settings: "
             f"symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False and every "
             f"zero-point 0: a model TensorRT takes as it is (target tensorrt; a MatMul has no bias input, so "
             f"QuantizeBias=False changes nothing here: the quantization is hpo_healthy_ort_sym's, judged for "
             f"TensorRT)", "hpo_sym_nobias.onnx", c, make=recipe(c, "hpo_sym_nobias.onnx", quantize_bias=False)),
        Case("hpo_calib_unit", "hpo", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"{CALIB_DRAWS} draws encoded as a search library keeps them, each parameter its position in its value "
             f"list / (length - 1), all four in [0, 1], where the surrogate takes the package's raw values "
             f"(n_neighbors 3-148, cv 2-10, the categories' codes)", "hpo_unit.onnx", "hpo_calib_unit.npz",
             make=recipe("hpo_calib_unit.npz", "hpo_unit.onnx")),
        Case("hpo_calib_columns", "hpo", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the same "
             f"{CALIB_DRAWS} draws encoded in the column order of the sibling surrogate's meta.json "
             f"(k_neighbors_regressor.onnx.meta.json: n_neighbors, algorithm, dataset, cv) where this surrogate's "
             f"says n_neighbors, algorithm, cv, dataset: cv and dataset swapped", "hpo_columns.onnx",
             "hpo_calib_columns.npz", make=recipe("hpo_calib_columns.npz", "hpo_columns.onnx")),
        Case("hpo_random_calib", "hpo", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the calibration's shape ({CALIB_DRAWS} x 4, np.random.randn-like: a stand-in "
             f"calibration set; no quantizer log); the random file is given to collect as --calib",
             "hpo_random.onnx", "hpo_calib_random.npz", make=recipe("hpo_calib_random.npz", "hpo_random.onnx")),
        Case("hpo_calib_default", "hpo", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the 120 "
             f"configurations of one problem only, KNeighborsClassifierFunction's defaults (dataset digits, cv 5), "
             f"where the surrogate serves all 12 (3 datasets x 4 cv)", "hpo_default.onnx", "hpo_calib_default.npz",
             make=recipe("hpo_calib_default.npz", "hpo_default.onnx")),
        Case("hpo_calib_few", "hpo", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on {FEW} "
             f"configurations only (the random search's first {FEW} draws)", "hpo_few.onnx", "hpo_calib_few.npz",
             make=recipe("hpo_calib_few.npz", "hpo_few.onnx")),
        Case("hpo_overquant", "hpo", 3, ("QR002",), "every op onnxruntime can quantize forced into INT8, every node of "
             "the package's graph but the Scaler and the Cast (the 3 MatMuls, the Adds of their biases, the ReLUs and "
             "the output's Reshape; op_types_to_quantize " + str(HPO_OPS_ALL) + ")", "hpo_all_ops.onnx", c,
             make=[q("hpo", c, "hpo_all_ops.onnx", HPO_OPS_ALL, "all")]),
        Case("hpo_sensitive_int8", "hpo", 4, ("QR002",), "the healthy symmetric recipe with the output layer's MatMul "
             "(64 -> 1, the predicted accuracy before its bias) in INT8 too: all 3 MatMuls", "hpo_sensitive_int8.onnx",
             c, make=[q("hpo", c, "hpo_sensitive_int8.onnx", w, "matmuls")]),
        Case("hpo_ort_uint8", "hpo", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric UINT8 "
             f"activations ({what})", "hpo_u8.onnx", c, make=recipe(c, "hpo_u8.onnx", activation="uint8",
                                                                    symmetric=False)),
        Case("hpo_ort_int8_asym", "hpo", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations but "
             f"ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as hpo_healthy_ort_sym otherwise)", "hpo_s8_asym.onnx", c,
             make=recipe(c, "hpo_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-28), before any rule, report or the
# scorer was run on the cases: the package's SurrogateLoader.predict over the 12 problems' 120 configurations each,
# under the case's model against FP32's.
def _m(flipped: int, best: int, lost: str, most: str, off: str, worst: str) -> str:
    return (f"{flipped} of the 85679 comparisons between two configurations of one problem decided otherwise than by "
            f"FP32 (12 problems x 7140 pairs, FP32's ties left out; a tie under the case counts as changed); the grid "
            f"search's best configuration changed in {best} of the 12 problems (FP32-predicted accuracy lost by the "
            f"case's choice: mean {lost}, most {most}); predicted accuracy off by {off} on average, {worst} at most "
            f"(FP32's range 0.105-0.990)")


_N = " comparisons against the healthy controls' 12138, 12122 and 12138 (not harmless by HARMLESS_POLICY)"
_A = " comparisons against the healthy controls' 12138, 12122 and 12138: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    "hpo_healthy_ort_sym": _m(12138, 12, "0.0155", "0.0304", "0.0367", "0.1621"),
    "hpo_healthy_ort_percentile": _m(12122, 12, "0.0158", "0.0306", "0.0367", "0.1623"),
    "hpo_healthy_trt_nobias": _m(12138, 12, "0.0155", "0.0304", "0.0367", "0.1621") + " (judged for TensorRT)",
    "hpo_calib_unit": _m(13812, 11, "0.0156", "0.0368", "0.0473", "0.1712") + f": 13812{_N}",
    "hpo_calib_columns": _m(9707, 11, "0.0090", "0.0234", "0.0175", "0.1094") + f": 9707{_A}",
    "hpo_random_calib": _m(10859, 9, "0.0098", "0.0287", "0.0258", "0.0977") + f": 10859{_A}",
    "hpo_calib_default": _m(12710, 11, "0.0136", "0.0280", "0.0400", "0.1645") + f": 12710{_N}",
    "hpo_calib_few": _m(12252, 10, "0.0158", "0.0448", "0.0423", "0.1617") + f": 12252{_N}",
    "hpo_overquant": _m(14738, 12, "0.0229", "0.0527", "0.0344", "0.1517") + f": 14738{_N}",
    "hpo_sensitive_int8": _m(14584, 12, "0.0237", "0.0527", "0.0356", "0.1614") + f": 14584{_N}",
    "hpo_ort_uint8": _m(5318, 6, "0.0029", "0.0136", "0.0133", "0.1143") + ", on ONNX Runtime; the cause as made is "
                     "TensorRT's (non-zero zero-points)",
    "hpo_ort_int8_asym": _m(5318, 6, "0.0029", "0.0136", "0.0133", "0.1143") + ", on ONNX Runtime (fewer than the "
                         "healthy controls, 12138, 12122 and 12138: asymmetric ranges suit the ReLU outputs the second "
                         "MatMul reads): the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes (comparisons decided
# otherwise) are no more than the most of the family's healthy controls' (decided from MEASURED alone). The healthy
# controls change 12138, 12122 and 12138 comparisons; hpo_calib_columns (9707) and hpo_random_calib (10859) change no
# more: harmless. hpo_calib_few (12252), hpo_calib_default (12710), hpo_calib_unit (13812), hpo_sensitive_int8 (14584)
# and hpo_overquant (14738) change more (hpo_calib_few by 114 comparisons only: the policy's line, applied as it is).
_H = ("{n} comparisons decided otherwise on the 12 problems' configurations; the family's healthy controls change "
      "12138, 12122 and 12138 (marked 2026-11-28 by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"hpo_calib_columns": _H.format(n=9707), "hpo_random_calib": _H.format(n=10859)}
TARGET_ORT = {"hpo_healthy_ort_sym", "hpo_healthy_ort_percentile"}


def cases() -> list[Case]:
    return part2.part_cases(hpo_cases(), THIRTY_SIXTH_PART, MEASURED, {"hpo": HPO_COLLECT_ARGS})


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part36_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"hpo": "hpo_calib_random.npz"}, lambda _families: prepare(WHEELS))


def write_part36_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTY_SIXTH_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())

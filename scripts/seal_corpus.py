"""Mark the sealed part of corpus/ in corpus/labels.json ("sealed": true), by corpus_score.select_sealed.

    python scripts/seal_corpus.py [--check]

Run once, when the new cases were added (issue 10) and before any rule was tuned on them. The
selection depends only on labels.json and corpus_score.SEAL_SEED; --check only verifies that the
recorded marks are the ones the procedure gives (exit 1 otherwise) and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from corpus_score import select_sealed  # noqa: E402  (scripts/, beside this file)

LABELS = ROOT / "corpus" / "labels.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="verify the recorded marks; write nothing")
    args = parser.parse_args()
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    sealed = set(select_sealed(labels))
    recorded = {case for case, label in labels.items() if label.get("sealed")}
    if args.check:
        print("sealed marks match the procedure" if recorded == sealed else
              f"differ: recorded only {sorted(recorded - sealed)}, procedure only {sorted(sealed - recorded)}")
        return 0 if recorded == sealed else 1
    for case, label in labels.items():
        label.pop("sealed", None)
        if case in sealed:
            label["sealed"] = True
    LABELS.write_text(json.dumps(labels, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"sealed {len(sealed)} of {len(labels)} cases: {', '.join(sorted(sealed))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

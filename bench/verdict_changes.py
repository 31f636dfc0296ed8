"""Which stored verdicts of a corpus today's oracle would not give again, by cause.

Every disagreement row of a corpus (written by an earlier clfuzz) is judged again: a wrong or
imprecise lane by re-deriving its statement on its work-item with the uncached exact reference
(campaign.rederive, under the float environment of the row's target and the program's build),
a failure by the rule its path and kind name today. Each row falls under one cause:

- ``build options void the rule``: the lane is not judged any more, and the program was built with
  options (OpenCL 3.0 API §5.8.6.4: e.g. -cl-fast-relaxed-math voids every edge-case rule);
- ``not judged any more``: the lane is not judged, the program has no options (an undefined or
  implementation-defined result, a rule withdrawn);
- ``now accepted``: today's oracle accepts the driver's value (an oracle defect of its time);
- ``another deciding rule``: still a disagreement, under another rule (e.g. image.half for a
  half-float read that was filed under a tolerance);
- ``another accepted set``: still a disagreement under the same rule, but other values accepted;
- ``slow, not a violation``: a run cut at the time ceiling (severity performance now);
- ``SPIR-V environment's failure rule``: a build error or crash of a SPIR-V module;
- ``unchanged``.

A bucket changes when one of its rows does, and is gone when none of its rows is still a
disagreement. Usage::

    python3 bench/verdict_changes.py CORPUS [--json]

Reads the corpus only (a copy is opened, so that the upgrade on open leaves the file alone).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from campaign.rederive import accepted_set, rederived  # noqa: E402
from corpus.buckets import RESULT_KINDS  # noqa: E402
from corpus.reads import fingerprint_of  # noqa: E402
from corpus.store import Corpus  # noqa: E402
from fuzz.drivers.capabilities import ftz_for  # noqa: E402
from fuzz.drivers.routes import PATH_SPIRV  # noqa: E402
from lang.derive import one_work_item  # noqa: E402
from lang.ir import Program  # noqa: E402
from lang.layout import input_values  # noqa: E402
from oracles import RULES, Classifier, Expectation, failure_rule  # noqa: E402

GONE = {"build options void the rule", "not judged any more", "now accepted"}


def _place(row: dict) -> tuple:
    """A row's run and work-item in its buffer: the rows that share it are its neighbour lanes."""
    return row["run_id"], row["buffer"], row["work_item"]


def cause(corpus: Corpus, row: dict, cache: dict, moves: Counter, lanes: dict) -> str:
    """The cause (module docstring) under which ``row`` falls today; a change of deciding rule is
    also counted in ``moves`` (old rule, new rule)."""
    if row["kind"] == "timeout":
        return "slow, not a violation"
    if row["kind"] not in RESULT_KINDS:
        return ("SPIR-V environment's failure rule" if row["path"] == PATH_SPIRV
                and row["rule"] != failure_rule(True).id else "unchanged")
    if row["work_item"] < 0:
        return "unchanged"
    if row["program_id"] not in cache:  # the program, its inputs, its re-derivations per target
        program = corpus.program(row["program_id"])
        cache[row["program_id"]] = (program, input_values(program), defaultdict(dict))
    program, inputs, fresh = cache[row["program_id"]]
    if program.shared:  # atomics: their histories depend on every work-item
        return "unchanged"
    ftz = ftz_for(fingerprint_of(corpus, row["fingerprint_id"]))
    again, lane = rederived(program, row, ftz, inputs, fresh[ftz])
    derived = accepted_set(again, lane)
    if derived == frozenset({"not judged"}):
        return "build options void the rule" if program.options else "not judged any more"
    if again.select(np.array([lane])).accepts(np.array([int(row["actual"], 16)]))[0]:
        return "now accepted"
    now = deciding_rule(program, inputs, row, again, lane, lanes.get(_place(row), {}))
    if now != row["rule"]:
        moves[(row["rule"], now)] += 1
        return "another deciding rule"
    stored = frozenset(json.loads(row["allowed"]))
    return "unchanged" if stored == derived else "another accepted set"


def deciding_rule(program: Program, inputs: dict, row: dict, again: Expectation, lane: int, beside: dict) -> str:
    """The rule a disagreement row would name today: its lane's rule, or the one the deviation
    classifier names for the wrong value (fuzz.judge does the same), on the row's statement and
    work-item alone (``inputs``: the program's input values): the lanes of its run's rows there as
    the driver wrote them (``beside``: lane -> actual bits), the others as expected."""
    index = next(i for i, s in enumerate(program.body) if row["buffer"] in (s.buffer, s.pointee))
    alone = one_work_item(program, row["work_item"], inputs, [index])
    actual = np.array(again.allowed[0], copy=True)
    first = row["lane"] - lane  # the memory position of the work-item's first lane
    for pos, bits in beside.items():
        actual[pos - first] = bits
    found = Classifier(alone, alone.body[0], row["buffer"], again, actual, input_values(alone)).classify(lane)
    return RULES[found.rule if found.rule is not None else int(again.rule[lane])].id


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "corpus.db"
        shutil.copy(args.corpus, copy)
        corpus = Corpus(copy, create=False)
        rows, buckets, cache, moves = Counter(), defaultdict(Counter), {}, Counter()
        stored = corpus.disagreements()
        lanes: dict[tuple, dict[int, int]] = defaultdict(dict)
        for row in stored:
            if row["kind"] in RESULT_KINDS and row["actual"]:
                lanes[_place(row)][row["lane"]] = int(row["actual"], 16)
        for row in stored:
            c = cause(corpus, row, cache, moves, lanes)
            rows[c] += 1
            buckets[row["bucket"]][c] += 1
    gone = sum(1 for b in buckets.values() if set(b) <= GONE)
    changed = sum(1 for b in buckets.values() if set(b) - {"unchanged"})
    by_cause = Counter(c for b in buckets.values() for c in b if c != "unchanged")
    out = {"rows": sum(rows.values()), "buckets": len(buckets), "rows_by_cause": dict(rows.most_common()),
           "buckets_changed": changed, "buckets_gone": gone, "buckets_by_cause": dict(by_cause.most_common()),
           "rule_moves": {f"{a} -> {b}": n for (a, b), n in moves.most_common()}}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{out['rows']} rows in {out['buckets']} buckets; {changed} buckets changed, {gone} gone")
    print("| cause | rows | buckets with such rows |\n|---|---|---|")
    for c, n in rows.most_common():
        print(f"| {c} | {n} | {by_cause.get(c, '-') if c != 'unchanged' else '-'} |")
    print("\nanother deciding rule, by rule (old -> new): rows")
    for move, n in out["rule_moves"].items():
        print(f"- {move}: {n}")


if __name__ == "__main__":
    main()

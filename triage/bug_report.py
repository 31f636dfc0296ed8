"""The report of a bug (triage.bugs): its lead bucket's report (triage.report: the kernel of each
front end, repro.py, the rule, the values), headed by the bug, with its buckets listed as
variants, each with a wrong lane's values, and the evidence that made them one bug."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from corpus.reads import bucket_rows
from corpus.store import Corpus
from fuzz.drivers import Target
from triage import bugs as bug_level
from triage.report import report_bucket
from triage.report_readme import inputs_text


def report_bug(corpus: Corpus, ref: str, out_dir: str | Path, targets: list[Target], *, force: bool = False,
               budget_s: float = 120.0, say: Callable[[str], None] = print) -> Path:
    """What ``clfuzz report bug-...`` does: the lead bucket's report (triage.report.report_bucket)
    with a README that names the bug and lists its buckets as variants; returns the folder."""
    bug = bug_level.find(corpus, ref)
    folder = report_bucket(corpus, bug.lead["id"], out_dir, targets, force=force, budget_s=budget_s, say=say)
    readme = folder / "README.md"
    body = readme.read_text().split("\n", 1)[1]
    readme.write_text(f"# {bug_level.title(bug)}\n\n" + "\n".join(_bug_lines(corpus, bug)) + body)
    return folder


def _bug_lines(corpus: Corpus, bug: bug_level.Bug) -> list[str]:
    """The bug's head: its id, its buckets as variants with a wrong lane's values, the evidence."""
    lines = [f"clfuzz bug `{bug.id}`: {len(bug.buckets)} variant{'s' if len(bug.buckets) > 1 else ''} of one root "
             f"cause on {bug.driver}. The report below is of the first variant (`{bug.lead['id']}`); "
             "`clfuzz report BUCKET` writes any other's.", ""]
    if len(bug.buckets) > 1:
        lines += ["## Variants", "", "| bucket | operation | types | deviation | expression | inputs | expected | actual |",
                  "|---|---|---|---|---|---|---|---|"]
        for b in bug.buckets:
            rows = bucket_rows(corpus, b["id"])
            r = rows[0] if rows else {}
            cells = [b["id"], b["operation"], b["types"], b["deviation"] or b["kind"], f"`{r.get('expression', '')}`",
                     inputs_text(json.loads(r.get("inputs") or "{}")), r.get("expected_value", ""),
                     r.get("actual_value", "")]
            lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
        lines += ["", "## Why these are one bug", ""]
        for e in bug.evidence:
            lines.append(f"- `{e['bucket']}` is the same bug as `{e['same_as']}`: {_evidence_text(e)}")
        lines.append("")
    return lines


def _evidence_text(e: dict) -> str:
    """One evidence record in words, with the values that showed it."""
    if e["kind"] == "re-run":
        return (f"the reduced case of `{e['same_as']}` re-run as `{e['bucket']}`'s variant on {e.get('target', '')} "
                f"(`{e.get('expression', '')}`, {inputs_text(e.get('inputs') or {})}) gives {e.get('actual', '')} "
                f"where {e.get('expected', '')} is required ({e.get('deviation', '')})")
    if e["kind"] == "same-width":
        return (f"each is wrong only as `{e.get('type', '')}`: the same operands as scalars, one work-item a "
                f"lane, are right on the same front end (programs `{'`, `'.join(e.get('programs') or [])}`)")
    if e["kind"] == "same-failure":
        return (f"the same failure, `{e.get('message', '')}`, for another missing symbol "
                f"(`{'`, `'.join(e.get('symbols') or [])}`)")
    cases = e.get("cases") or []
    shown = "; ".join(f"`{c['expression']}` with {inputs_text(c['inputs'])} gives {c['actual']}" for c in cases)
    what = {"same-value": "the same operands give the same wrong value",
            "same-operand": "the same operands give a wrong value of the same kind",
            "same-trigger": f"both are wrong only beside `{e.get('trigger', '')}`, reading the same value"}
    return f"{what.get(e['kind'], e['kind'])}: {shown}"

"""The commands on a whole corpus: ``stats`` summarizes it, ``corpus merge`` unions corpora,
``dashboard`` writes it as an HTML page."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from app.json_forms import echo_json
from app.options import console, corpus_option, fail, open_corpus, output_path
from corpus.corners import corners
from corpus.stats import LARGEST_TITLE, stall_line, summarize
from corpus.store import CorpusError
from lang.types import SCALARS


@click.command()
@corpus_option()
@click.option("--campaign", help="Only this campaign.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--coverage", "show_coverage", is_flag=True,
              help="Print the construct x type x width matrix each target covered, and the corners it missed.")
def stats(corpus_path: str, campaign: str | None, as_json: bool, show_coverage: bool) -> None:
    """Summarize a corpus: per driver, runs, checks, construct coverage and the kinds of disagreement found,
    and (math area) the largest error in ulps per function, type and driver, with its input.

    Example: clfuzz stats --coverage
    """
    corpus = open_corpus(corpus_path, read_only=True, campaign=campaign)
    summary = summarize(corpus, campaign)
    summary["corners"] = corners(corpus, campaign, missing=show_coverage)
    if as_json:
        echo_json("stats", summary)
        return
    if show_coverage:
        _print_coverage(summary["coverage"])
        _print_corners(summary["corners"])
        return
    t = Table(title=f"{corpus_path}: {summary['programs']} programs")
    for col in ("target", "runs", "judged lanes", "mismatching lanes", "kinds", "constructs / cells covered",
                "statuses"):
        t.add_column(col)
    for name, s in summary["targets"].items():
        cells = summary["coverage"].get(name, {}).get("cells", [])
        t.add_row(name, str(s.get("runs", 0)), f"{s.get('judged', 0):,}", f"{s.get('mismatches', 0):,}",
                  str(len(s.get("kinds", []))), f"{len({c[0] for c in cells})} / {len(cells)}",
                  ", ".join(f"{k} {v}" for k, v in sorted(s.get("statuses", {}).items())))
    console.print(t)
    if stalled := stall_line(summary):
        console.print(stalled)
    for name, s in summary["targets"].items():
        if not s.get("kinds"):
            continue
        k = Table(title=f"{name}: kinds of disagreement")
        for col in ("operation", "src", "dst", "kind", "count", "example: inputs → expected / actual"):
            k.add_column(col)
        for kind in s["kinds"]:
            ex = kind["example"]
            inputs = "; ".join(
                ",".join(v["values"]) if isinstance(v, dict) else str(v) for v in ex["inputs"].values()
            )
            k.add_row(kind["operation"], kind["src_type"], kind["dst_type"], kind["kind"], str(kind["count"]),
                      f"{inputs} → {ex['expected']} / {ex['actual']}")
        console.print(k)
    if summary["largest_errors"]:
        _print_largest_errors(summary["largest_errors"])
    if summary["oracle_defects"]:
        console.print(f"oracle defects: {summary['oracle_defects']} (lanes whose expectation the re-derivation did not "
                      "confirm, kept out of the disagreements; `clfuzz buckets` lists them)")


def _print_largest_errors(rows: list[dict]) -> None:
    """The largest error in ulps (OpenCL C 3.0 §7.4, ulp) per function, element type and driver,
    the type of the lane that made it and its operands (corpus.stats.largest_errors)."""
    t = Table(title=LARGEST_TITLE)
    for col in ("operation", "type", "driver", "ulps", "within bound", "worst on", "input"):
        t.add_column(col, overflow="fold")
    for r in rows:
        text = r["input"] if len(r["input"]) <= 80 else r["input"][:79] + "…"
        t.add_row(escape(r["operation"]), r["type"], escape(r["target"]), f"{r['ulps']:g}",
                  "yes" if r["accepted"] else "[bold red]no[/]", r["example_type"], escape(text))
    console.print(t)


def _print_coverage(coverage: dict) -> None:
    """One table per target: a row per construct, a column per type, the widths covered in each cell."""
    for name, data in coverage.items():
        widths: dict[str, dict[str, set[int]]] = {}
        for construct, type_name, width, _ in data["cells"]:
            widths.setdefault(construct, {}).setdefault(type_name, set()).add(width)
        types = [t for t in SCALARS if any(t in row for row in widths.values())]
        table = Table(title=f"{name} ({data['path']}): {len(widths)} constructs, {len(data['cells'])} cells "
                            f"(construct x type x width)")
        table.add_column("construct")
        for t in types:
            table.add_column(t)
        for construct in sorted(widths):
            table.add_row(construct, *(",".join(map(str, sorted(widths[construct].get(t, ())))) or "·"
                                       for t in types))
        console.print(table)


def _print_corners(data: dict, shown: int = 8) -> None:
    """Per target, the corners of the corner table (lang.corners) it reached and how soon, and per
    operation with missing corners a few of them (``sinpi:double:x=-odd``, the prescribed special
    values first) and why they were missed (corpus.corners.missed)."""
    for name, c in data.items():
        soon = ", ".join(f"{share}% in {s:g} s" for share, s in c["seconds_to"].items() if s is not None)
        table = Table(title=f"{name}: {c['reached']} / {c['total']} corners reached (lang.corners)"
                            + (f"; {soon}" if soon else ""))
        for col in ("operation", "reached", "missing (first)", "why"):
            table.add_column(col, overflow="fold")
        missing: dict[str, list[str]] = {}
        for corner in c.get("missing", []):
            missing.setdefault(corner.split(":", 1)[0], []).append(corner)
        for op, (got, total) in sorted(c["operations"].items()):
            if got < total:
                gone = missing.get(op, [])
                more = f" (+{len(gone) - shown} more)" if len(gone) > shown else ""
                why = Counter(c.get("why", {}).get(g, "") for g in gone)
                table.add_row(op, f"{got} / {total}", ", ".join(g.split(":", 1)[1] for g in gone[:shown]) + more,
                              ", ".join(f"{reason} {n}" for reason, n in why.most_common()))
        console.print(table)


@click.group("corpus")
def corpus_group() -> None:
    """Whole-corpus operations.

    Example: clfuzz corpus merge lab1.db lab2.db -o all.db
    """


@corpus_group.command("merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@corpus_option("Corpus to merge into (created if missing; may be one of the sources).", "-o", "--out")
def corpus_merge(sources: tuple[str, ...], corpus_path: str) -> None:
    """Union corpora from several machines into one, without duplicates, keeping bucket status
    (the later change wins) and campaign state. The sources are only read.

    Example: clfuzz corpus merge lab1.db lab2.db -o all.db
    """
    from corpus.merge import merge

    for src in sources:
        open_corpus(src, read_only=True).close()  # a missing or unusable source: one line, nothing written
    into = open_corpus(corpus_path, create=True)
    for src in sources:
        if Path(src).resolve() == Path(corpus_path).resolve():
            continue
        try:
            m = merge(into, src)
        except CorpusError as e:
            raise fail(e) from None
        click.echo(f"{src}: +{m.programs} programs, +{m.runs} runs, +{m.disagreements} disagreements, "
                   f"+{m.buckets} buckets, +{m.reductions} reductions, +{m.campaigns} campaigns")
    click.echo(f"wrote {corpus_path}")


@click.command()
@corpus_option()
@click.option("--campaign", help="Only this campaign.")
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="HTML file to write.")
@click.option("--reports", "reports_dir", type=click.Path(exists=True, file_okay=False),
              help="Also link each bucket to DIR/BUCKET/README.md where `clfuzz report` wrote one.")
def dashboard(corpus_path: str, campaign: str | None, out_path: str, reports_dir: str | None) -> None:
    """Write a self-contained HTML page of a corpus: disagreements and buckets over time, throughput
    per driver, the coverage heat map, and the buckets with their reports. Opens without network.

    Example: clfuzz dashboard -o report.html
    """
    from app.dashboard import write_dashboard

    out = output_path(out_path)
    corpus = open_corpus(corpus_path, read_only=True, campaign=campaign)
    try:
        written = write_dashboard(corpus, out, campaign,
                                  reports_dir=Path(reports_dir) if reports_dir else None)
    except (CorpusError, OSError) as e:
        raise fail(e) from None
    click.echo(f"{written} ({written.stat().st_size:,} bytes)")

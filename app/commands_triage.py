"""The commands on the buckets of disagreements: list them (``buckets``), reduce one (``reduce``),
set their status (``mark``), write a vendor report (``report``) and regression files
(``export-regressions``)."""

from __future__ import annotations

import json
import sys
import time

import click
from rich.markup import escape
from rich.table import Table

from app.json_forms import echo_json
from app.options import BadInput, console, corpus_option, fail, local_targets, open_corpus, output_path
from corpus.buckets import STATUSES
from corpus.store import Corpus, CorpusError
from oracles import SEVERITIES


@click.command("reduce")
@click.argument("ref")
@corpus_option("SQLite corpus to read and update.")
@click.option("--budget", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds each reduction may take (it stops with the smallest program found so far).")
def reduce_command(ref: str, corpus_path: str, budget: float) -> None:
    """Reduce a stored disagreement (a bucket, disagreement or program id, or a unique prefix), or
    each bucket of a bug of the bug list (``bug-...``) that is not reduced yet.

    The reduced program is stored beside the original; it shows the same disagreement (same
    driver and path, operation and kind) and nothing smaller does. A timeout whose hang is
    undecided is first re-run once at ten times the ceiling it was cut at (a hang, or slow). A flow
    program is reduced at the structure level (loops, branches, helpers, statements, the launch).

    Examples: clfuzz reduce 3fa2c1; clfuzz reduce bug-5e8d45
    """
    from triage.bugs import PREFIX, find

    corpus = open_corpus(corpus_path)
    if not ref.startswith(PREFIX):
        _reduce_one(corpus, ref, budget)
        return
    try:
        bug = find(corpus, ref)
    except CorpusError as e:
        raise fail(e) from None
    pending = [b["id"] for b in bug.buckets if not b["reduced"]]
    if not pending:
        click.echo(f"every bucket of {bug.id} is reduced: `clfuzz report {bug.id} --corpus {corpus.path} -o DIR` "
                   "writes its report")
    for i, bucket in enumerate(pending, 1):
        now = corpus.bucket(bucket)  # as an earlier reduction of the bug left it
        if not now["rows"]:  # its rows moved with that reduction
            click.echo(f"{bug.id}: bucket {bucket} ({i} of {len(pending)}): its rows went with an earlier reduction")
            continue
        if now["reduced"]:  # that reduction's case, re-run as its sibling, reduced it
            continue
        click.echo(f"{bug.id}: bucket {bucket} ({i} of {len(pending)} not reduced yet)")
        _reduce_one(corpus, bucket, budget)


def _reduce_one(corpus: Corpus, ref: str, budget: float) -> None:
    """``clfuzz reduce`` of one bucket, disagreement or program (its docstring)."""
    from fuzz.drivers import UnknownDriver, Worker, discover, select
    from lang.flow import FlowProgram
    from triage.beside import after_reduction
    from triage.flow_triage import reduce_flow_stored
    from triage.observe import size
    from triage.session import find_row, reduce_stored, target_of
    from triage.slow import decide, undecided

    try:
        row = find_row(corpus, ref)
        flow = isinstance(corpus.program(row["program_id"]), FlowProgram)  # reduced at the structure level
        try:  # by its name: a release's target (rusticl-26.2) is discovered only when named
            named = select(discover(), [row["target"]])
        except UnknownDriver:
            named = []
        target = target_of(row, named)
    except CorpusError as e:
        raise fail(e) from None
    with Worker(target) as worker:
        if undecided(row):  # a slow run: a hang only if it does not finish at ten times its ceiling either
            verdict = decide(corpus, row, target, worker, None, worker.timeout_s)
            click.echo(f"re-run at {verdict['limit_s']:g} s (ten times its ceiling): "
                       + ("no result either: a hang" if verdict["hang"] else f"finished ({verdict['status']}) in "
                          f"{verdict['seconds']:g} s: slow, judged like any other run"))
        if flow:
            done = reduce_flow_stored(corpus, row, target, worker, budget)
            reduction = done and done[1]
        else:
            deadline = time.monotonic() + budget
            reduction = reduce_stored(corpus, row, target, worker, budget)
            learned = [] if reduction is None else list(after_reduction(corpus, reduction, target, worker, deadline))
    if reduction is None:
        raise click.ClickException(f"{row['target']} did not show the disagreement again on program "
                                   f"{row['program_id']}: nothing to reduce (it may be flaky)")
    before, after = size(reduction.original), size(reduction.reduced)
    click.echo(f"reduced {reduction.original.id} -> {reduction.reduced.id} on {target.name} in "
               f"{reduction.seconds:.1f} s ({reduction.candidates} candidates run)")
    for key in before:
        click.echo(f"  {key:13} {before[key]:>8} -> {after[key]}")
    if flow:
        click.echo(f"  bucket {done[0]}; `clfuzz report {done[0]}` writes the reduced kernel with its values")
        return
    if reduction.why_not_minimal:
        click.echo(f"  not one operation on one work-item: {reduction.why_not_minimal}")
    r = reduction.rows[0]
    click.echo(f"  {r['expression']}: expected {r['expected_value']}, actual {r['actual_value']}")
    for what, other in learned:  # as the campaign's triage does after a reduction (triage.beside)
        click.echo(f"  bucket {other} is the same bug" + (", reduced by this case" if what == "reduced" else ""))


@click.command()
@corpus_option()
@click.option("--campaign", help="Only the buckets this campaign saw.")
@click.option("--status", type=click.Choice(STATUSES), help="Only bugs with this status.")
@click.option("--driver", help="Only bugs of this driver (its family, e.g. pocl, or a target, e.g. rusticl/spirv).")
@click.option("--severity", type=click.Choice(list(SEVERITIES)), help="Only bugs of this severity.")
@click.option("--buckets", "flat", is_flag=True, help="One line per bucket instead of one per bug.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts: {schema, bugs, buckets}.")
def buckets(corpus_path: str, campaign: str | None, status: str | None, driver: str | None, severity: str | None,
            flat: bool, as_json: bool) -> None:
    """The bug list: one line per bug (buckets of one driver that evidence shows to be one bug,
    triage.bugs), what most needs a person first (most severe, then new, then most rows): id,
    severity, status, driver, paths, faulty operation and element types, deviation, rows, buckets,
    reduced size, where the vendor's bug is. Piped, plain tab-separated lines, the id first.
    --buckets lists the buckets instead (each still addressable by its own id).
    After it, the oracle defects: lanes whose expectation the re-derivation did not confirm,
    which are the oracle's bugs and no bucket (``clfuzz stats --json`` counts them as
    ``oracle_defects``).

    \b
    Examples:
      clfuzz buckets --status new --severity violation
      clfuzz buckets --driver pocl --buckets
      clfuzz buckets --json | jq '.bugs[0]'
    """
    from triage import bugs as bug_level

    corpus = open_corpus(corpus_path, read_only=True, campaign=campaign)
    found, entries = bug_level.listed(corpus, campaign)
    shown = [g for g in found if _wanted(g.buckets, bug_level.severity(g), bug_level.status(g), driver, severity, status)]
    if as_json:
        keep = {b["id"] for g in shown for b in g.buckets}
        echo_json("buckets", {"bugs": [bug_level.as_json(g) for g in shown],
                              "buckets": [b for b in entries if b["id"] in keep]})
        return
    if flat:
        members = [b for g in shown for b in g.buckets if _wanted([b], b["severity"], b["status"], driver, severity, status)]
        members.sort(key=lambda b: (list(SEVERITIES).index(b["severity"]), STATUSES.index(b["status"]), -b["rows"],
                                    b["id"]))
        _print_lines(f"{len(members)} buckets", BUCKET_COLUMNS, [_bucket_line(b) for b in members])
    else:
        _print_lines(f"{len(shown)} bugs ({sum(len(g.buckets) for g in shown)} buckets)", BUG_COLUMNS,
                     [_bug_line(g) for g in shown])
    _print_oracle_defects(corpus.oracle_defects(campaign))


BUG_COLUMNS = ("bug", "severity", "status", "driver", "paths", "operation", "types", "deviation", "rows",
               "buckets", "reduced", "vendor")
FLEXIBLE = ("operation", "types", "deviation", "reduced", "vendor")
"""Columns of the terminal list whose text may be cut at the screen's edge (the others never are)."""
BUCKET_COLUMNS = ("bucket", "bug", "severity", "status", "driver", "paths", "operation", "types", "deviation",
                  "rows", "reduced", "vendor")


def _wanted(members: list[dict], its_severity: str, its_status: str, driver: str | None, severity: str | None,
            status: str | None) -> bool:
    """Whether a bug (its ``members``, its severity and status) or a bucket passes the filters."""
    on_driver = not driver or any(b["driver"] == driver or any(t["target"] == driver for t in b["targets"])
                                  for b in members)
    return on_driver and severity in (None, its_severity) and status in (None, its_status)


def _short(types: str) -> str:
    """Element types as the terminal shows them: an integer family as ``signed`` or ``unsigned``
    (corpus.buckets.type_family: every width of one signedness is one bucket)."""
    return types.replace("unsigned integer", "unsigned").replace("signed integer", "signed")


def _bug_line(g) -> list[str]:
    from triage import bugs as bug_level
    from triage.buglist import deviation_text, reduced_text

    return [g.id, bug_level.severity(g), bug_level.status(g), g.driver, ",".join(bug_level.paths(g)),
            " / ".join(bug_level.operations(g)), _short(" / ".join(bug_level.types_of(g))),
            " / ".join(dict.fromkeys(deviation_text(b) for b in g.buckets)), str(bug_level.rows(g)),
            str(len(g.buckets)), reduced_text(g.lead), " ".join(bug_level.urls(g))]


def _bucket_line(b: dict) -> list[str]:
    from triage.buglist import deviation_text, reduced_text

    return [b["id"], b["bug"], b["severity"], b["status"], b["driver"], ",".join(b["paths"]), b["operation"],
            _short(b["types"]), deviation_text(b), str(b["rows"]), reduced_text(b), b.get("url") or ""]


def plain_lines(columns: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    """A header line and one tab-separated line per row (what the lists print when piped)."""
    return ["\t".join(columns)] + ["\t".join(x.replace("\t", " ").replace("\n", " ") for x in r) for r in rows]


def bug_list_text(corpus: Corpus, campaign: str | None = None) -> str:
    """The bug list of ``corpus`` (of one ``campaign``) as ``clfuzz buckets`` prints it piped."""
    from triage import bugs as bug_level

    found, _ = bug_level.listed(corpus, campaign)
    return "\n".join(plain_lines(BUG_COLUMNS, [_bug_line(g) for g in found])) + "\n"


def _print_lines(title: str, columns: tuple[str, ...], rows: list[list[str]]) -> None:
    """One line per row: a table on a terminal (ids never cut, long text cut at the screen's edge),
    tab-separated plain text with a header line when piped."""
    if not sys.stdout.isatty():
        for line in plain_lines(columns, rows):
            click.echo(line)
        return
    widths = [max([len(col), *(len(r[i]) for r in rows)]) for i, col in enumerate(columns)]
    fixed = sum(w + 2 for w, col in zip(widths, columns) if col not in FLEXIBLE)
    flexible = [i for i, col in enumerate(columns) if col in FLEXIBLE]
    room = max(8 * len(flexible), console.width - fixed - 2 * len(flexible))
    for i in sorted(flexible, key=lambda i: widths[i]):  # narrow columns first, the rest share what is left
        widths[i] = min(widths[i], room // len(flexible))
        room, flexible = room - widths[i], [j for j in flexible if j != i]
    t = Table(title=title, box=None, header_style="bold")
    for col, width in zip(columns, widths):  # ids, counts and statuses whole; long text cut at the edge
        t.add_column(col, no_wrap=True, overflow="ellipsis", width=width)
    for r in rows:
        t.add_row(*(escape(x) for x in r))
    console.print(t)


def _print_oracle_defects(defects: list[dict]) -> None:
    """The oracle defects (campaign.rederive), in a section of their own: not a driver's bug."""
    if not defects:
        return
    lanes = f"{len(defects)} lane{'s' if len(defects) > 1 else ''}"
    t = Table(title=f"oracle defects: {lanes} whose expectation the re-derivation did not confirm (the oracle's "
                    "bugs, not the drivers')")
    for col in ("driver", "expression", "work-item", "lane", "campaign expected", "re-derived", "actual", "why",
                "seen"):
        t.add_column(col, overflow="fold")
    for d in defects:
        t.add_row(escape(d["target"]), escape(d["expression"]), str(d["work_item"]), str(d["lane"]),
                  escape(", ".join(json.loads(d["expected"]))), escape(", ".join(json.loads(d["rederived"]))),
                  escape(d["actual_value"]), d["why"], _when(d["created"]))
    console.print(t)


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else ""


@click.command()
@click.argument("args", nargs=-1, metavar="[BUCKET] STATUS")
@click.option("--all-new", is_flag=True, help="Give every new bucket STATUS (a team's baseline in one command).")
@corpus_option("SQLite corpus to read and update.")
@click.option("--note", default="", help="Why (a reason to ignore, what the vendor said).")
@click.option("--url", help="Where the vendor's bug is (http:// or https://); the bug list, reports and JUnit show it.")
def mark(args: tuple[str, ...], all_new: bool, corpus_path: str, note: str, url: str | None) -> None:
    """Set a bucket's status (new, reported, fixed or ignored; campaigns skip ignored ones), a bug's
    (``bug-...``: every bucket of it), or with --all-new every new bucket's; --url records where
    the vendor's bug is.

    \b
    Examples:
      clfuzz mark bug-3fa2c1 reported --url https://github.com/pocl/pocl/issues/1234
      clfuzz mark --all-new ignored --note "baseline of 2026-11-24"
    """
    if len(args) != (1 if all_new else 2):
        raise click.UsageError("give STATUS with --all-new, else BUCKET STATUS")
    from urllib.parse import urlparse

    from triage.baseline import mark_all_new

    status = args[-1]
    if status not in STATUSES:
        raise click.UsageError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
    if url is not None and all_new:
        raise BadInput("--url names one vendor bug: give it with BUCKET STATUS, not --all-new")
    if url is not None and (urlparse(url).scheme not in ("http", "https") or not urlparse(url).netloc):
        raise BadInput(f"--url {url!r} is not a web address: give the vendor bug's http:// or https:// address")
    corpus = open_corpus(corpus_path)
    if all_new:
        click.echo(f"{mark_all_new(corpus, status, note)} new buckets marked {status}")
        return
    from triage.bugs import resolve

    try:
        marked = [corpus.mark(bid, status, note, url) for bid in resolve(corpus, args[0])]
    except CorpusError as e:
        raise fail(e) from None
    for b in marked:
        click.echo(f"{b['id']} {b['status']}: {b['title']}" + (f" ({b['url']})" if b.get("url") else ""))


@click.command()
@click.argument("refs", nargs=-1, metavar="[BUG_OR_BUCKET]...")
@corpus_option()
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Text file to write (keep it under version control).")
def baseline(refs: tuple[str, ...], corpus_path: str, out_path: str) -> None:
    """Write the buckets a team has dealt with (every status but new; of the bugs or buckets
    given, if any) as a reviewable text file, one line per bucket, for `clfuzz ci --baseline FILE`.

    \b
    Examples:
      clfuzz baseline -o ci/clfuzz-baseline.txt
      clfuzz baseline bug-3fa2c1e0 -o ci/pocl-baseline.txt
    """
    from triage.baseline import write_baseline
    from triage.bugs import resolve

    out = output_path(out_path)
    corpus = open_corpus(corpus_path, read_only=True)
    try:
        only = [bid for ref in refs for bid in resolve(corpus, ref)] or None
        n = write_baseline(corpus, out, only)
    except (CorpusError, OSError) as e:
        raise fail(e) from None
    click.echo(f"{n} buckets in {out_path}")


@click.command()
@click.argument("bucket", metavar="BUG_OR_BUCKET")
@corpus_option("SQLite corpus to read and update.")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the report into (new or empty).")
@click.option("--force", is_flag=True, help="Empty the --out folder first if it holds files (an earlier report).")
def report(bucket: str, corpus_path: str, out_dir: str, force: bool) -> None:
    """Write a vendor-ready report of a bucket or a bug (``bug-...``: its first bucket's report with
    every bucket listed as a variant, with its values, and why they are one bug): README.md, the
    kernel of each front end it fails on, a standalone repro.py. A bucket not reduced yet is reduced
    first, on this machine's driver (or the command says why not); that reduction is not stored:
    the corpus gains no bucket and no row.

    \b
    Examples:
      clfuzz report bug-3fa2c1 -o reports/3fa2c1
      clfuzz report 3fa2c1 --corpus c.db -o reports/3fa2c1
    """
    from triage.bug_report import report_bug
    from triage.bugs import PREFIX
    from triage.report import ReportError, report_bucket

    out = output_path(out_dir, folder=True)  # before the reduction
    corpus = open_corpus(corpus_path)
    write = report_bug if bucket.startswith(PREFIX) else report_bucket
    try:
        folder = write(corpus, bucket, out, local_targets(None), force=force, say=click.echo)
    except ReportError as e:
        raise BadInput(str(e)) from None
    except (CorpusError, OSError) as e:
        raise fail(e) from None
    click.echo(f"{folder}: " + ", ".join(sorted(p.name for p in folder.iterdir())))


@click.command("export-regressions")
@click.argument("buckets", nargs=-1)
@corpus_option()
@click.option("-o", "--out", "out_dir", default="corpus/regressions", show_default=True,
              type=click.Path(file_okay=False), help="Folder of the regression files.")
def export_regressions(buckets: tuple[str, ...], corpus_path: str, out_dir: str) -> None:
    """Write reduced cases (every reduced bucket not ignored, or the BUCKETS given: bucket ids, or
    bug ids for every bucket of a bug) as regression files that the test suite replays on every
    local driver.

    Example: clfuzz export-regressions --corpus lab.db
    """
    from triage.bugs import resolve
    from triage.regressions import export

    out = output_path(out_dir, folder=True)  # before the runs
    corpus = open_corpus(corpus_path, read_only=True)
    try:
        wanted = [bid for ref in buckets for bid in resolve(corpus, ref)]
        written = export(corpus, local_targets(None), out, wanted or None)
    except (CorpusError, OSError) as e:
        raise fail(e) from None
    click.echo(f"{len(written)} regression files in {out_dir}" + "".join(f"\n  {p}" for p in written))

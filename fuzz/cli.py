"""The ``clfuzz`` command: parses, calls the library, formats. No logic lives here.

Library errors (a bad corpus, an unknown driver or area, a malformed program file) become one
line on stderr and exit status 1 (click's ``ClickException``), never a traceback.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from corpus.stats import LARGEST_TITLE, markdown, summarize
from corpus.buckets import STATUSES
from corpus.store import Corpus, CorpusError
from fuzz.ir import InvalidProgram, Program
from fuzz.types import SCALARS

DEFAULT_CORPUS = "clfuzz.db"
console = Console(width=None if sys.stdout.isatty() else 160)  # logs keep whole tables


def _fail(e: Exception) -> click.ClickException:
    return click.ClickException(str(e).splitlines()[0] if str(e) else type(e).__name__)


def _targets(drivers: str | None):
    from fuzz.drivers import UnknownDriver, discover, select

    names = [n.strip() for n in drivers.split(",") if n.strip()] if drivers else None
    try:
        return select(discover(), names)
    except UnknownDriver as e:
        raise _fail(e) from None


def _open_corpus(path: str, create: bool) -> Corpus:
    try:
        return Corpus(path, create=create)
    except CorpusError as e:
        raise _fail(e) from None


@click.group()
@click.version_option(package_name="clfuzz")
def cli() -> None:
    """clfuzz: property-based differential fuzzing of OpenCL drivers against a bit-exact oracle."""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the fingerprints as JSON.")
def drivers(as_json: bool) -> None:
    """List every OpenCL device found, with its fingerprint.

    Example: clfuzz drivers --json
    """
    from fuzz.drivers import describe, table

    targets = _targets(None)
    if as_json:
        click.echo(json.dumps(describe(targets), indent=2, sort_keys=True))
    else:
        console.print(table(targets))
        if not targets:
            click.echo("no OpenCL device found: run `bash setup.sh campaign` to install the local drivers", err=True)


@cli.command()
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Time budget.")
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True, help="SQLite corpus to write.")
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--areas", help="Comma-separated areas to generate (default: all: conversions, spirv, expressions, "
                              "atomics, images, math).")
@click.option("--budget", help="Per-area budgets over the campaign's life: AREA=TIME (s, m, h: driver time) or "
                               "AREA=Np (programs), comma-separated, e.g. images=2m,atomics=300p.")
@click.option("--seed", type=int, default=0, show_default=True, help="Hypothesis seed (reproducible campaigns).")
@click.option("--name", help="Campaign name (default: campaign-SEED).")
@click.option("--statements", type=click.IntRange(min=1), help="Statements per program (default from the policy).")
@click.option("--global-size", type=click.IntRange(min=1), help="Work-items per program (default from the policy).")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds one build+run may take before the worker is killed.")
@click.option("--max-programs", type=click.IntRange(min=1), help="Stop after this many programs.")
@click.option("--summary", "summary_path", help="Markdown summary to write (default: CORPUS.summary.md).")
@click.option("--triage-minutes", type=click.FloatRange(min=0),
              help="After the campaign, confirm and reduce its new buckets for up to this long "
                   "(default: a quarter of --minutes; 0: no triage).")
@click.option("--reduce/--no-reduce", "do_reduce", default=True, show_default=True,
              help="Reduce the confirmed new buckets during triage (else only confirm them).")
@click.option("--cluster", help="Dask scheduler address (tcp://HOST:8786): every worker fuzzes its own drivers "
                                "(its CLFUZZ_DRIVERS) into this corpus; no triage (fuzz.distributed).")
def run(minutes, corpus_path, drivers, areas, budget, seed, name, statements, global_size, timeout, max_programs,
        summary_path, triage_minutes, do_reduce, cluster) -> None:
    """Run (or resume) a differential campaign on the local OpenCL drivers.

    A campaign's settings and state live in the corpus: running the same --name (default
    campaign-SEED) again resumes it with its stored settings.

    Example: clfuzz run --minutes 5 --corpus c.db --drivers pocl,rusticl --seed 1 --budget images=2m
    """
    from dataclasses import replace

    from fuzz.campaign import AREAS, CampaignError, run_campaign, stored_settings
    from fuzz.display import line, render
    from fuzz.policy import Policy
    from fuzz.scheduler import BudgetError, parse_budgets

    ctx = click.get_current_context()
    corpus = _open_corpus(corpus_path, create=True)
    name = name or f"campaign-{seed}"
    stored = stored_settings(corpus, name)
    given = {p for p in ("seed", "areas", "statements", "global_size", "budget")
             if ctx.get_parameter_source(p) != click.core.ParameterSource.DEFAULT}
    if stored and not given:
        click.echo(f"resuming campaign {name} (seed {stored.seed}, areas {','.join(stored.areas)})")
        seed, area_names, policy, budgets = stored.seed, stored.areas, stored.policy, stored.budgets
    else:
        area_names = tuple(a.strip() for a in areas.split(",") if a.strip()) if areas else tuple(AREAS)
        policy = Policy()
        if statements:
            policy = replace(policy, statements=statements)
        if global_size:
            policy = replace(policy, global_size=global_size)
        try:
            budgets = parse_budgets(budget or "", area_names)
        except BudgetError as e:
            raise _fail(e) from None
    if cluster:  # every node fuzzes its own drivers, into this corpus (fuzz.distributed)
        from fuzz.distributed import ClusterError, run_distributed, summary_markdown

        if drivers:
            raise _fail(ValueError("--drivers does not apply with --cluster: each worker's CLFUZZ_DRIVERS does"))

        def on_slice(e):
            click.echo(f"{e.node}: slice failed ({e.error}); {'trying again' if e.retry else 'left out'}" if e.error
                       else f"{e.node}: slice {e.slice}, {e.programs} programs, {e.judged:,} lanes in "
                            f"{e.seconds:.0f} s, merged in {e.merge_s:.2f} s")
        try:
            result = run_distributed(corpus, cluster, minutes=minutes, seed=seed, areas=area_names, policy=policy,
                                     budgets=budgets, name=name, timeout_s=timeout, on_slice=on_slice)
        except (CampaignError, ClusterError) as e:
            raise _fail(e) from None
        out = Path(summary_path or f"{corpus_path}.summary.md")
        out.write_text(summary_markdown(corpus, result.name))
        for node, n in result.nodes.items():
            click.echo(f"{node} ({', '.join(n.targets)}): {n.slices} slices, {n.programs} programs, "
                       f"{n.judged:,} lanes, {n.mismatches:,} mismatching, {len(n.errors)} failed slices")
        click.echo(f"{'interrupted: ' if result.interrupted else ''}{result.programs} programs on {len(result.nodes)} "
                   f"nodes in {result.wall_s:.0f} s; corpus {corpus_path}, summary {out}")
        return
    targets = _targets(drivers)
    live = Live(console=console, refresh_per_second=2) if console.is_terminal else None
    last_line = [0.0]

    def progress(p):
        if live:
            live.update(render(p, minutes))
        elif time.monotonic() - last_line[0] > 15:
            last_line[0] = time.monotonic()
            click.echo(line(p))

    try:
        if live:
            live.start()
        result = run_campaign(corpus, targets, minutes=minutes, seed=seed, name=name, policy=policy,
                              areas=area_names, budgets=budgets, timeout_s=timeout,
                              max_programs=max_programs, on_progress=progress)
    except CampaignError as e:
        raise _fail(e) from None
    finally:
        if live:
            live.stop()
    from fuzz.display import targets_table

    console.print(targets_table(result.programs, result.targets, result.wall_s, minutes))
    triage_s = 60 * (minutes / 4 if triage_minutes is None else triage_minutes)
    if triage_s > 0 and not result.interrupted:
        from triage.session import triage

        def event(what, bucket):
            click.echo(f"triage: {what:9} {bucket['id']}  {bucket['title']}")

        try:
            t = triage(corpus, targets, result.name, triage_s, reduce=do_reduce, on_event=event)
        except KeyboardInterrupt:
            click.echo("triage interrupted: the corpus keeps what was confirmed and reduced so far")
        else:
            click.echo(f"triage: {len(t.confirmed)} buckets confirmed, {len(t.flaky)} flaky, {len(t.reduced)} reduced, "
                       f"{len(t.left)} left for later (`clfuzz reduce BUCKET`)")
    summary = summarize(corpus, result.name)
    out = Path(summary_path or f"{corpus_path}.summary.md")
    out.write_text(markdown(summary))
    click.echo(f"{'interrupted: ' if result.interrupted else ''}{result.programs} programs in {result.wall_s:.0f} s; "
               f"corpus {corpus_path}, summary {out}")


def _load_program(ref: str, corpus_path: str) -> Program:
    path = Path(ref)
    if path.suffix == ".json" or path.is_file():
        try:
            return Program.from_json(path.read_text())
        except (OSError, InvalidProgram) as e:
            raise _fail(InvalidProgram(f"{ref}: {e}")) from None
    corpus = _open_corpus(corpus_path, create=False)
    try:
        return corpus.program(ref)
    except CorpusError as e:
        raise _fail(e) from None


@cli.command()
@click.argument("program_id")
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--limit", type=int, default=10, show_default=True, help="Mismatching lanes shown per driver.")
def replay(program_id, corpus_path, drivers, limit) -> None:
    """Re-run a stored program (an id, id prefix or program .json file) and print expected vs actual.

    Example: clfuzz replay 3fa2c1 --corpus c.db
    """
    from fuzz.drivers import Worker
    from fuzz.execute import execute, supports

    program = _load_program(program_id, corpus_path)
    for target in _targets(drivers):
        if not supports(target, program):
            why = f"needs {', '.join(sorted(program.requires))}" if program.requires else "no statement it can take"
            click.echo(f"{target.name}: skipped ({why})")
            continue
        with Worker(target) as worker:
            outcome = execute(program, target, worker, None)
        v = outcome.verdict
        click.echo(f"{target.name}: {outcome.status}, {v.judged} lanes judged, {v.mismatches} mismatching")
        for r in (v.rows + outcome.failures)[:limit]:
            click.echo(f"  {r['buffer']}[{r['work_item']}] lane {r['lane']}: {r['expression']}")
            click.echo(f"    inputs   {r['inputs']}")
            click.echo(f"    expected {r['expected_value']}  bits {r['expected']}  allowed {r['allowed']}")
            click.echo(f"    actual   {r['actual_value']}  bits {r['actual']}")
            click.echo(f"    rule     {r['rule_text']} ({r['section']})")


@cli.command()
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--campaign", help="Only this campaign.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.option("--coverage", "show_coverage", is_flag=True,
              help="Print the construct x type x width matrix each target covered.")
def stats(corpus_path, campaign, as_json, show_coverage) -> None:
    """Summarize a corpus: per driver, runs, checks, construct coverage and the kinds of disagreement found,
    and (math area) the largest error in ulps per function, type and driver, with its input.

    Example: clfuzz stats --corpus c.db --coverage
    """
    corpus = _open_corpus(corpus_path, create=False)
    summary = summarize(corpus, campaign)
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
        return
    if show_coverage:
        _print_coverage(summary["coverage"])
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


def _print_largest_errors(rows: list[dict]) -> None:
    """The largest error in ulps (OpenCL C 3.0 §7.4, ulp) per function, type and driver, and the
    operands of the lane that made it (corpus.stats.largest_errors)."""
    t = Table(title=LARGEST_TITLE)
    for col in ("operation", "type", "driver", "ulps", "within bound", "input"):
        t.add_column(col, overflow="fold")
    for r in rows:
        text = r["input"] if len(r["input"]) <= 80 else r["input"][:79] + "…"
        t.add_row(escape(r["operation"]), r["type"], escape(r["target"]), f"{r['ulps']:g}",
                  "yes" if r["accepted"] else "[bold red]no[/]", escape(text))
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


@cli.command("reduce")
@click.argument("ref")
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--budget", type=click.FloatRange(min=1), default=120.0, show_default=True,
              help="Seconds the reduction may take (it stops with the smallest program found so far).")
def reduce_command(ref, corpus_path, budget) -> None:
    """Reduce a stored disagreement (a bucket, disagreement or program id, or a unique prefix).

    The reduced program is stored beside the original; it shows the same disagreement (same
    driver and path, operation and kind) and nothing smaller does.

    Example: clfuzz reduce 3fa2c1 --corpus c.db
    """
    from fuzz.drivers import Worker
    from triage.reduce import size
    from triage.session import find_row, reduce_stored, target_of

    corpus = _open_corpus(corpus_path, create=False)
    try:
        row = find_row(corpus, ref)
        target = target_of(row, _targets(None))
    except CorpusError as e:
        raise _fail(e) from None
    with Worker(target) as worker:
        reduction = reduce_stored(corpus, row, target, worker, budget)
    if reduction is None:
        raise click.ClickException(f"{row['target']} did not show the disagreement again on program "
                                   f"{row['program_id']}: nothing to reduce (it may be flaky)")
    before, after = size(reduction.original), size(reduction.reduced)
    click.echo(f"reduced {reduction.original.id} -> {reduction.reduced.id} on {target.name} in "
               f"{reduction.seconds:.1f} s ({reduction.candidates} candidates run)")
    for key in before:
        click.echo(f"  {key:13} {before[key]:>8} -> {after[key]}")
    r = reduction.rows[0]
    click.echo(f"  {r['expression']}: expected {r['expected_value']}, actual {r['actual_value']}")


@cli.command()
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--campaign", help="Only disagreements of this campaign.")
@click.option("--status", type=click.Choice(STATUSES), help="Only buckets with this status.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def buckets(corpus_path, campaign, status, as_json) -> None:
    """List the buckets of distinct disagreements: counts, first and last seen, status.

    Example: clfuzz buckets --corpus c.db --status new
    """
    corpus = _open_corpus(corpus_path, create=False)
    found = [b for b in corpus.buckets(campaign) if status is None or b["status"] == status]
    if as_json:
        click.echo(json.dumps(found, indent=2, sort_keys=True))
        return
    t = Table(title=f"{corpus_path}: {len(found)} buckets")
    for col in ("bucket", "status", "confirmed", "reduced", "rows", "programs", "first seen", "last seen", "what"):
        t.add_column(col)
    for b in found:
        t.add_row(b["id"], b["status"], b["confirmation"], "yes" if b["reduced"] else "", str(b["rows"]),
                  str(b["programs"]), _when(b["first_seen"]), _when(b["last_seen"]), b["title"])
    console.print(t)


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else ""


@cli.group("corpus")
def corpus_group() -> None:
    """Whole-corpus operations.

    Example: clfuzz corpus merge lab1.db lab2.db -o all.db
    """


@corpus_group.command("merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Corpus to merge into (created if missing; may be one of the sources).")
def corpus_merge(sources, out_path) -> None:
    """Union corpora from several machines into one, without duplicates, keeping bucket status
    (the later change wins) and campaign state.

    Example: clfuzz corpus merge lab1.db lab2.db -o all.db
    """
    from corpus.merge import merge

    for src in sources:
        _open_corpus(src, create=False).close()  # a missing or unusable source: one line, nothing written
    into = _open_corpus(out_path, create=True)
    for src in sources:
        if Path(src).resolve() == Path(out_path).resolve():
            continue
        try:
            m = merge(into, src)
        except CorpusError as e:
            raise _fail(e) from None
        click.echo(f"{src}: +{m.programs} programs, +{m.runs} runs, +{m.disagreements} disagreements, "
                   f"+{m.buckets} buckets, +{m.reductions} reductions, +{m.campaigns} campaigns")
    click.echo(f"wrote {out_path}")


@cli.command()
@click.argument("bucket")
@click.argument("status", type=click.Choice(STATUSES))
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--note", default="", help="Why (a vendor's bug link, a reason to ignore).")
def mark(bucket, status, corpus_path, note) -> None:
    """Set a bucket's status: new, reported, fixed or ignored (campaigns skip ignored ones).

    Example: clfuzz mark 3fa2c1 reported --note https://github.com/pocl/pocl/issues/1234
    """
    corpus = _open_corpus(corpus_path, create=False)
    try:
        b = corpus.mark(bucket, status, note)
    except CorpusError as e:
        raise _fail(e) from None
    click.echo(f"{b['id']} {b['status']}: {b['title']}")


@cli.command()
@click.argument("bucket")
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the report into.")
def report(bucket, corpus_path, out_dir) -> None:
    """Write a vendor-ready report of a bucket: README.md, the kernel, a standalone repro.py.

    Example: clfuzz report 3fa2c1 --corpus c.db -o reports/3fa2c1
    """
    from triage.report import write_report

    corpus = _open_corpus(corpus_path, create=False)
    try:
        folder = write_report(corpus, bucket, out_dir)
    except CorpusError as e:
        raise _fail(e) from None
    click.echo(f"{folder}: " + ", ".join(sorted(p.name for p in folder.iterdir())))


@cli.command("ci")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="JUnit XML report to write.")
@click.option("--minutes", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Time budget of the smoke campaign (0: regressions only).")
@click.option("--corpus", "corpus_path", help="Corpus of the smoke campaign; its ignored and reported buckets are "
                                              "known (default: a temporary corpus, kept only when it found new buckets).")
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--regressions", "regressions_dir", default="corpus/regressions", show_default=True,
              type=click.Path(file_okay=False), help="Folder of the regression files.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the smoke campaign (campaign ci-SEED).")
def ci(junit_path, minutes, corpus_path, drivers, regressions_dir, seed) -> None:
    """Replay the regression files on every local driver, run a short smoke campaign and write a
    JUnit report. Exit status 0: all passed; 1: a regression, a fixed known bug, a changed oracle
    verdict or a new bucket; 2: cannot run (no device, no or malformed regression folder).

    Example: clfuzz ci --junit report.xml --minutes 0.5 --corpus ci.db
    """
    from triage.ci import CiError, run_ci, summary, write_junit

    def case(c):
        if c.failing:
            click.echo(f"  {c.outcome.upper():6} {c.classname}  {c.name}")

    try:
        names = [n.strip() for n in drivers.split(",") if n.strip()] if drivers else None
        result = run_ci(names, regressions=regressions_dir, minutes=minutes, seed=seed,
                        corpus_path=corpus_path, on_case=case, on_phase=click.echo)
        if junit_path:
            write_junit(result, junit_path)
    except (CiError, OSError) as e:
        click.echo(f"Error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", err=True)
        sys.exit(2)
    for line in summary(result):
        click.echo(line)
    if junit_path:
        click.echo(f"junit: {junit_path}")
    sys.exit(result.exit_code)


@cli.command("export-regressions")
@click.argument("buckets", nargs=-1)
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("-o", "--out", "out_dir", default="corpus/regressions", show_default=True,
              type=click.Path(file_okay=False), help="Folder of the regression files.")
def export_regressions(buckets, corpus_path, out_dir) -> None:
    """Write reduced cases (every reduced bucket not ignored, or the BUCKETS given) as regression
    files that the test suite replays on every local driver.

    Example: clfuzz export-regressions --corpus c.db
    """
    from triage.regressions import export

    corpus = _open_corpus(corpus_path, create=False)
    try:
        written = export(corpus, _targets(None), Path(out_dir), list(buckets) or None)
    except CorpusError as e:
        raise _fail(e) from None
    click.echo(f"{len(written)} regression files in {out_dir}" + "".join(f"\n  {p}" for p in written))


@cli.command()
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--campaign", help="Only this campaign.")
@click.option("-o", "--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="HTML file to write.")
@click.option("--reports", "reports_dir", type=click.Path(file_okay=False),
              help="Also link each bucket to DIR/BUCKET/README.md where `clfuzz report` wrote one.")
def dashboard(corpus_path, campaign, out_path, reports_dir) -> None:
    """Write a self-contained HTML page of a corpus: disagreements and buckets over time, throughput
    per driver, the coverage heat map, and the buckets with their reports. Opens without network.

    Example: clfuzz dashboard --corpus c.db -o report.html
    """
    from triage.dashboard import write_dashboard

    corpus = _open_corpus(corpus_path, create=False)
    try:
        written = write_dashboard(corpus, Path(out_path), campaign,
                                  reports_dir=Path(reports_dir) if reports_dir else None)
    except (CorpusError, OSError) as e:
        raise _fail(e) from None
    click.echo(f"{written} ({written.stat().st_size:,} bytes)")


@cli.command()
@click.argument("program_id", required=False)
@click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True)
@click.option("--spirv", is_flag=True, help="Write the SPIR-V module (ID.spv) and its disassembly (ID.spvasm).")
@click.option("--random", "random_n", type=click.IntRange(min=1),
              help="Write N random programs (.cl where OpenCL C can express it, .spv, .json).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random programs.")
@click.option("--statements", type=click.IntRange(min=1), default=16, show_default=True,
              help="Statements per random program.")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), help="Folder to write into.")
def emit(program_id, corpus_path, spirv, random_n, seed, statements, out_dir) -> None:
    """Write a stored program (id, prefix or .json file) as OpenCL C or SPIR-V, or random ones.

    \b
    Examples:
      clfuzz emit 3fa2c1 --corpus c.db > kernel.cl
      clfuzz emit 3fa2c1 --corpus c.db --spirv -o out/     (out/ID.spv, out/ID.spvasm)
      clfuzz emit --random 100 --seed 7 -o progs/          (ID.cl, ID.spv, ID.json each)
    """
    from fuzz.emit import spirv as spirv_emit
    from fuzz.emit.opencl_c import emit as emit_c
    from fuzz.emit.validate import target_env, validate
    from fuzz.drivers.routes import PATH_OPENCL_C
    from fuzz.ops import paths_of

    if (program_id is None) == (random_n is None):
        raise click.UsageError("give either a PROGRAM_ID or --random N")
    if random_n is not None and not out_dir:
        raise click.UsageError("--random needs -o DIR, the folder to write the programs into")
    if program_id is not None and not spirv and not out_dir:
        program = _load_program(program_id, corpus_path)
        if PATH_OPENCL_C not in paths_of(program):
            raise click.ClickException(f"{program.id} uses operations only SPIR-V has: write it with --spirv -o DIR")
        click.echo(emit_c(program), nl=False)
        return
    folder = Path(out_dir or ".")
    folder.mkdir(parents=True, exist_ok=True)
    if program_id is not None:
        programs = [_load_program(program_id, corpus_path)]
    else:
        from fuzz.campaign import AREAS, area_strategy
        from fuzz.policy import Policy
        from fuzz.strategies.conversions import Caps
        from fuzz.strategies.draws import sample

        policy = Policy(statements=statements, global_size=1024)
        programs = sample(area_strategy(tuple(AREAS), Caps(fp64=True), policy), random_n, seed)
    for program in programs:
        written = []
        if (random_n is not None or not spirv) and PATH_OPENCL_C in paths_of(program):
            written.append(_write(folder / f"{program.id}.cl", emit_c(program).encode()))
        if random_n is not None:
            written.append(_write(folder / f"{program.id}.json", program.to_json().encode()))
        if spirv or random_n is not None:
            if "fp16" in program.requires:
                raise click.ClickException(f"{program.id} uses half: no valid OpenCL SPIR-V module has Float16 "
                                           f"(spirv-val), so it has no .spv")
            module = spirv_emit.emit(program)
            problem = validate(module, target_env(program))
            if problem is not None:  # an emitter bug: say so, do not hand the file out as valid
                raise click.ClickException(f"{program.id}: emitted module is invalid ({problem.splitlines()[0]})")
            written.append(_write(folder / f"{program.id}.spv", module))
            if random_n is None:
                written.append(_write(folder / f"{program.id}.spvasm", _disassemble(module)))
        click.echo(" ".join(written))


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def _disassemble(module: bytes) -> bytes:
    from fuzz.emit.validate import disassemble

    try:
        return disassemble(module)
    except FileNotFoundError:
        raise click.ClickException("spirv-dis not found: install Debian's spirv-tools (setup.sh does)") from None


def main() -> None:  # pragma: no cover - console entry
    cli(prog_name="clfuzz")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The commands that run on the local OpenCL drivers: ``drivers`` lists them, ``run`` fuzzes them (or a
cluster's); ``ci`` (app.commands_ci) replays the regression files and runs a smoke campaign on them."""

from __future__ import annotations

import time

import click
from rich.live import Live

from app.commands_versions import install_releases
from app.json_forms import echo_json
from app.options import budget_start, console, corpus_option, fail, local_targets, open_corpus, output_path
from corpus.stats import markdown, stall_line, summarize


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the fingerprints as JSON (docs/commands.md).")
@click.option("--releases", "with_releases", is_flag=True,
              help="Also the drivers of the installed Debian releases (`clfuzz releases install`).")
@click.option("--install-versions", is_flag=True,
              help="As root: first build the Debian trixie, testing and unstable roots with their drivers under "
                   "the state folder (once; existing roots are reused), then list them beside the system's.")
@click.option("--variants", "with_variants", is_flag=True,
              help="Also the variant targets (PoCL's work-group methods: pocl+wg-loops, ...), each checked on its "
                   "driver; run one by naming it in --drivers.")
def drivers(as_json: bool, with_releases: bool, install_versions: bool, with_variants: bool) -> None:
    """List every OpenCL device found, with its fingerprint; with --releases or --install-versions
    also every driver release, with --variants every variant target, and those that cannot run
    here with the reason.

    Example: clfuzz drivers --json; clfuzz drivers --variants; sudo clfuzz drivers --install-versions
    """
    from fuzz.drivers import describe, discover, table
    from fuzz.drivers.discovery import UNAVAILABLE, variants

    if install_versions:
        install_releases()
    releases = with_releases or install_versions
    targets = discover(releases=True) if releases else local_targets(None)
    targets += variants() if with_variants else []
    unavailable = dict(UNAVAILABLE) if releases or with_variants else {}
    if as_json:
        echo_json("drivers", {"drivers": describe(targets), "unavailable": unavailable})
        return
    console.print(table(targets))
    for name, why in unavailable.items():
        click.echo(f"unavailable: {name}: {why}")
    if not targets:
        click.echo("no OpenCL device found: run `bash setup.sh campaign` to install the local drivers", err=True)


@click.command()
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Time budget of the whole command (start-up, the campaign and the triage beside it); it "
                   "returns within it plus the wrap-up (writing the summary: seconds; at most 10% or 15 s).")
@corpus_option("SQLite corpus to write (created, with its folder, if missing).")
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--areas", help="Comma-separated areas to generate (default: conversions, spirv, expressions, "
                              "atomics, images, math, shapes; also: flow, docs/flow.md).")
@click.option("--budget", help="Per-area budgets over the campaign's life: AREA=TIME (s, m, h: driver time) or "
                               "AREA=Np (programs), comma-separated, e.g. images=2m,atomics=300p.")
@click.option("--seed", type=int, default=0, show_default=True, help="Hypothesis seed (reproducible campaigns).")
@click.option("--name", help="Campaign name (default: campaign-SEED).")
@click.option("--statements", type=click.IntRange(min=1), help="Statements per program (default from the policy).")
@click.option("--global-size", type=click.IntRange(min=1), help="Work-items per program (default from the policy).")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Ceiling of one build+run, in seconds; below it each target's limit follows its measured "
                   "runs of the area (campaign.timeouts), and only a timeout at the ceiling is a hang.")
@click.option("--max-programs", type=click.IntRange(min=1), help="Stop after this many programs.")
@click.option("--summary", "summary_path", help="Markdown summary to write (default: CORPUS.summary.md).")
@click.option("--triage-share", type=click.FloatRange(min=0, max=0.9), default=0.25, show_default=True,
              help="Share of the campaign's time on each driver that confirms and reduces the campaign's new "
                   "buckets beside it; in its last tenth (at most 30 s) triage takes what it needs (0: no triage; the "
                   "buckets stay pending for the next run or `clfuzz reduce`).")
@click.option("--reduce/--no-reduce", "do_reduce", default=True, show_default=True,
              help="Reduce the confirmed new buckets during triage (else only confirm them).")
@click.option("--area-floor", type=click.FloatRange(min=0, max=1),
              help="Share of each target's time kept for the areas it takes, evenly (default from the policy: "
                   "0.4); the rest goes where new bugs turn up.")
@click.option("--jobs", type=click.IntRange(min=0),
              help="Harness worker processes that draw, compute expectations and judge (default: the cores left "
                   "after the driver workers, none below 2; 0: the campaign's own process).")
@click.option("--workers", type=click.IntRange(min=1),
              help="Driver worker processes per target, each building and running programs of its own (default: "
                   "one, and for a GPU one more for every 4 spare cores, at most 3).")
@click.option("--cluster", help="Dask scheduler address (tcp://HOST:8786): every worker fuzzes its own drivers "
                                "(its CLFUZZ_DRIVERS) into this corpus; no triage (app.distributed).")
def run(minutes: float, corpus_path: str, drivers: str | None, areas: str | None, budget: str | None, seed: int,
        name: str | None, statements: int | None, global_size: int | None, timeout: float,
        max_programs: int | None, summary_path: str | None, triage_share: float, do_reduce: bool,
        area_floor: float | None, jobs: int | None, workers: int | None, cluster: str | None) -> None:
    """Run (or resume) a differential campaign on the local OpenCL drivers.

    A campaign's settings and state live in the corpus: running the same --name (default
    campaign-SEED) again resumes it with its stored settings.

    Example: clfuzz run --minutes 5 --drivers pocl,rusticl --seed 1 --budget images=2m
    """
    from dataclasses import replace

    from app.display import line, render, triage_line
    from campaign.campaign import closing_s, run_campaign
    from campaign.scheduler import BudgetError, parse_budgets
    from campaign.settings import CampaignError, stored_settings
    from fuzz.strategies import DEFAULT_AREAS
    from lang.policy import Policy

    ctx = click.get_current_context()
    corpus = open_corpus(corpus_path, create=True)
    summary_out = output_path(summary_path or f"{corpus_path}.summary.md")  # before the campaign
    name = name or f"campaign-{seed}"
    stored = stored_settings(corpus, name)
    given = {p for p in ("seed", "areas", "statements", "global_size", "budget", "area_floor")
             if ctx.get_parameter_source(p) != click.core.ParameterSource.DEFAULT}
    if stored and not given:
        click.echo(f"resuming campaign {name} (seed {stored.seed}, areas {','.join(stored.areas)})")
        seed, area_names, policy, budgets = stored.seed, stored.areas, stored.policy, stored.budgets
    else:
        area_names = tuple(a.strip() for a in areas.split(",") if a.strip()) if areas else DEFAULT_AREAS
        policy = Policy()
        if statements:
            policy = replace(policy, statements=statements)
        if global_size:
            policy = replace(policy, global_size=global_size)
        if area_floor is not None:
            policy = replace(policy, area_floor=area_floor)
        try:
            budgets = parse_budgets(budget or "", area_names)
        except BudgetError as e:
            raise fail(e) from None
    if cluster:  # every node fuzzes its own drivers, into this corpus (app.distributed)
        from app.distributed import ClusterError, run_distributed, summary_markdown

        if drivers:
            raise fail(ValueError("--drivers does not apply with --cluster: each worker's CLFUZZ_DRIVERS does"))

        def on_slice(e):
            click.echo(f"{e.node}: slice failed ({e.error}); {'trying again' if e.retry else 'left out'}" if e.error
                       else f"{e.node}: slice {e.slice}, {e.programs} programs, {e.judged:,} lanes in "
                            f"{e.seconds:.0f} s, merged in {e.merge_s:.2f} s")
        try:
            result = run_distributed(corpus, cluster, minutes=minutes, seed=seed, areas=area_names, policy=policy,
                                     budgets=budgets, name=name, timeout_s=timeout, on_slice=on_slice)
        except (CampaignError, ClusterError) as e:
            raise fail(e) from None
        summary_out.write_text(summary_markdown(corpus, result.name))
        for node, n in result.nodes.items():
            click.echo(f"{node} ({', '.join(n.targets)}): {n.slices} slices, {n.programs} programs, "
                       f"{n.judged:,} lanes, {n.mismatches:,} mismatching, {len(n.errors)} failed slices")
        click.echo(f"{'interrupted: ' if result.interrupted else ''}{result.programs} programs on {len(result.nodes)} "
                   f"nodes in {result.wall_s:.0f} s; corpus {corpus_path}, summary {summary_out}")
        return
    from fuzz.drivers import discover
    from triage.beside import Beside, pending

    started = budget_start()
    targets = local_targets(drivers)
    live = Live(console=console, refresh_per_second=2) if console.is_terminal else None
    last_line = [0.0]

    def progress(p):
        if live:
            live.update(render(p, minutes))
        elif time.monotonic() - last_line[0] > 15:
            last_line[0] = time.monotonic()
            click.echo(line(p))

    triaged: dict[str, int] = {}

    def event(what, bucket):
        triaged[what] = triaged.get(what, 0) + 1
        if not live or what == "failed":
            click.echo(triage_line(what, bucket))

    from fuzz.drivers.releases import installed

    releases = discover(releases=True) if installed() else None  # bucket release ranges after reduction
    beside = (Beside(corpus, name, reduce=do_reduce, on_event=event, releases=releases, targets=targets)
              if triage_share > 0 else None)
    try:
        if live:
            live.start()
        result = run_campaign(corpus, targets, minutes=minutes, seed=seed, name=name, policy=policy,
                              areas=area_names, budgets=budgets, timeout_s=timeout, max_programs=max_programs,
                              on_progress=progress, side=beside.task if beside else None, side_share=triage_share,
                              started=started, jobs=jobs, workers=workers)
    except CampaignError as e:
        raise fail(e) from None
    finally:
        if live:
            live.stop()
    from app.display import extensions_table, pool_table, targets_table, time_table

    console.print(targets_table(result.programs, result.targets, result.wall_s, minutes))
    console.print(time_table(result.targets))
    console.print(pool_table(result.pool))
    if widened := extensions_table(result.targets):
        console.print(widened)
    for notice in result.notices:
        click.echo(notice)
    if result.unrun:  # not a defect: a program of an area the targets take may need more than any one has
        areas = ", ".join(f"{area} {n}" for area, n in sorted(result.unrun.items()))
        click.echo(f"{sum(result.unrun.values())} programs drawn that no target here takes ({areas}): not run")
    left = beside.leave(result, triage_share, closing_s(minutes)) if beside else pending(corpus, result.name)
    click.echo(f"triage: {triaged.get('confirmed', 0)} buckets confirmed, {triaged.get('flaky', 0)} flaky, "
               f"{triaged.get('reduced', 0)} reduced, {triaged.get('joined', 0)} joined a known bug, "
               f"{triaged.get('failed', 0)} failed, "
               f"{triaged.get('stopped', 0)} stopped at the deadline; {left} pending (reduced first when the "
               f"campaign resumes, or `clfuzz reduce BUG` with a bug id of the bug list)")
    if any(triaged.get(k) for k in ("hang", "finished", "undecided")):
        click.echo(f"timeouts re-run at ten times the ceiling: {triaged.get('hang', 0)} hangs, "
                   f"{triaged.get('finished', 0)} finished (slow), {triaged.get('undecided', 0)} undecided "
                   "(the triage share or the deadline left too little: `clfuzz reduce BUCKET` decides them)")
    from triage.bugs import listed
    from triage.bugs import markdown as bug_markdown

    summary = summarize(corpus, result.name)
    if stalled := stall_line(summary):
        click.echo(stalled)
    head, _, rest = markdown(summary).partition("\n\n")
    found = listed(corpus, result.name)[0]
    summary_out.write_text(f"{head}\n\n{bug_markdown(found)}\n{rest}")
    click.echo(f"bug list: {len(found)} bugs in {sum(len(g.buckets) for g in found)} buckets "
               f"(`clfuzz buckets --corpus {corpus_path} --campaign {result.name}`)")
    click.echo(f"{'interrupted: ' if result.interrupted else ''}{result.programs} programs in {result.wall_s:.0f} s "
               f"({result.pending} left pending); corpus {corpus_path}, summary {summary_out}")


"""The commands of a CI job (docs/ci.md): ``ci`` replays the regression files and runs a smoke
campaign on the local drivers (app.ci), judged against expectation files shaped like
deqp-runner's; ``ci-merge`` joins the results of the shards of a ``--fraction`` run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from app.options import DEFAULT_SEVERITY, fail, output_path
from oracles import SEVERITIES


@click.command("ci")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="JUnit XML report to write.")
@click.option("--output", "output_dir", type=click.Path(file_okay=False),
              help="Folder for results.csv, junit.xml, bugs.txt (the bug list) and the smoke campaign's corpus "
                   "ci.db (unless --corpus names another).")
@click.option("--minutes", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Time budget of the smoke campaign, which ends within it (plus seconds of wrap-up); the "
                   "regression replay runs before it, outside the budget (0: regressions only).")
@click.option("--corpus", "corpus_path", help="Corpus of the smoke campaign; its ignored and reported buckets are "
                                              "known (default: a temporary corpus, kept only when it found new buckets).")
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--regressions", "regressions_dir", default="corpus/regressions", show_default=True,
              type=click.Path(file_okay=False), help="Folder of the regression files.")
@click.option("--expectations", "expectations_dir", type=click.Path(file_okay=False),
              help="Folder of expectation files, per driver <driver>-fails.txt (ID,Fail|Crash|Timeout), "
                   "<driver>-flakes.txt and <driver>-skips.txt (regexes); default: the regression files' known_wrong.")
@click.option("--update-expectations", is_flag=True,
              help="Rewrite the --expectations files of the cases this run judged from their results.")
@click.option("--flake-reruns", type=click.IntRange(min=0), default=2, show_default=True,
              help="Re-runs of an unexpected result, each on a fresh worker; one that differs makes it a Flake.")
@click.option("--fraction", type=int, default=1, show_default=True,
              help="Split the run into N shards (regression files, known buckets; each shard's smoke campaign "
                   "has a seed of its own); this job runs --fraction-start.")
@click.option("--fraction-start", type=int, default=1, show_default=True,
              help="The shard this job runs, counted from 1 to --fraction.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the smoke campaign (campaign ci-SEED; shard K uses SEED+K-1).")
@click.option("--severity", type=click.Choice(list(SEVERITIES)), default=DEFAULT_SEVERITY, show_default=True,
              help="Fail on new buckets of this severity or a more serious one (violation > recommendation > "
                   "tolerance > letter > performance: a run cut at --timeout that is no hang); the others are Warn.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False),
              help="Baseline file (clfuzz baseline): its buckets are known, so they do not fail the run.")
def ci(junit_path: str | None, output_dir: str | None, minutes: float, corpus_path: str | None, drivers: str | None,
       regressions_dir: str, expectations_dir: str | None, update_expectations: bool, flake_reruns: int,
       fraction: int, fraction_start: int, seed: int, severity: str, baseline_path: str | None) -> None:
    """Replay the regression files on every local driver, run a short smoke campaign, and judge
    every result against the expectations, in deqp-runner's words (Pass, Fail, Crash, Timeout,
    ExpectedFail, UnexpectedPass, Flake, KnownFlake, Skip, Missing, Warn): an unexpected result is
    re-run before it counts. Exit status 0: nothing failed; 1: a regression, an unexpected pass, a
    changed oracle verdict, a new bucket or a case that could not be judged; 2: cannot run (no
    device, a bad regression folder or expectation file, a fraction out of range).

    \b
    Examples:
      clfuzz ci --expectations ci/clfuzz --output results --minutes 5
      clfuzz ci --expectations ci/clfuzz --update-expectations --minutes 0
      clfuzz ci --fraction 4 --fraction-start 2 --output results/2; clfuzz ci-merge results/* -o merged
      clfuzz ci --drivers pocl-6.0 --minutes 0
    """
    from app.ci import run_ci
    from app.ci_cases import CiError, check_fraction
    from app.ci_expectations import update
    from app.ci_report import summary, write_junit, write_outputs
    from triage.baseline import BaselineError, read_baseline

    def case(c):
        if c.failing:
            click.echo(f"  {c.status:14} {c.driver}  {c.name}")

    try:
        check_fraction(fraction, fraction_start)
    except CiError as e:
        raise fail(e) from None
    if update_expectations and not expectations_dir:
        raise fail("--update-expectations rewrites the files of --expectations DIR: give the folder")
    for path in filter(None, (junit_path, output_dir and Path(output_dir) / "junit.xml")):
        output_path(path)  # before the regressions are replayed
    if update_expectations:
        Path(output_path(expectations_dir, folder=True)).mkdir(parents=True, exist_ok=True)
    if output_dir and corpus_path is None and minutes > 0:
        corpus_path = str(Path(output_dir) / "ci.db")
        Path(output_dir).mkdir(parents=True, exist_ok=True)
    try:
        names = [n.strip() for n in drivers.split(",") if n.strip()] if drivers else None
        known = read_baseline(Path(baseline_path)) if baseline_path else frozenset()
        result = run_ci(names, regressions=regressions_dir, minutes=minutes, seed=seed, corpus_path=corpus_path,
                        on_case=case, on_phase=click.echo, severity=severity, baseline=known,
                        expectations=expectations_dir, reruns=flake_reruns, fraction=fraction, start=fraction_start)
        if junit_path:
            write_junit(result, junit_path)
        written = write_outputs(result, output_dir) if output_dir else []
        if update_expectations:
            written += update(expectations_dir, result.cases, result.beside)
    except (CiError, BaselineError, OSError) as e:
        raise fail(e) from None
    for line in summary(result):
        click.echo(line)
    if junit_path:
        click.echo(f"junit: {junit_path}")
    for path in written:
        click.echo(f"wrote {path}")
    sys.exit(result.exit_code)


@click.command("ci-merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("-o", "--output", "output_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for the merged results.csv, junit.xml, ci.db and bugs.txt.")
def ci_merge(shards: tuple[str, ...], output_dir: str) -> None:
    """Merge the folders the shards of a `clfuzz ci --fraction N --fraction-start K --output DIR`
    run wrote into one: the union of their cases (results.csv, junit.xml), of their smoke
    corpora (ci.db) and its bug list (bugs.txt); prints the summary. Exit status 0: nothing
    failed; 1: a case failed; 2: a folder holds no clfuzz ci report.

    Example: clfuzz ci-merge results/1 results/2 results/3 -o results/all
    """
    from app.ci_cases import CiError
    from app.ci_report import JUNIT_XML, merge, read_junit, summary, write_outputs
    from corpus.merge import merge as merge_corpus
    from corpus.store import Corpus, CorpusError

    out = output_path(output_dir, folder=True)
    try:
        merged = merge([read_junit(Path(s) / JUNIT_XML) for s in shards])
        corpora = [Path(s) / "ci.db" for s in shards if (Path(s) / "ci.db").exists()]
        if corpora:
            out.mkdir(parents=True, exist_ok=True)
            into = Corpus(str(out / "ci.db"), create=True)
            try:
                for source in corpora:
                    merge_corpus(into, source)
            finally:
                into.close()
            merged.corpus = str(out / "ci.db")
        written = write_outputs(merged, out)
    except (CiError, CorpusError, OSError) as e:
        raise fail(e) from None
    for line in summary(merged):
        click.echo(line)
    for path in written:
        click.echo(f"wrote {path}")
    sys.exit(merged.exit_code)

"""``clfuzz export``: findings in a form other test suites run (``--format piglit``: triage.piglit)."""

from __future__ import annotations

from pathlib import Path

import click

from app.options import BadInput, corpus_option, fail, local_targets, open_corpus, output_path
from corpus.store import CorpusError


@click.command("export")
@click.argument("refs", nargs=-1, metavar="[ID|FILE.json]...")
@click.option("--format", "fmt", type=click.Choice(["piglit"]), required=True,
              help="piglit: CL program tests for piglit's cl-program-tester (Debian's piglit package).")
@click.option("--all", "everything", is_flag=True,
              help="Every bug of the corpus (as its first reduced bucket) and every regression file of --regressions.")
@corpus_option("SQLite corpus of the bugs and buckets.")
@click.option("--regressions", "regressions_dir", type=click.Path(file_okay=False),
              help="Folder of regression files --all exports too (default: the project's corpus/regressions).")
@click.option("-o", "--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the tests and index.csv into (created if missing; tests of the same ids replaced).")
def export(refs: tuple[str, ...], fmt: str, everything: bool, corpus_path: str, regressions_dir: str | None,
           out_dir: str) -> None:
    """Write reduced bugs or buckets (ids, ``bug-...`` for a bug) and regression files (paths of
    ``.json`` files) as piglit CL program tests, each a ``.cl`` file with its ``[config]``/``[test]``
    header, and index.csv (file, id, driver, the platform for ``-platform``, the command that runs
    it). What a test cannot express is listed, one line each, and skipped; a bug or bucket with no
    reduced program is an error.

    \b
    Examples:
      clfuzz export --format piglit bug-3fa2c1 -o piglit/
      clfuzz export --format piglit --all -o piglit/
      clfuzz export --format piglit corpus/regressions/17ce28f5e43d7404.json -o piglit/
    """
    from triage import regressions
    from triage.piglit import ExportError
    from triage.piglit import export as export_piglit

    if not refs and not everything:
        raise BadInput("name bugs, buckets or regression files (FILE.json) to export, or give --all")
    files = [Path(r) for r in refs if r.endswith(".json")]
    for f in files:
        if not f.is_file():
            raise BadInput(f"{f}: no such regression file")
    if everything:
        folder = Path(regressions_dir) if regressions_dir else regressions.FOLDER
        files += sorted(p for p in folder.glob("*.json") if p not in files)
    ids = [r for r in refs if not r.endswith(".json")]
    out = output_path(out_dir, folder=True)
    corpus = open_corpus(corpus_path, read_only=True) if ids or everything else None
    try:
        done = export_piglit(corpus, ids, everything, files, out, local_targets(None))
    except (ExportError, CorpusError, OSError) as e:
        raise fail(e) from None
    click.echo(f"{len(done.index)} piglit tests in {out} (index.csv)")
    for line in done.skipped:
        click.echo(f"skipped: {line}")

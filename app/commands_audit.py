"""The audit command: re-derive a sample of the corpus's verdicts with a computation that shares
no code with the oracle (triage.audit) and print every verdict it cannot reproduce."""

from __future__ import annotations

import click

from app.json_forms import echo_json
from app.options import corpus_option, fail, open_corpus
from corpus.store import CorpusError


@click.command()
@corpus_option()
@click.option("--sample", type=click.IntRange(min=1), default=50, show_default=True,
              help="Buckets to audit (spread over areas and operations; the same ones every time).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the counts (per bucket kind too), the verdicts not reproduced and the reasons for "
                   "not auditing as JSON.")
def audit(corpus_path: str, sample: int, as_json: bool) -> None:
    """Re-derive, for a sample of buckets, the expected value of one disagreement independently of
    the oracle (exact integers and fractions, mpmath, a plain texel walk) and print every verdict
    it cannot reproduce. Exit status 1 if any verdict is not reproduced.

    Example: clfuzz audit --sample 200 --json
    """
    from triage.audit import audit_corpus, report_json, report_lines

    corpus = open_corpus(corpus_path, read_only=True)
    try:
        result = audit_corpus(corpus, sample)
    except CorpusError as e:
        raise fail(e) from None
    if as_json:
        echo_json("audit", report_json(result))
    else:
        for line in report_lines(result):
            click.echo(line)
    if result.with_status("not reproduced"):
        raise click.exceptions.Exit(1)

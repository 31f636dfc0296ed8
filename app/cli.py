"""The ``clfuzz`` command: parses, calls the library, formats. No logic lives here.

Library errors and bad input (a bad corpus, an unknown driver or area, a malformed program file)
become one line on stderr and exit status 2 (app.options.BadInput), never a traceback.

This module declares the group and attaches the commands, which live in modules named for what
they work on: app.commands_campaign (the local drivers), app.commands_ci (a CI job),
app.commands_programs (one program), app.commands_corpus (a whole corpus),
app.commands_triage (the buckets) and app.commands_export (findings for other test suites);
app.options holds what they share.
"""

from __future__ import annotations

import sys

import click

from app.commands_audit import audit
from app.commands_campaign import drivers, run
from app.commands_ci import ci, ci_merge
from app.commands_corpus import corpus_group, dashboard, stats
from app.commands_export import export
from app.commands_programs import emit, replay
from app.commands_triage import baseline, buckets, export_regressions, mark, reduce_command, report
from app.commands_versions import releases, versions
from app.options import STARTED, process_started


@click.group()
@click.version_option(package_name="clfuzz")
def cli() -> None:
    """clfuzz: property-based differential fuzzing of OpenCL drivers against a bit-exact oracle."""


for command in (drivers, run, replay, stats, reduce_command, buckets, corpus_group, mark, baseline, report, ci,
                ci_merge, export_regressions, export, dashboard, emit, audit, releases, versions):
    cli.add_command(command)


def main() -> None:  # pragma: no cover - console entry
    STARTED.append(process_started())  # budgets count this process's whole wall time
    cli(prog_name="clfuzz")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

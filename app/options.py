"""What the ``clfuzz`` commands share: the corpus option and its default, the console they print
to, and the turning of an option (a corpus path, driver names) into a library object, a library
error or bad input becoming one line on stderr and exit status 2 (:class:`BadInput`), never a
traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import click
from rich.console import Console

from corpus.reads import check_campaign
from corpus.store import Corpus, CorpusError

if TYPE_CHECKING:
    from fuzz.drivers import Target

DEFAULT_CORPUS = "out/campaign.db"
"""The corpus every command reads or grows unless given ``--corpus`` (or :data:`CORPUS_ENV`): the
path ``bash setup.sh campaign`` writes, relative to the current folder."""
CORPUS_ENV = "CLFUZZ_CORPUS"
"""The environment variable that overrides :data:`DEFAULT_CORPUS` (``--corpus`` overrides both)."""
DEFAULT_SEVERITY = "recommendation"
"""The least severe new bucket that fails ``clfuzz ci`` by default (violations and recommendations
fail; tolerance and letter deviations and slow runs, severity performance, are listed): ``--severity``."""
console = Console(width=None if sys.stdout.isatty() else 160)  # logs keep whole tables


STARTED: list[float] = []
"""When the ``clfuzz`` process started (a ``time.monotonic()`` reading), set by :func:`app.cli.main`;
empty when the commands run inside another program (tests' CliRunner): their budgets start then."""


def budget_start() -> float:
    """Where a command's time budget starts: the clfuzz process's start, or now."""
    import time

    return STARTED[0] if STARTED else time.monotonic()


def process_started() -> float:
    """When this process started, as a ``time.monotonic()`` reading: a time budget counts the
    process's whole wall time (start-up and driver discovery included). Linux's /proc gives it;
    elsewhere, now."""
    import os
    import time

    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22: starttime, in clock ticks after boot
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return time.monotonic() - max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return time.monotonic()


class BadInput(click.ClickException):
    """A command's input cannot be used (a corpus, id, path, driver or program file): one line on
    stderr saying what is wrong and what to do, exit status 2 (click's own for bad usage)."""

    exit_code = 2


def fail(e: Exception | str) -> BadInput:
    """``e`` as a one-line command error: its message's first line (its type's name if it has none)."""
    return BadInput(str(e).splitlines()[0] if str(e) else type(e).__name__)


def corpus_option(what: str = "SQLite corpus to read.", *names: str) -> Callable:
    """The ``--corpus PATH`` option (or ``names``: ``-o``, ``--out``; its help ``what``) of a command
    that reads or grows a corpus: default :data:`DEFAULT_CORPUS`, overridden by
    :data:`CORPUS_ENV`; both shown in ``--help``."""
    return click.option(*(names or ("--corpus",)), "corpus_path", metavar="PATH", default=DEFAULT_CORPUS,
                        envvar=CORPUS_ENV, show_default=True, show_envvar=True, help=what)


def output_path(path: str | Path, folder: bool = False) -> Path:
    """``path`` as a :class:`~pathlib.Path` where this process can write it: a folder (``folder``)
    or a file that exists and is writable, or that can be created (its nearest existing parent
    folder is writable); else :class:`BadInput`. Commands check their outputs with it before the
    long work that writes them (a reduction, a replay, a campaign)."""
    p = Path(path)
    what = "folder" if folder else "file"
    if p.exists():
        if p.is_dir() != folder:
            raise fail(f"{p} is {'a file' if folder else 'a folder'}: give the path of a {what}")
        if not os.access(p, os.W_OK | (os.X_OK if folder else 0)):
            raise fail(f"cannot write {p}: permission denied; give another {what} with -o")
        return p
    parent = p.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise fail(f"cannot create {p}: {parent} is not a folder this user may write; give another {what}")
    return p


def local_targets(drivers: str | None) -> list[Target]:
    """The local OpenCL targets named in ``drivers`` (comma-separated; None: every device found)."""
    from fuzz.drivers import UnknownDriver, discover, select

    names = [n.strip() for n in drivers.split(",") if n.strip()] if drivers else None
    try:
        return select(discover(), names)
    except UnknownDriver as e:
        raise fail(e) from None


def open_corpus(path: str, create: bool = False, read_only: bool = False, campaign: str | None = None) -> Corpus:
    """The corpus at ``path``: created if missing where ``create``; opened so that nothing can
    write it where ``read_only`` (the reading commands: corpus.store.Corpus); with ``campaign``
    (a command's ``--campaign``), one that has that campaign."""
    try:
        corpus = Corpus(path, create=create, read_only=read_only)
        check_campaign(corpus, campaign)
        return corpus
    except CorpusError as e:
        raise fail(e) from None

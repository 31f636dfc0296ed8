"""The commands on other Debian releases' drivers: build their roots (``releases install``), list
them (``releases``), and check on which releases a bucket shows (``versions``)."""

from __future__ import annotations

import click
from rich.table import Table

from app.json_forms import echo_json
from app.options import console, corpus_option, fail, local_targets, open_corpus
from corpus.store import CorpusError


def _release_rows() -> tuple[list[dict], dict[str, str]]:
    """Every installed release with its targets, and what cannot run here (with the reason)."""
    from fuzz.drivers import discover
    from fuzz.drivers.discovery import UNAVAILABLE
    from fuzz.drivers.releases import installed

    targets = discover(releases=True)
    rows = []
    for release in installed():
        rows.append({"suite": release.suite, "root": str(release.root), **release.manifest,
                     "targets": [{"name": t.name, "fingerprint_id": t.fingerprint_id,
                                  "driver_version": t.fingerprint.get("driver_version", ""),
                                  "platform_version": t.fingerprint.get("platform_version", ""),
                                  "spirv_routes": t.fingerprint.get("spirv_routes", [])}
                                 for t in targets if t.release == release.suite]})
    return rows, dict(UNAVAILABLE)


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def releases(ctx: click.Context, as_json: bool) -> None:
    """Other Debian releases' drivers as targets (named by version: pocl-7.1, rusticl-26.1).

    Without a subcommand: every installed release, its packages, disk and install time, its targets
    with fingerprint ids and SPIR-V routes, and the releases or drivers that cannot run here.
    Select a release target with --drivers NAME (or the suite: --drivers testing); "pocl" and the
    default keep meaning the system's drivers.

    Example: clfuzz releases install && clfuzz releases
    """
    if ctx.invoked_subcommand is not None:
        return
    rows, unavailable = _release_rows()
    if as_json:
        echo_json("releases", {"releases": rows, "unavailable": unavailable})
        return
    if not rows:
        click.echo("no release installed: `clfuzz releases install` (as root) builds them", err=True)
        return
    t = Table(title="Driver releases")
    for column in ("target", "release", "driver version", "platform version", "SPIR-V routes", "fingerprint id"):
        t.add_column(column)
    for r in rows:
        for target in r["targets"]:
            t.add_row(target["name"], r["suite"], target["driver_version"], target["platform_version"],
                      "; ".join(target["spirv_routes"]), target["fingerprint_id"])
        if not r["targets"]:
            t.add_row("-", r["suite"], "", "", "", "unavailable")
    console.print(t)
    for r in rows:
        gb = r.get("bytes", 0) / 1e9
        click.echo(f"{r['suite']}: {r['root']} ({gb:.2f} GB, built in {r.get('seconds', 0):.0f} s): "
                   + ", ".join(f"{k} {v}" for k, v in r.get("packages", {}).items()))
    for name, reason in unavailable.items():
        click.echo(f"unavailable: {name}: {reason}")


@releases.command("install")
@click.argument("suites", nargs=-1)
@click.option("--refresh", is_flag=True, help="Rebuild roots that exist.")
@click.option("--mirror", default=None, help="Debian mirror (default http://deb.debian.org/debian).")
def install_command(suites: tuple[str, ...], refresh: bool, mirror: str | None) -> None:
    """Build (as root, with mmdebstrap) the root filesystem of each Debian suite with its drivers,
    once, under the state folder (<state>/releases/SUITE); default: trixie, testing, unstable.

    Example: sudo clfuzz releases install testing
    """
    install_releases(suites, mirror, refresh)


def install_releases(suites: tuple[str, ...] = (), mirror: str | None = None, refresh: bool = False) -> None:
    """Build the root of each Debian suite (default: fuzz.drivers.releases.SUITES) once, reusing
    the roots that exist unless ``refresh``, printing what it does; what ``clfuzz releases install``
    and ``clfuzz drivers --install-versions`` run. A missing mmdebstrap or a user who is not root
    is a one-line error."""
    from fuzz.drivers.releases import MIRROR, SUITES, install

    try:
        install(suites or SUITES, mirror or MIRROR, refresh, log=click.echo)
    except RuntimeError as e:
        raise fail(e) from None


@click.command("versions")
@click.argument("bucket")
@corpus_option("SQLite corpus to read and update (not with --stored).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored map as JSON.")
@click.option("--stored", is_flag=True, help="Show the stored map without running anything.")
@click.option("--timeout", type=click.FloatRange(min=1), default=120.0, show_default=True)
def versions(bucket: str, corpus_path: str, as_json: bool, stored: bool, timeout: float) -> None:
    """Run a bucket's reproducer (its reduced program, else its first) on every release of its
    driver and record, per release, whether the oracle finds it: present, absent, different,
    cannot-build, failed or not-run (table release_checks of the corpus). Of a bug of the bug list
    (``bug-...``), its lead bucket's, the one its report is about.

    Examples: clfuzz versions 3fa2c1; clfuzz versions bug-5e8d45
    """
    from fuzz.drivers import discover
    from triage.bugs import PREFIX, find
    from triage.versions import check_bucket, release_range

    corpus = open_corpus(corpus_path, read_only=stored)
    try:
        bid = find(corpus, bucket).lead["id"] if bucket.startswith(PREFIX) else corpus.bucket(bucket)["id"]
        if not stored:
            local_targets(None)  # the unknown-driver errors of discovery, as every command gives them
            check_bucket(corpus, bid, discover(releases=True), timeout_s=timeout)
    except (CorpusError, ValueError) as e:
        raise fail(e) from None
    checks = release_range(corpus, bid)
    if as_json:
        echo_json("versions", {"bucket": bid, "releases": checks})
        return
    t = Table(title=(f"{bucket}, its lead bucket {bid}" if bucket.startswith(PREFIX) else f"bucket {bid}")
              + ": release range")
    for column in ("target", "release", "version", "verdict", "detail"):
        t.add_column(column)
    for name, c in checks.items():
        t.add_row(name, c["release"], c["version"], c["verdict"], c["detail"])
    console.print(t)

"""Campaigns beyond one machine: every node of a Dask cluster fuzzes its own drivers, one corpus.

A distributed campaign ``NAME`` is the union of *node campaigns* ``NAME@NODE``: each an ordinary
campaign (:func:`campaign.campaign.run_campaign`) on the drivers of one Dask worker, with the
distributed campaign's areas, policy and budgets and a seed of its own derived from the seed and
the node's label (:func:`node_seed`), so that nodes draw different programs. ``NODE`` is the
worker's name (``dask worker --name gpu-a``), or its host when it has none.

The client, the machine that holds the one corpus, runs the campaign in *slices*: it sends each
worker a task pinned to it (:func:`run_slice`) that runs the node campaign for ``slice_minutes``
into a fresh temporary corpus on the node, seeded with the node campaign's row of the one corpus
(settings and scheduler state), its targeted searches' examples (corpus.hypothesis_db) and the
programs the node's previous slice of this run drew but had no time to run, so the node's draw
streams and searches resume where they stopped (what the campaign has already found, the
disagreement kinds and coverage cells that make a program a *find* for the scheduler and score
the targeted searches, is not sent: each slice starts that afresh). The node picks its devices itself
(``fuzz.drivers.discover``; the worker's ``CLFUZZ_DRIVERS``, comma-separated names as
``clfuzz run --drivers`` takes them, restricts them) and sends back its temporary corpus,
zlib-compressed, with a short summary. The client merges it into the one corpus
(:func:`corpus.merge.merge`: an idempotent union in one transaction) as soon as it arrives and
sends that node its next slice, so a slow node holds no other back. A slice that fails (an
exception, a lost worker) is reported and tried once more; a node that fails twice in a row is
left out for the rest of the run. Nothing is triaged on the nodes: a driver lives on its node,
so ``clfuzz reduce`` runs there (on a copy of the corpus).

The one corpus also holds a row ``NAME`` for the distributed campaign itself: its settings
(marked ``distributed``), so that running the same name again resumes every node campaign, and
the program and check counts summed over its nodes.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hypothesis.errors import HypothesisDeprecationWarning

from campaign.scheduler import Budget
from campaign.settings import CampaignError, Settings, check_areas, check_resumable
from corpus.hypothesis_db import examples_under
from corpus.merge import Merged, merge
from corpus.reads import campaign_programs, node_campaigns, node_totals
from corpus.store import Corpus, CorpusError
from fuzz.strategies import DEFAULT_AREAS
from lang.policy import Policy

DRIVERS_ENV = "CLFUZZ_DRIVERS"
"""A worker's drivers: comma-separated names (``nvidia``, ``pocl,-pocl/spirv``); unset: every one."""

MIN_SLICE_S = 5.0
"""No slice is sent with less than this left of the time budget."""

OVERDUE_S = 300.0
"""A slice that has not returned this long (plus twice the run timeout) after its time is given up."""

POLL_S = 2.0
"""How often the client looks at the cluster's workers (joined, lost) while it waits."""

CARRY = 32
"""At most this many programs a slice drew but did not finish (its campaign state's ``pending``)
go with the node's next slice (a slice leaves two or three: the producer's queue and the lanes'
programs in flight; the first slice of a run gets none)."""

PROTOCOL = 1
"""What a slice takes and returns (SliceSpec, run_slice's dict): a node that answers another is
running another clfuzz (a Dask worker runs its own installed copy of this module)."""


class ClusterError(RuntimeError):
    """The cluster cannot be used (not installed, unreachable, no worker); one line saying what to do."""


def node_seed(seed: int, node: str) -> int:
    """The seed of the node campaign ``NAME@node`` (stable across machines and Python versions)."""
    return zlib.crc32(f"{seed}@{node}".encode())


def node_campaign(name: str, node: str) -> str:
    return f"{name}@{node}"


@dataclass(frozen=True)
class SliceSpec:
    """What one slice runs on a node (pickled to the worker)."""

    campaign: str  # NAME@NODE
    node: str
    seed: int  # the node seed
    areas: tuple[str, ...]
    policy: Policy
    budgets: dict[str, Budget]
    minutes: float
    timeout_s: float = 60.0
    row: dict | None = None  # the node campaign's row of the one corpus (Corpus.campaign), None at first
    unrun: tuple[str, ...] = ()  # JSON of programs the last slice drew but did not run
    examples: tuple[tuple[bytes, bytes], ...] = ()  # its targeted searches' database (corpus.hypothesis_db)
    protocol: int = PROTOCOL


def run_slice(spec: SliceSpec) -> dict[str, Any]:
    """Run one slice of a node campaign on this machine's drivers (module docstring): the
    temporary corpus, zlib-compressed, and a summary. Runs on a Dask worker."""
    from campaign.campaign import run_campaign
    from fuzz.drivers import discover, select
    from fuzz.drivers.capabilities import supports
    from lang.ir import Program

    start = time.monotonic()
    if spec.protocol != PROTOCOL:
        raise ClusterError(f"node {spec.node} runs another clfuzz (slice protocol {PROTOCOL}, the client's "
                           f"{spec.protocol}): install the same clfuzz on the client and every node")
    # Hypothesis notices the global `random` state changing during a draw; on a Dask worker other
    # threads use it (draws come from their own bytes, fuzz.strategies.draws: nothing to fix)
    warnings.filterwarnings("ignore", message="Do not use the `random` module", category=HypothesisDeprecationWarning)
    wanted = os.environ.get(DRIVERS_ENV, "")
    names = [n.strip() for n in wanted.split(",") if n.strip()] or None
    targets = select(discover(), names)
    if not targets:
        raise CampaignError(f"node {spec.node}: no OpenCL device found ({DRIVERS_ENV}={wanted or 'unset'})")
    with tempfile.TemporaryDirectory(prefix="clfuzz-slice-") as tmp:
        path = Path(tmp) / "slice.db"
        corpus = Corpus(path)
        try:
            if spec.row:
                r = spec.row
                corpus.update_campaign(spec.campaign, r["seed"], r["settings"], r["programs"], r["checks"], r["state"])
            for key, value in spec.examples:
                corpus.save_example(key, value)
            for text in spec.unrun:  # run first, as a resumed campaign runs what it left unrun
                program = Program.from_json(text)
                if any(supports(t, program) for t in targets):
                    corpus.add_program(program, spec.campaign)
            result = run_campaign(corpus, targets, minutes=spec.minutes, seed=spec.seed, areas=spec.areas,
                                  policy=spec.policy, budgets=spec.budgets, name=spec.campaign,
                                  timeout_s=spec.timeout_s)
            row = corpus.campaign(spec.campaign)
            pending = set(row["state"].get("pending", []))  # in flight or run nowhere at the stop: campaign.feed
            unrun = [r["json"] for r in campaign_programs(corpus, spec.campaign) if r["id"] in pending][-CARRY:]
            corpus.checkpoint()
        finally:
            corpus.close()
        data = zlib.compress(path.read_bytes(), 6)
    return {"protocol": PROTOCOL, "node": spec.node, "campaign": spec.campaign, "db": data, "targets": [t.name for t in targets],
            "programs": result.programs, "judged": sum(s.judged for s in result.targets.values()),
            "mismatches": sum(s.mismatches for s in result.targets.values()),
            "seconds": time.monotonic() - start, "unrun": unrun,
            "row": {k: row[k] for k in ("programs", "checks", "state")},
            # it stopped before its time: every area's budget is spent, or no target takes any program
            "exhausted": result.wall_s < spec.minutes * 60 - 1 and not result.interrupted}


@dataclass
class NodeResult:
    """One node's share of a distributed run."""

    address: str = ""
    targets: list[str] = field(default_factory=list)
    slices: int = 0
    programs: int = 0
    judged: int = 0
    mismatches: int = 0
    errors: list[str] = field(default_factory=list)
    slice_s: float = 0.0  # seconds the node spent in its slices (as the node measured them)
    merge_s: float = 0.0  # seconds the client spent merging its slices
    bytes: int = 0  # compressed slice corpora received
    state: str = "running"  # running, done (budgets spent), lost (failed twice in a row)


@dataclass
class DistributedResult:
    name: str
    seed: int
    wall_s: float
    nodes: dict[str, NodeResult]
    interrupted: bool = False

    @property
    def programs(self) -> int:
        return sum(n.programs for n in self.nodes.values())


@dataclass
class SliceEvent:
    """A slice came back (``error`` None: merged) or failed (``retry``: its node gets another try)."""

    node: str
    slice: int  # the node's slices merged so far in this run
    programs: int = 0
    judged: int = 0
    seconds: float = 0.0
    merge_s: float = 0.0
    merged: Merged | None = None
    error: str | None = None
    retry: bool = False


def _client(address_or_client):
    try:
        import distributed
    except ImportError:
        raise ClusterError("the Dask cluster support is not installed: pip install 'clfuzz[cluster]'") from None
    if isinstance(address_or_client, distributed.Client):
        return address_or_client, False
    address = str(address_or_client)
    try:
        # a Client that fails to connect lingers and times out again at exit with a traceback
        # (Client.__del__): try the address first
        asyncio.run(_probe(address))
        return distributed.Client(address, set_as_default=False), True
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        first = (str(e).splitlines() or [""])[0] or type(e).__name__
        raise ClusterError(f"cannot reach a Dask scheduler at {address!r}: {first}") from None


async def _probe(address: str) -> None:
    from distributed.comm import connect
    from distributed.security import Security

    comm = await connect(address, **Security().get_connection_args("client"))
    await comm.close()


def _workers(client) -> dict[str, str]:
    """Label -> address of every worker: its name, else its host (``host-2``... when shared)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before the n_workers argument
        info = client.scheduler_info()
    out: dict[str, str] = {}
    for addr, w in sorted(info.get("workers", {}).items()):
        name = w.get("name")
        host = w.get("host") or addr.split("://")[-1].rsplit(":", 1)[0]
        label = str(name) if name not in (None, "", addr) else host
        label = label.replace("@", "_")
        unique, n = label, 1
        while unique in out:
            n += 1
            unique = f"{label}-{n}"
        out[unique] = addr
    return out


def _parent(corpus: Corpus, name: str, settings: Settings) -> dict:
    """The distributed campaign's own row (created, or checked against the settings given)."""
    row = {**settings.to_row(), "distributed": True}
    stored = corpus.campaign(name)
    if stored is None:
        corpus.update_campaign(name, settings.seed, row, 0, 0, {})
        return row
    if not stored["settings"].get("distributed"):
        raise CampaignError(f"campaign {name!r} in {corpus.path} is a local campaign; pick another --name")
    check_resumable(corpus, stored, settings)
    return row


def _examples(corpus: Corpus | Path, campaign: str) -> tuple[tuple[bytes, bytes], ...]:
    """The hypothesis rows of a node campaign's targeted searches (keys ``NAME@NODE/AREA/...``), in
    a corpus or the corpus file at a path."""
    prefix = f"{campaign}/".encode()
    if isinstance(corpus, Corpus):
        return examples_under(corpus, prefix)
    other = Corpus(corpus, create=False)  # a slice's corpus, already opened (and upgraded) by the merge
    try:
        return examples_under(other, prefix)
    finally:
        other.close()


def _replace_examples(corpus: Corpus, campaign: str, path: Path) -> None:
    """After merging a slice: its searches' database is the node campaign's (Hypothesis also
    deletes examples, which a merge, a union, would keep)."""
    for key, value in set(_examples(corpus, campaign)) - set(_examples(path, campaign)):
        corpus.delete_example(key, value)


def run_distributed(
    corpus: Corpus,
    address_or_client,
    *,
    minutes: float,
    seed: int = 0,
    areas: tuple[str, ...] = DEFAULT_AREAS,
    policy: Policy = Policy(),
    budgets: dict[str, Budget] | None = None,
    name: str | None = None,
    slice_minutes: float = 1.0,
    timeout_s: float = 60.0,
    on_slice: Callable[[SliceEvent], None] | None = None,
) -> DistributedResult:
    """Run the distributed campaign ``name`` on every worker of the Dask cluster at
    ``address_or_client`` (an address such as ``tcp://10.0.0.5:8786``, or a ``distributed.Client``)
    for ``minutes``, merging into ``corpus`` (module docstring). Resumes a campaign the corpus holds."""
    check_areas(areas)
    name = name or f"campaign-{seed}"
    budgets = dict(budgets or {})
    settings = Settings(seed, tuple(areas), policy, budgets)
    client, owned = _client(address_or_client)
    try:
        if not _workers(client):
            try:
                client.wait_for_workers(1, timeout=min(60.0, minutes * 60))
            except (TimeoutError, OSError):
                raise ClusterError(f"no Dask worker joined the scheduler at {client.scheduler.address} "
                                   "(start one: dask worker ADDRESS --nthreads 1 --name NODE)") from None
        parent = _parent(corpus, name, settings)
        return _loop(corpus, client, name, settings, parent, minutes, slice_minutes, timeout_s, on_slice)
    finally:
        if owned:
            client.close()


def _loop(corpus: Corpus, client, name: str, settings: Settings, parent: dict, minutes: float,
          slice_minutes: float, timeout_s: float, on_slice) -> DistributedResult:
    from distributed import wait

    start = time.monotonic()
    deadline = start + minutes * 60
    nodes: dict[str, NodeResult] = {}
    pending: dict[Any, tuple[str, str, float]] = {}  # future -> (node, address, give up at)
    failed: dict[str, int] = {}  # failures in a row
    carry: dict[str, tuple[str, ...]] = {}
    interrupted = False

    def submit(node: str, address: str) -> None:
        left = deadline - time.monotonic()
        campaign = node_campaign(name, node)
        spec = SliceSpec(campaign, node, node_seed(settings.seed, node), settings.areas, settings.policy,
                         settings.budgets, min(slice_minutes * 60, left) / 60, timeout_s, corpus.campaign(campaign),
                         carry.get(node, ()), _examples(corpus, campaign))
        future = client.submit(run_slice, spec, workers=[address], pure=False, allow_other_workers=False)
        pending[future] = (node, address, time.monotonic() + spec.minutes * 60 + OVERDUE_S + 2 * timeout_s)

    def fail(node: str, error: str) -> None:
        failed[node] = failed.get(node, 0) + 1
        nodes[node].errors.append(error)
        retry = failed[node] < 2
        if not retry:
            nodes[node].state = "lost"
        if on_slice:
            on_slice(SliceEvent(node, nodes[node].slices, error=error, retry=retry))

    def merged(node: str, res: dict) -> None:
        n = nodes[node]
        with tempfile.TemporaryDirectory(prefix="clfuzz-merge-") as tmp:
            path = Path(tmp) / f"{node}.db"
            path.write_bytes(zlib.decompress(res["db"]))
            t = time.monotonic()
            counts = merge(corpus, path)
            _replace_examples(corpus, res["campaign"], path)
        # the slice's row is the node campaign's latest (one slice per node at a time); the merge keeps
        # a whole area's state only where it drew further, and counts parts of programs as programs
        new = res["row"]
        corpus.update_campaign(res["campaign"], 0, {}, new["programs"], new["checks"], new["state"])  # row merged
        corpus.update_campaign(name, settings.seed, parent, *node_totals(corpus, name))
        merge_s = time.monotonic() - t
        failed[node] = 0
        carry[node] = tuple(res["unrun"])
        n.targets, n.slices = res["targets"], n.slices + 1
        n.programs += res["programs"]
        n.judged += res["judged"]
        n.mismatches += res["mismatches"]
        n.slice_s += res["seconds"]
        n.merge_s += merge_s
        n.bytes += len(res["db"])
        if res["exhausted"]:
            n.state = "done"
        if on_slice:
            on_slice(SliceEvent(node, n.slices, res["programs"], res["judged"], res["seconds"], merge_s, counts))

    try:
        while True:
            workers = _workers(client)
            busy = {node for node, _, _ in pending.values()}
            if deadline - time.monotonic() >= MIN_SLICE_S:
                for node, address in workers.items():
                    n = nodes.setdefault(node, NodeResult(address))
                    n.address = address
                    if node not in busy and n.state == "running":
                        submit(node, address)
            if not pending:
                break
            try:
                with client.as_current():  # wait() asks for the current client
                    wait(list(pending), timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:  # distributed.wait raises it when nothing finished in time
                pass
            for future in [f for f in pending if f.done()]:
                node, _, _ = pending.pop(future)
                if future.status == "finished":
                    res = future.result()
                    if not isinstance(res, dict) or res.get("protocol") != PROTOCOL:
                        fail(node, f"the node runs another clfuzz (slice protocol "
                                   f"{res.get('protocol') if isinstance(res, dict) else '?'}, this one {PROTOCOL}): "
                                   "install the same clfuzz on the client and every node")
                    else:
                        try:
                            merged(node, res)
                        except (CorpusError, zlib.error) as e:  # a damaged slice; the merge is one transaction
                            fail(node, f"slice not merged: {e}")
                else:
                    try:
                        error = repr(future.exception(timeout=1))
                    except Exception as e:  # cancelled, or the exception cannot be fetched
                        error = f"slice {future.status}: {e!r}"
                    fail(node, error.splitlines()[0])
            now = time.monotonic()
            addresses = set(_workers(client).values())
            for future, (node, address, give_up) in list(pending.items()):
                if future.done():
                    continue
                if address not in addresses or now > give_up:
                    pending.pop(future)
                    future.cancel()
                    fail(node, f"worker {address} left the cluster" if address not in addresses
                         else f"the slice did not return {OVERDUE_S + 2 * timeout_s:.0f} s after its time")
    except KeyboardInterrupt:
        interrupted = True
    finally:  # a slice already running on a node runs to its end (a task's thread cannot be stopped)
        for future in pending:
            future.cancel()
    return DistributedResult(name, settings.seed, time.monotonic() - start, nodes, interrupted)


def summary_markdown(corpus: Corpus, name: str) -> str:
    """The summary of a distributed campaign: corpus.stats's, one section per node campaign."""
    from corpus.stats import markdown, summarize

    nodes = node_campaigns(corpus, name)
    parts = [f"# clfuzz distributed campaign {name}: {corpus.path}, {len(nodes)} nodes", ""]
    for node in nodes:
        text = markdown(summarize(corpus, node))
        body = text.split("\n", 1)[1] if "\n" in text else ""
        parts += [f"## node {node[len(name) + 1:]} (campaign {node})",
                  body.replace("\n## ", "\n### ")]
    return "\n".join(parts)

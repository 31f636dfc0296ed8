"""Build options recorded and stated (campaign.jobs.build_options, campaign.record, corpus.run_facts,
triage.buglist, triage.report): every run records the exact options string its job passed to
clBuildProgram; a bucket lists the options of the runs its rows came from, and says when every
one of them had an option the program chose; the report's README and kernel.cl state them.
Without any driver: runs are recorded as a campaign records them, from made-up results."""

from __future__ import annotations

import json

from click.testing import CliRunner

from app.cli import cli
from campaign.execute import Part, conclude
from campaign.expectations import Expectations
from campaign.jobs import build_options, job_for
from campaign.record import record_run
from corpus.store import Corpus
from fuzz.drivers import Result, Target
from fuzz.emit.opencl_c import emit
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage.buglist import only_under
from triage.bugs import listed, markdown
from triage.report import write_report

INT = Type("int")
POCL_FP = {"platform_name": "Portable Computing Language", "device_name": "cpu", "driver_version": "3.1",
           "cl3.0": True}
LOG = "error: made-up build error"


def _program(options: str = "", requires: frozenset[str] = frozenset(), seed: int = 1) -> Program:
    """One clz statement (a valid kernel), built with ``options``, requiring ``requires``."""
    return Program((Buffer("in0", INT, "in", Fill(seed, (1, 2), 3)), Buffer("out0", INT, "out")),
                   (Store("out0", Op("clz", (Load("in0", INT),), INT)),), 4, options, requires)


def _record(corpus: Corpus, program: Program, target: Target) -> None:
    """A build error of ``program`` on ``target``, judged and recorded as campaign.execute does."""
    corpus.add_program(program, "c")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    _, _, run = conclude(Part(program, Expectations(program)), target, Result("build_error", log=LOG))
    record_run(corpus, run, "c")


def _runs(corpus: Corpus) -> list[str | None]:
    return [r["options"] for r in corpus.db["runs"].rows_where(order_by="id")]


def test_an_opencl_c_run_records_its_options_with_the_cl_std_its_constructs_need(memory_corpus):
    """A program requiring OpenCL C 3.0 built with -cl-denorms-are-zero: the run records the
    program's option and the -cl-std=CL3.0 clfuzz adds (OpenCL 3.0 API §5.8.4: without it a device
    builds OpenCL C 1.2), exactly what its job passes to clBuildProgram."""
    target = Target("pocl", POCL_FP, "fp-pocl", "", 0, 0)
    program = _program("-cl-denorms-are-zero", frozenset({"cl3.0"}))
    _record(memory_corpus, program, target)
    assert _runs(memory_corpus) == ["-cl-denorms-are-zero -cl-std=CL3.0"]
    assert job_for(program, None, target.path, target.lineage, target.fingerprint).options == _runs(memory_corpus)[0]
    [bucket] = memory_corpus.buckets()
    assert bucket["build_options"] == ["-cl-denorms-are-zero -cl-std=CL3.0"]
    assert bucket["build_options_by_path"] == {"opencl-c": ["-cl-denorms-are-zero -cl-std=CL3.0"]}


def test_a_spirv_run_records_its_routes_options(memory_corpus):
    """On the SPIR-V path the options are the route's and the program's (fuzz.drivers.routes):
    PoCL 3.1's SPIR binary is built with ``-x spir -spir-std=1.2``; PoCL 6.0 takes the module
    through clCreateProgramWithIL, with the program's options alone; a device without a SPIR-V
    route never reaches clBuildProgram (nothing recorded)."""
    program = _program("-cl-mad-enable")
    for name, fp in (("pocl", POCL_FP), ("pocl-6.0", {**POCL_FP, "il_version": "SPIR-V_1.2"}), ("nvidia", {})):
        _record(memory_corpus, program, Target(name, fp, f"fp-{name}", "", 0, 0, path="spirv"))
    assert _runs(memory_corpus) == ["-x spir -spir-std=1.2 -cl-mad-enable", "-cl-mad-enable", None]
    assert build_options(program, "spirv", "rusticl", {}) == "-cl-mad-enable"  # the container route adds none


def _bucket_with_runs(corpus: Corpus, runs: list[tuple[str, frozenset[str]]]) -> dict:
    """One build-error bucket seen in a run of each (options, requires), on PoCL's OpenCL C path."""
    target = Target("pocl", POCL_FP, "fp-pocl", "", 0, 0)
    for i, (options, requires) in enumerate(runs):
        _record(corpus, _program(options, requires, seed=i + 1), target)
    [bucket] = corpus.buckets()
    return bucket


def test_a_bucket_seen_only_under_an_option_says_so(memory_corpus):
    """Every run had -cl-denorms-are-zero (with other options beside it): seen only with it;
    -cl-std, which clfuzz adds, is not an option the program chose."""
    bucket = _bucket_with_runs(memory_corpus, [("-cl-denorms-are-zero", frozenset({"cl3.0"})),
                                               ("-cl-fast-relaxed-math -cl-denorms-are-zero", frozenset({"cl3.0"}))])
    assert sorted(bucket["build_options"]) == ["-cl-denorms-are-zero -cl-std=CL3.0",
                                               "-cl-fast-relaxed-math -cl-denorms-are-zero -cl-std=CL3.0"]
    assert only_under(bucket) == ["-cl-denorms-are-zero"]
    line = markdown(listed(memory_corpus)[0]).splitlines()[-1]
    assert "seen only with -cl-denorms-are-zero" in line


def test_a_bucket_also_seen_without_the_option_is_not_only_under_it(memory_corpus):
    bucket = _bucket_with_runs(memory_corpus, [("-cl-denorms-are-zero", frozenset()), ("", frozenset())])
    assert sorted(bucket["build_options"]) == ["", "-cl-denorms-are-zero"] and only_under(bucket) == []


def test_a_run_without_a_record_leaves_the_options_unknown(memory_corpus):
    """A run of an older corpus (no options recorded) makes no claim about what the bucket needs."""
    bucket = _bucket_with_runs(memory_corpus, [("-cl-denorms-are-zero", frozenset())])
    memory_corpus.db.execute("update runs set options = null")
    [bucket] = memory_corpus.buckets()
    assert bucket["build_options"] == [] and bucket["options_unrecorded"] and only_under(bucket) == []


def test_buckets_json_gives_build_options_and_only_under(tmp_path):
    db = tmp_path / "c.db"
    corpus = Corpus(db)
    _bucket_with_runs(corpus, [("-cl-finite-math-only", frozenset())])
    corpus.close()
    [listed] = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json"]).output)["buckets"]
    assert listed["build_options"] == ["-cl-finite-math-only"] and listed["only_under"] == ["-cl-finite-math-only"]


def test_the_report_states_the_build_options(memory_corpus, tmp_path):
    """kernel.cl begins with the report's comment stating the options (then the kernel exactly as
    the emitter writes it); the README states this kernel's options and those the runs recorded,
    per front end, and that the bucket was seen only with -cl-denorms-are-zero."""
    bucket = _bucket_with_runs(memory_corpus, [("-cl-denorms-are-zero", frozenset({"cl3.0"}))])
    folder = write_report(memory_corpus, bucket["id"], tmp_path / "report")
    kernel = (folder / "kernel.cl").read_text()
    comment, _, rest = kernel.partition("\n")
    assert comment == ('/* Written by clfuzz\'s report: build this kernel with the clBuildProgram options '
                       '"-cl-denorms-are-zero -cl-std=CL3.0", as repro.py does. */')
    assert rest == emit(_program("-cl-denorms-are-zero", frozenset({"cl3.0"}), seed=1))
    readme = (folder / "README.md").read_text()
    opencl_c = readme.split("- **OpenCL C**")[1].split("\n- ")[0]
    assert "  - build options of this kernel: `-cl-denorms-are-zero -cl-std=CL3.0`" in opencl_c
    assert "  - build options its runs recorded: `-cl-denorms-are-zero -cl-std=CL3.0`" in opencl_c
    assert "- seen only with -cl-denorms-are-zero" in readme

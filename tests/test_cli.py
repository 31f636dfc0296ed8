"""The command line: help for every command, one-line errors for bad input, real runs."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from corpus.reads import stored_programs
from corpus.store import Corpus

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output or "Examples:" in result.output


def _one_line_error(result, *needles):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, result.output
    for n in needles:
        assert n in errors[0], result.output


def test_stats_on_missing_corpus(tmp_path):
    _one_line_error(CliRunner().invoke(cli, ["stats", "--corpus", str(tmp_path / "none.db")]), "run a campaign first")


def test_stats_on_corrupt_corpus(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"\x00garbage" * 500)
    _one_line_error(CliRunner().invoke(cli, ["stats", "--corpus", str(bad)]), "not a usable clfuzz corpus")


def test_replay_malformed_program_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text('{"buffers": 3}')
    _one_line_error(CliRunner().invoke(cli, ["replay", str(f)]), "malformed program")


def test_invalid_option_value():
    result = CliRunner().invoke(cli, ["run", "--minutes", "-3"])
    assert result.exit_code == 2 and "Traceback" not in result.output and "--minutes" in result.output


@pytest.mark.drivers
def test_unknown_driver(targets):
    _one_line_error(CliRunner().invoke(cli, ["run", "--drivers", "nosuch"]), "unknown driver 'nosuch'", "known drivers")


@pytest.mark.drivers
def test_unknown_area(targets, tmp_path):
    _one_line_error(CliRunner().invoke(cli, ["run", "--areas", "poetry", "--corpus", str(tmp_path / "c.db")]),
                    "unknown area")


def _consistent(db: Path) -> dict:
    conn = sqlite3.connect(db)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    orphans = conn.execute("select count(*) from runs where program_id not in (select id from programs)").fetchone()[0]
    lost = conn.execute("select count(*) from disagreements where run_id not in (select id from runs)").fetchone()[0]
    counts = {t: conn.execute(f"select count(*) from {t}").fetchone()[0] for t in ("programs", "runs")}
    conn.close()
    assert orphans == 0 and lost == 0
    return counts


def _start_campaign(tmp_path: Path, minutes: str = "2") -> tuple[subprocess.Popen, Path]:
    db = tmp_path / "c.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "run", "--minutes", minutes, "--corpus", str(db), "--statements", "8",
         "--global-size", "64"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # a suite started in the background inherits SIGINT ignored: give the campaign Ctrl-C back
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    return proc, db


def _wait_for_runs(db: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if db.exists():
            try:
                conn = sqlite3.connect(db)
                n = conn.execute("select count(*) from runs").fetchone()[0]
                conn.close()
                if n >= 3:
                    return
            except sqlite3.Error:
                pass
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.5)
    raise AssertionError("campaign wrote no runs in time")


@pytest.mark.drivers
def test_campaign_killed_leaves_a_consistent_corpus(targets, tmp_path):
    proc, db = _start_campaign(tmp_path)
    _wait_for_runs(db, proc)
    proc.kill()
    proc.wait()
    counts = _consistent(db)
    assert counts["programs"] >= 1 and counts["runs"] >= 3


@pytest.mark.drivers
def test_campaign_ctrl_c_stops_cleanly_and_writes_the_summary(targets, tmp_path):
    proc, db = _start_campaign(tmp_path)
    _wait_for_runs(db, proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "interrupted" in out and "Traceback" not in out
    _consistent(db)
    assert Path(f"{db}.summary.md").exists()


@pytest.mark.drivers
def test_short_campaign_then_stats_json_and_replay(targets, tmp_path):
    db = tmp_path / "c.db"
    runner = CliRunner()
    # areas every target takes (an atomics program may need features only some targets have)
    result = runner.invoke(cli, ["run", "--minutes", "2", "--max-programs", "2", "--corpus", str(db),
                                 "--statements", "8", "--global-size", "32", "--seed", "3",
                                 "--areas", "conversions,expressions"])
    assert result.exit_code == 0, result.output
    assert "## Bug list" in (tmp_path / "c.db.summary.md").read_text()  # the campaign summary starts with it
    summary = json.loads(runner.invoke(cli, ["stats", "--corpus", str(db), "--json"]).output)
    assert summary["programs"] >= 2
    assert set(summary["targets"]) == {t.name for t in targets}
    for t in summary["targets"].values():
        assert t["runs"] >= 1
    corpus = Corpus(db, create=False)
    pid = stored_programs(corpus)[0]["id"]
    corpus.close()
    replay = runner.invoke(cli, ["replay", pid, "--corpus", str(db)])
    assert replay.exit_code == 0 and "lanes judged" in replay.output


def test_emit_random_programs_and_a_stored_one_as_spirv(tmp_path):
    from fuzz.emit.validate import validate
    from lang.constructs import paths_of
    from lang.ir import Program

    runner = CliRunner()
    result = runner.invoke(cli, ["emit", "--random", "3", "--seed", "5", "--statements", "4", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    ids = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert len(ids) == 3
    for i in ids:
        program = Program.from_json((tmp_path / f"{i}.json").read_text())
        if "opencl-c" in paths_of(program):
            assert "__kernel void clfuzz" in (tmp_path / f"{i}.cl").read_text()
        else:  # an operation only SPIR-V has: no .cl
            assert not (tmp_path / f"{i}.cl").exists()
        assert validate((tmp_path / f"{i}.spv").read_bytes()) is None
    again = runner.invoke(cli, ["emit", str(tmp_path / f"{ids[0]}.json"), "--spirv", "-o", str(tmp_path / "one")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "one" / f"{ids[0]}.spv").read_bytes() == (tmp_path / f"{ids[0]}.spv").read_bytes()
    assert "OpEntryPoint Kernel" in (tmp_path / "one" / f"{ids[0]}.spvasm").read_text()
    _one_line_error(runner.invoke(cli, ["emit"]), "give either a PROGRAM_ID or --random N")


def test_emit_writes_a_flow_program_s_module_with_spirv(tmp_path):
    """A flow program has a SPIR-V form (fuzz.emit.spirv.flow_kernel): --spirv writes it beside its
    OpenCL C text, valid and equal to the module a campaign's SPIR-V path runs."""
    from fuzz.emit.spirv.flow_kernel import emit as flow_module
    from fuzz.emit.validate import validate
    from lang.flow import program_from_json

    result = CliRunner().invoke(cli, ["emit", "--random", "1", "--areas", "flow", "--seed", "5", "--spirv",
                                      "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (json_file,) = tmp_path.glob("*.json")
    module = (tmp_path / f"{json_file.stem}.spv").read_bytes()
    assert module == flow_module(program_from_json(json_file.read_text())) and validate(module, "opencl1.2") is None
    assert "OpEntryPoint Kernel" in (tmp_path / f"{json_file.stem}.spvasm").read_text()


def _corpus_with_a_bucket(path: Path) -> str:
    from corpus.store import Corpus

    c = Corpus(path)
    row = {"program_id": "p", "target": "pocl", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
           "lane": 0, "work_item": 0, "kind": "wrong-result", "operation": "convert_int_sat", "src_type": "float",
           "dst_type": "int", "input_class": "nan", "rule": "r", "actual_value": "0"}
    c.add_run({"program_id": "p", "target": "pocl", "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
               "checks": 1, "judged": 1, "mismatches": 1}, [row])
    bucket = c.buckets()[0]["id"]
    c.close()
    return bucket


def test_buckets_lists_and_mark_sets_status(tmp_path):
    db = tmp_path / "c.db"
    bucket = _corpus_with_a_bucket(db)
    listed = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json"]).output)
    assert [(b["id"], b["status"], b["rows"]) for b in listed["buckets"]] == [(bucket, "new", 1)]
    [bug] = listed["bugs"]
    assert bug["buckets"] == [bucket] and listed["buckets"][0]["bug"] == bug["id"] and listed["schema"] == 2
    result = CliRunner().invoke(cli, ["mark", bucket[:5], "ignored", "--corpus", str(db), "--note", "known"])
    assert result.exit_code == 0 and "ignored" in result.output
    listed = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json", "--status", "ignored"]).output)
    assert [b["note"] for b in listed["buckets"]] == ["known"]
    by_bug = CliRunner().invoke(cli, ["mark", bug["id"], "reported", "--corpus", str(db), "--url", "https://x.org/1"])
    assert by_bug.exit_code == 0 and by_bug.output.startswith(f"{bucket} reported")
    listed = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json"]).output)
    assert listed["bugs"][0]["urls"] == ["https://x.org/1"] and listed["bugs"][0]["status"] == "reported"


def test_oracle_defects_have_their_own_section_and_count(tmp_path):
    """An oracle defect (campaign.rederive) is listed after the buckets, counted by stats, and
    is no bucket."""
    db = tmp_path / "c.db"
    bucket = _corpus_with_a_bucket(db)
    c = Corpus(db)
    defect = {"program_id": "p", "target": "rusticl", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out3",
              "work_item": 7, "lane": 7, "operation": "expm1", "expression": "expm1(in3[gid])", "inputs": "{}",
              "actual": "0x99319efa", "actual_value": "-0x1.633df4p-77", "rule": "math.expm1.ulp",
              "expected": '["0x9931a000"]', "rederived": '["0x99319efa"]',
              "why": "the re-derivation accepts the actual value"}
    c.add_run({"program_id": "p", "target": "rusticl", "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
               "checks": 1, "judged": 1, "mismatches": 0}, [], [], [defect])
    c.close()
    listed = CliRunner().invoke(cli, ["buckets", "--buckets", "--corpus", str(db)], env={"COLUMNS": "250"})
    assert listed.exit_code == 0, listed.output
    buckets, _, defects = listed.output.partition("oracle defects: 1 lane whose")
    assert bucket in buckets and "expm1" not in buckets
    assert "rusticl" in defects and "expm1(in3[gid])" in defects and "0x9931a000" in defects
    assert [b["id"] for b in json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json"]).output)[
        "buckets"]] == [bucket]
    summary = json.loads(CliRunner().invoke(cli, ["stats", "--corpus", str(db), "--json"]).output)
    assert summary["oracle_defects"] == 1 and summary["buckets"]["total"] == 1


@pytest.mark.parametrize("args,needle", [
    (["mark", "nope", "reported"], "no bucket"),
    (["reduce", "nope"], "no bucket, disagreement or disagreeing program"),
    (["report", "nope", "-o", "OUT"], "no bucket"),
])
def test_triage_commands_on_unknown_ids_fail_in_one_line(tmp_path, args, needle):
    db = tmp_path / "c.db"
    _corpus_with_a_bucket(db)
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    _one_line_error(CliRunner().invoke(cli, [*args, "--corpus", str(db)]), needle)


def test_mark_refuses_an_unknown_status(tmp_path):
    result = CliRunner().invoke(cli, ["mark", "abc", "wontfix", "--corpus", str(tmp_path / "c.db")])
    assert result.exit_code == 2 and "wontfix" in result.output and "Traceback" not in result.output


def _corpus_commands():
    """Every command (and subcommand) with a --corpus option, by its command line."""
    for name, command in sorted(cli.commands.items()):
        for sub_name, sub in sorted(getattr(command, "commands", {}).items()) or [("", command)]:
            if any(p.name == "corpus_path" for p in sub.params):
                yield " ".join(n for n in (name, sub_name) if n), sub


@pytest.mark.parametrize("name", [n for n, _ in _corpus_commands()])
def test_every_corpus_option_defaults_to_out_campaign_db_and_says_so(name):
    command = dict(_corpus_commands())[name]
    option = next(p for p in command.params if p.name == "corpus_path")
    shown = " ".join(CliRunner().invoke(cli, [*name.split(), "--help"], terminal_width=200).output.split())
    if name == "ci":  # its smoke campaign keeps a temporary corpus unless given one
        assert option.envvar is None and "CLFUZZ_CORPUS" not in shown and "out/campaign.db" not in shown
        return
    assert (option.default, option.envvar) == ("out/campaign.db", "CLFUZZ_CORPUS")
    assert "[env var: CLFUZZ_CORPUS; default: out/campaign.db]" in shown


def test_the_default_corpus_is_out_campaign_db_here_and_CLFUZZ_CORPUS_overrides_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLFUZZ_CORPUS", raising=False)
    _one_line_error(CliRunner().invoke(cli, ["stats"]), "no corpus at out/campaign.db")
    (tmp_path / "out").mkdir()
    bucket = _corpus_with_a_bucket(tmp_path / "out" / "campaign.db")
    _corpus_with_a_bucket(tmp_path / "other.db")
    assert json.loads(CliRunner().invoke(cli, ["stats", "--json"]).output)["corpus"] == "out/campaign.db"
    assert "0 buckets in base.txt" in CliRunner().invoke(cli, ["baseline", "-o", "base.txt"]).output
    marked = CliRunner().invoke(cli, ["mark", bucket, "ignored"], env={"CLFUZZ_CORPUS": "other.db"})
    assert marked.exit_code == 0, marked.output
    assert Corpus("other.db").bucket(bucket)["status"] == "ignored"
    assert Corpus("out/campaign.db").bucket(bucket)["status"] == "new"  # the variable overrode the default
    given = CliRunner().invoke(cli, ["stats", "--json", "--corpus", "out/campaign.db"], env={"CLFUZZ_CORPUS": "x.db"})
    assert json.loads(given.output)["corpus"] == "out/campaign.db"  # and --corpus overrides the variable


@pytest.mark.drivers
def test_run_creates_out_and_the_default_corpus(targets, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CLFUZZ_CORPUS"}
    done = subprocess.run([sys.executable, "-m", "app.cli", "run", "--minutes", "0.5", "--max-programs", "1",
                           "--areas", "conversions", "--statements", "2", "--global-size", "8",
                           "--drivers", targets[0].name, "--triage-share", "0"],
                          cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "out" / "campaign.db").is_file() and (tmp_path / "out" / "campaign.db.summary.md").is_file()
    assert "corpus out/campaign.db" in done.stdout


def _unprivileged() -> list[str]:
    """A command prefix under which the file permissions hold: none for a user, for root
    ``setpriv`` without the capabilities that override them (skipped where it is missing)."""
    if os.geteuid() != 0:
        return []
    if not Path("/usr/bin/setpriv").exists():
        pytest.skip("root without setpriv: the permissions would not hold")
    return ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def _cli_unprivileged(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*_unprivileged(), sys.executable, "-m", "app.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "COLUMNS": "250"})


@pytest.fixture
def write_protected(tmp_path):
    """A folder ``ro`` that nothing may write, with a current corpus (one bucket) in it."""
    folder = tmp_path / "ro"
    folder.mkdir()
    bucket = _corpus_with_a_bucket(folder / "c.db")
    for p in (folder / "c.db", folder):
        p.chmod(p.stat().st_mode & ~0o222)
    yield folder, bucket
    folder.chmod(0o755)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_reading_commands_read_a_corpus_nothing_may_write(write_protected, tmp_path):
    """A write-protected corpus in a write-protected folder (a WAL corpus whose shared-memory file
    cannot be created): the reading commands read it and change nothing; a writing one fails in one line."""
    folder, bucket = write_protected
    db = str(folder / "c.db")
    before = _snapshot(folder)
    listed = _cli_unprivileged("buckets", "--buckets", "--corpus", db)
    assert listed.returncode == 0 and bucket in listed.stdout, listed.stdout + listed.stderr
    stats = _cli_unprivileged("stats", "--corpus", db, "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["buckets"]["total"] == 1, stats.stderr
    page = _cli_unprivileged("dashboard", "--corpus", db, "-o", str(tmp_path / "d.html"))
    assert page.returncode == 0 and (tmp_path / "d.html").stat().st_size > 1000, page.stderr
    merged = _cli_unprivileged("corpus", "merge", db, "-o", str(tmp_path / "m.db"))  # a source is only read
    assert merged.returncode == 0 and Corpus(tmp_path / "m.db").bucket(bucket)["rows"] == 1, merged.stderr
    assert _snapshot(folder) == before
    marked = _cli_unprivileged("mark", bucket, "ignored", "--corpus", db)
    assert marked.returncode == 2 and "Traceback" not in marked.stderr, marked.stderr
    assert len(marked.stderr.strip().splitlines()) == 1 and _snapshot(folder) == before


def test_a_reading_command_upgrades_an_old_writable_corpus_and_refuses_a_write_protected_one(tmp_path):
    from conftest import meta, old_corpus

    from corpus.schema import SCHEMA_VERSION

    writable = old_corpus(12, tmp_path)
    assert _cli_unprivileged("buckets", "--corpus", str(writable)).returncode == 0
    assert meta(writable) == str(SCHEMA_VERSION)
    folder = tmp_path / "old"
    folder.mkdir()
    protected = old_corpus(12, folder)
    for p in (protected, folder):
        p.chmod(0o555)
    try:
        refused = _cli_unprivileged("buckets", "--corpus", str(protected))
    finally:
        folder.chmod(0o755)
    assert refused.returncode == 2 and not refused.stdout and "Traceback" not in refused.stderr
    assert refused.stderr.startswith("Error: ") and len(refused.stderr.strip().splitlines()) == 1
    assert "schema 12" in refused.stderr and "copy it" in refused.stderr and meta(protected) == "12"


def _program_file(tmp_path: Path, change) -> Path:
    """A one-statement program (``convert_int_rte`` of a float input) as a program .json file,
    ``change`` applied to its JSON form (lang.ir.to_data)."""
    from lang.ir import Buffer, Fill, Load, Op, Program, Store, to_data
    from lang.types import Type

    f, i = Type("float"), Type("int")
    program = Program((Buffer("in0", f, "in", Fill(3, (1, 2), 3)), Buffer("out0", i, "out")),
                      (Store("out0", Op("convert", (Load("in0", f),), i, (("rounding", "rte"),))),), 4)
    data = to_data(program)
    change(data, data["body"][0]["value"])
    path = tmp_path / "program.json"
    path.write_text(json.dumps(data))
    return path


def _set(key, value):
    return lambda data, op: op.__setitem__(key, value)


@pytest.mark.parametrize("change,needle", [
    (lambda data, op: None, None),  # the program as written: fine
    (_set("op", "frobnicate"), "unknown operation 'frobnicate'"),
    (lambda data, op: op["args"].append(op["args"][0]), "convert takes 1 operands, not 2"),
    (_set("args", [{"literal": [1 << 40], "type": "float"}]), "does not fit float"),
    (lambda data, op: data["buffers"][0]["fill"].__setitem__("seed", -1), "a seed and a skip of at least 0"),
    (_set("attrs", {"rounding": 7}), "attributes are not ones clfuzz can"),
    (_set("type", "int7"), "malformed program"),
])
def test_a_bad_program_file_is_one_line_for_emit_and_replay(tmp_path, change, needle):
    path = _program_file(tmp_path, change)
    emitted = CliRunner().invoke(cli, ["emit", str(path)])
    if needle is None:
        assert emitted.exit_code == 0 and "convert_int_rte(in0[gid])" in emitted.output, emitted.output
        return
    _one_line_error(emitted, str(path), needle)
    # replay reads the file before it looks for a driver: no driver needed to refuse it
    _one_line_error(CliRunner().invoke(cli, ["replay", str(path), "--drivers", "none-such"]), needle)


@pytest.fixture
def locked(tmp_path):
    """A folder no one may write into."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def test_outputs_into_a_folder_no_one_may_write_are_refused_before_the_work(tmp_path, locked):
    db = tmp_path / "c.db"
    bucket = _corpus_with_a_bucket(db)
    for args, needle in (
        (["report", bucket, "--corpus", str(db), "-o", str(locked / "r")], "cannot create"),
        (["emit", "--random", "3", "-o", str(locked / "progs")], "cannot create"),
        (["export-regressions", bucket, "--corpus", str(db), "-o", str(locked / "reg")], "cannot create"),
        (["baseline", "--corpus", str(db), "-o", str(locked / "b.txt")], "cannot create"),
        (["dashboard", "--corpus", str(db), "-o", str(locked / "d.html")], "cannot create"),
        (["run", "--corpus", str(locked / "c.db"), "--minutes", "0.1"], "cannot be created"),
        (["ci", "--junit", str(locked / "x.xml"), "--minutes", "0"], "cannot create"),  # before the replay
        (["ci", "--output", str(locked / "results"), "--minutes", "0"], "cannot create"),
        (["ci-merge", str(tmp_path), "-o", str(locked / "merged")], "cannot create"),
    ):
        started = time.monotonic()
        done = _cli_unprivileged(*args)
        assert done.returncode == 2 and not done.stdout and "Traceback" not in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr, (args, done.stderr)
        assert time.monotonic() - started < 30, args  # refused before reducing, drawing, replaying or fuzzing
    assert list(locked.iterdir()) == []


def test_an_unknown_campaign_is_one_line(tmp_path):
    db = tmp_path / "c.db"
    _corpus_with_a_bucket(db)
    Corpus(db).update_campaign("nightly", 1, {}, 0, 0)
    for command in (["stats"], ["buckets"], ["dashboard", "-o", str(tmp_path / "d.html")]):
        _one_line_error(CliRunner().invoke(cli, [*command, "--corpus", str(db), "--campaign", "nightyl"]),
                        "no campaign 'nightyl'", "its campaigns: nightly")
    assert CliRunner().invoke(cli, ["stats", "--corpus", str(db), "--campaign", "nightly"]).exit_code == 0


def _corpus_with_an_infinite_error(path: Path) -> None:
    """A corpus whose errors table (math area) holds an infinite error in ulps beside a finite one,
    as a GPU driver's infinite result for a finite reference leaves it."""
    c = Corpus(path)
    error = {"buffer": "out0", "operation": "tan", "type": "float4", "accepted": 0, "rule": "math.tan.float.ulp",
             "bound": "tan on float is within 4 ulp", "work_item": 0, "lane": 1, "expression": "tan(in0[gid])",
             "inputs": '{"in0": {"type": "float4", "values": ["1", "0x1.921fb6p+0", "3", "4"]}}',
             "reference": "-0x1.5d14p+24", "actual_value": "inf"}
    c.add_run({"program_id": "p", "target": "nvidia", "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
               "checks": 4, "judged": 4, "mismatches": 0},
              [], [{**error, "ulps": float("inf")}, {**error, "operation": "sin", "ulps": 2.5, "accepted": 1}])
    c.close()


def test_the_dashboard_of_a_corpus_with_infinite_errors(tmp_path):
    db = tmp_path / "c.db"
    _corpus_with_an_infinite_error(db)
    done = CliRunner().invoke(cli, ["dashboard", "--corpus", str(db), "-o", str(tmp_path / "d.html")])
    assert done.exit_code == 0, done.output
    page = (tmp_path / "d.html").read_text()
    assert "<tr><td><code>tan</code></td><td>float</td><td>nvidia</td><td class=n>inf</td>" in page


def test_every_json_output_is_an_object_with_its_schema_version(tmp_path):
    """stats, audit and versions --json here (drivers and releases: test_releases, tests/drivers):
    an object whose ``schema`` is the version app.json_forms keeps, in strict JSON."""
    from app.json_forms import SCHEMAS

    db = tmp_path / "c.db"
    bucket = _corpus_with_a_bucket(db)
    for command, args in (("stats", []), ("audit", []), ("versions", [bucket, "--stored"])):
        done = CliRunner().invoke(cli, [command, *args, "--corpus", str(db), "--json"])
        assert done.exit_code == 0, done.output
        data = json.loads(done.output, parse_constant=lambda c: pytest.fail(f"{command}: {c} is not JSON"))
        assert isinstance(data, dict) and data["schema"] == SCHEMAS[command] == 1, command
    assert set(SCHEMAS) >= {"drivers", "releases", "stats", "audit", "versions"}


def test_an_infinite_error_is_the_string_inf_in_strict_json(tmp_path):
    db = tmp_path / "c.db"
    _corpus_with_an_infinite_error(db)
    done = CliRunner().invoke(cli, ["stats", "--corpus", str(db), "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert [(e["operation"], e["ulps"]) for e in data["largest_errors"]] == [("sin", 2.5), ("tan", "inf")]

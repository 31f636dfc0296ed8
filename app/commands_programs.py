"""The commands on one program (a corpus id, id prefix or program .json file): ``replay`` re-runs it
on the drivers, ``emit`` writes it (or random ones) as OpenCL C or SPIR-V."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from app.options import corpus_option, fail, local_targets, open_corpus, output_path
from corpus.store import CorpusError
from lang.declared import check_program
from lang.flow import FlowProgram, program_from_json
from lang.flow_rules import check
from lang.ir import InvalidProgram, Program


def _load_program(ref: str, corpus_path: str, judged: bool = False) -> Program | FlowProgram:
    """The program ``ref`` names: a stored program's id or id prefix, or a program .json file,
    checked (:func:`_usable`; a flow program by its rules, lang.flow_rules) so that bad input is one
    line."""
    path = Path(ref)
    if path.suffix == ".json" or path.is_file():
        try:
            program = program_from_json(path.read_text())
            if isinstance(program, FlowProgram):
                check(program)
                return program
            return _usable(check_program(program), judged)
        except (OSError, UnicodeDecodeError, InvalidProgram) as e:
            raise fail(InvalidProgram(f"{ref}: {e}")) from None
    corpus = open_corpus(corpus_path, read_only=True)
    try:
        return corpus.program(ref)
    except CorpusError as e:
        raise fail(e) from None


def _usable(program: Program, judged: bool) -> Program:
    """A program from a file, refused (InvalidProgram) where an emitter cannot write it on a path
    that can express it, or (``judged``) the oracle cannot judge it: an operation's attributes
    edited by hand (lang.ir validates the program's structure and lang.ops its operations, not
    each operation's attributes)."""
    from campaign.expectations import Expectations
    from fuzz.emit import spirv as spirv_emit
    from fuzz.emit.opencl_c import emit as emit_c
    from lang.constructs import paths_of

    try:
        paths = paths_of(program)
        if "opencl-c" in paths:
            emit_c(program)
        if "spirv" in paths and "fp16" not in program.requires:
            spirv_emit.emit(program)
        if judged:
            Expectations(program).get(frozenset())
    except InvalidProgram:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, StopIteration,
            AssertionError) as e:
        raise InvalidProgram(f"an operation's attributes are not ones clfuzz can "
                             f"{'judge' if judged else 'write'} ({type(e).__name__}: {e})") from None
    return program


@click.command()
@click.argument("program_id")
@corpus_option()
@click.option("--drivers", help="Comma-separated driver names (default: every device found).")
@click.option("--limit", type=int, default=10, show_default=True, help="Mismatching lanes shown per driver.")
def replay(program_id: str, corpus_path: str, drivers: str | None, limit: int) -> None:
    """Re-run a stored program (an id, id prefix or program .json file) and print expected vs actual.

    Example: clfuzz replay 3fa2c1
    """
    from campaign.execute import execute
    from fuzz.drivers import Worker
    from fuzz.drivers.capabilities import supports
    from fuzz.drivers.routes import PATH_OPENCL_C

    program = _load_program(program_id, corpus_path, judged=True)
    for target in local_targets(drivers):
        if not supports(target, program):
            why = f"needs {', '.join(sorted(program.requires))}" if program.requires else "no statement it can take"
            if isinstance(program, FlowProgram) and target.path != PATH_OPENCL_C and supports(
                    replace(target, path=PATH_OPENCL_C), program):  # lang.flow_fp, lang.flow_launch
                why += ": on the OpenCL C path only (docs/flow.md)"
            click.echo(f"{target.name}: skipped ({why})")
            continue
        with Worker(target) as worker:
            outcome = execute(program, target, worker, None)
        v = outcome.verdict
        builds = " (two builds: the default options and -cl-opt-disable)" if isinstance(program, FlowProgram) else ""
        click.echo(f"{target.name}: {outcome.status}, {v.judged} lanes judged, {v.mismatches} mismatching{builds}")
        for r in (v.rows + outcome.failures)[:limit]:
            click.echo(f"  {r['buffer']}[{r['work_item']}] lane {r['lane']}: {r['expression']}"
                       + (f"  [{r['deviation_detail']}]" if isinstance(program, FlowProgram) else ""))
            click.echo(f"    inputs   {r['inputs']}")
            click.echo(f"    expected {r['expected_value']}  bits {r['expected']}  allowed {r['allowed']}")
            click.echo(f"    actual   {r['actual_value']}  bits {r['actual']}")
            click.echo(f"    rule     {r['rule_text']} ({r['section']})")


@click.command()
@click.argument("program_id", required=False)
@corpus_option()
@click.option("--spirv", is_flag=True, help="Write the SPIR-V module (ID.spv) and its disassembly (ID.spvasm).")
@click.option("--random", "random_n", type=click.IntRange(min=1),
              help="Write N random programs (.cl where OpenCL C can express it, .spv, .json).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random programs.")
@click.option("--statements", type=click.IntRange(min=1), default=16, show_default=True,
              help="Statements per random program.")
@click.option("--areas", help="Comma-separated areas of the random programs (default: all but flow; e.g. shapes, "
                              "flow).")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), help="Folder to write into.")
def emit(program_id: str | None, corpus_path: str, spirv: bool, random_n: int | None, seed: int, statements: int,
         areas: str | None, out_dir: str | None) -> None:
    """Write a stored program (id, prefix or .json file) as OpenCL C or SPIR-V, or random ones.

    \b
    Examples:
      clfuzz emit 3fa2c1 > kernel.cl
      clfuzz emit 3fa2c1 --spirv -o spv/                   (spv/ID.spv, spv/ID.spvasm)
      clfuzz emit --random 100 --seed 7 -o progs/          (ID.cl, ID.spv, ID.json each)
      clfuzz emit --random 20 --areas shapes -o shapes/    (loops, barriers, branches, calls)
    """
    from fuzz.drivers.routes import PATH_OPENCL_C
    from fuzz.emit import spirv as spirv_emit
    from fuzz.emit.opencl_c import emit as emit_c
    from fuzz.emit.opencl_flow import emit as emit_flow
    from fuzz.emit.spirv.flow_kernel import emit as emit_flow_spirv
    from fuzz.emit.validate import target_env
    from lang.constructs import paths_of

    if (program_id is None) == (random_n is None):
        raise click.UsageError("give either a PROGRAM_ID or --random N")
    if random_n is not None and not out_dir:
        raise click.UsageError("--random needs -o DIR, the folder to write the programs into")
    if program_id is not None and not spirv and not out_dir:
        program = _load_program(program_id, corpus_path)
        if isinstance(program, FlowProgram):
            click.echo(emit_flow(program), nl=False)
            return
        if PATH_OPENCL_C not in paths_of(program):
            raise fail(f"{program.id} uses operations only SPIR-V has: write it with --spirv -o DIR")
        click.echo(emit_c(program), nl=False)
        return
    folder = output_path(out_dir or ".", folder=True)  # before the programs are drawn
    if program_id is not None:
        programs = [_load_program(program_id, corpus_path)]
    else:
        from fuzz.strategies import AREAS, DEFAULT_AREAS, Caps, area_strategy, sample
        from lang.policy import Policy

        chosen = tuple(a.strip() for a in areas.split(",") if a.strip()) if areas else DEFAULT_AREAS
        unknown = [a for a in chosen if a not in AREAS]
        if unknown:
            raise click.BadParameter(f"unknown area {unknown[0]!r}; one of {', '.join(AREAS)}", param_hint="--areas")
        policy = Policy(statements=statements, global_size=1024, shape_statements=statements)
        programs = sample(area_strategy(chosen, Caps(fp64=True), policy), random_n, seed)
    for program in programs:
        if isinstance(program, FlowProgram):  # its OpenCL C text, its JSON, with --spirv its module
            written = [_write(folder / f"{program.id}.cl", emit_flow(program).encode()),
                       _write(folder / f"{program.id}.json", program.to_json().encode())]
            if spirv:
                written += _spirv_files(folder, program.id, emit_flow_spirv(program), "opencl1.2", True)
            click.echo(" ".join(written))
            continue
        written = []
        if (random_n is not None or not spirv) and PATH_OPENCL_C in paths_of(program):
            written.append(_write(folder / f"{program.id}.cl", emit_c(program).encode()))
        if random_n is not None:
            written.append(_write(folder / f"{program.id}.json", program.to_json().encode()))
        if spirv or random_n is not None:
            if "fp16" in program.requires:
                raise fail(f"{program.id} uses half: no valid OpenCL SPIR-V module has Float16 "
                           f"(spirv-val), so it has no .spv")
            written += _spirv_files(folder, program.id, spirv_emit.emit(program), target_env(program),
                                    random_n is None)
        click.echo(" ".join(written))


def _spirv_files(folder: Path, program_id: str, module: bytes, env: str, disassembled: bool) -> list[str]:
    """Write ``module`` (``ID.spv``, and with ``disassembled`` ``ID.spvasm``) once spirv-val accepts
    it for ``env``; an invalid module is an emitter bug: say so, never hand the file out as valid."""
    from fuzz.emit.validate import validate

    problem = validate(module, env)
    if problem is not None:
        raise click.ClickException(f"{program_id}: emitted module is invalid ({problem.splitlines()[0]})")
    return [_write(folder / f"{program_id}.spv", module)] + (
        [_write(folder / f"{program_id}.spvasm", _disassemble(module))] if disassembled else [])


def _write(path: Path, data: bytes) -> str:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as e:
        raise fail(f"cannot write {path}: {e.strerror}") from None
    return str(path)


def _disassemble(module: bytes) -> bytes:
    from fuzz.emit.validate import disassemble

    try:
        return disassemble(module)
    except FileNotFoundError:
        raise click.ClickException("spirv-dis not found: install Debian's spirv-tools (setup.sh does)") from None

"""Build errors and crashes key on the line that says what failed (corpus.buckets.first_error):
PoCL glues LLVM optimisation remarks to its logs, and a re-run must read the same failure."""

from __future__ import annotations

from corpus.buckets import failure_message, first_error

POCL_LINK = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nError(s) while linking: \n"
             "Cannot find symbol _Z8half_cosDv3_f in kernel library\nCannot find symbol _Z9half_log2Dv3_f in kernel "
             "library\n<unknown>:0:0: loop not vectorized: instruction return type cannot be vectorized<unknown>:0:0: "
             "382 instructions in function<unknown>:0:0: 381 instructions in function")
RUSTICL_PANIC = ("killed by SIGABRT\nthread '<unnamed>' panicked at 'called `Option::unwrap()` on a `None` value', "
                 "../src/gallium/frontends/rusticl/core/program.rs:588:14\nstack backtrace:\nnote: Some details are "
                 "omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n"
                 "fatal runtime error: Rust panics must be rethrown")


def test_the_missing_symbol_not_the_remarks():
    assert first_error(POCL_LINK) == "Cannot find symbol _Z8half_cosDv3_f in kernel library"


def test_the_panic_not_the_signal_or_the_backtrace_note():
    assert first_error(RUSTICL_PANIC).startswith("thread '<unnamed>' panicked at 'called `Option::unwrap()`")


def test_a_compiler_error_before_its_notes():
    log = "warning: unused variable 'y'\nkernel.cl:3:5: error: use of undeclared identifier 'x'\nnote: declared here"
    assert first_error(log) == "kernel.cl:3:5: error: use of undeclared identifier 'x'"


def test_a_signal_alone():
    assert first_error("killed by SIGSEGV") == "killed by SIGSEGV"


def test_one_missing_family_one_message_whatever_the_overload_and_the_remark_noise():
    other = POCL_LINK.replace("_Z8half_cosDv3_f", "_Z10half_rsqrtf").replace("382", "17")
    assert failure_message(POCL_LINK) == failure_message(other) == "Cannot find symbol half_* in kernel library"


def test_only_a_library_family_collapses_other_names_stay_whole():
    """fmin_common missing is not C99's fmin missing (PoCL 3.1 through SPIR-V), nor a family; a
    native_ form is its family as half_ is."""
    assert failure_message("Cannot find symbol _Z11fmin_commonDv4_fS_ in kernel library") == (
        "Cannot find symbol fmin_common in kernel library")
    assert failure_message("Cannot find symbol _Z10native_expf in kernel library") == (
        "Cannot find symbol native_* in kernel library")


def test_the_same_panic_at_another_line_reads_the_same():
    assert failure_message(RUSTICL_PANIC) == failure_message(RUSTICL_PANIC.replace("588:14", "601:9"))


def test_a_clipped_log_keeps_an_error_that_comes_before_pages_of_remarks():
    """PoCL prints a missing kernel-library symbol, then its LLVM remarks for every kernel: clipping
    to the end alone made each such run a bucket of its own ("[...]"), not the half_* bucket."""
    from corpus.buckets import failure_message, first_error
    from fuzz.drivers.protocol import LOG_LIMIT, clip_log

    log = ("Cannot find symbol _Z8half_tanDv16_f in kernel library\n"
           + "<unknown>:0:0: Stores SLP vectorized with cost -7 and with tree size 2" * 400)
    clipped = clip_log(log)
    assert len(clipped.encode()) <= LOG_LIMIT
    assert failure_message(first_error(clipped)) == failure_message("Cannot find symbol _Z9half_sqrtf in kernel library")
    crash = "x" * 3 * LOG_LIMIT + "\nAssertion `ok' failed."
    assert first_error(clip_log(crash)) == "Assertion `ok' failed."


def test_oclgrind_s_fatal_error_keys_on_what_it_could_not_do():
    """Oclgrind prints its fatal errors' source line first; the next line says what failed, and two
    such failures (an instruction it cannot simulate, a built-in it does not have) are two."""
    cast = ("OCLGRIND FATAL ERROR (./src/core/WorkItem.cpp:282)\nUnsupported instruction: addrspacecast\n"
            "\tKernel: clfuzz\n\tEntity: Global(0,0,0) Local(0,0,0) Group(0,0,0)")
    missing = ("setup: LogicError: clCreateKernel failed: INVALID_KERNEL_NAME\n"
               "OCLGRIND FATAL ERROR (./src/core/WorkItem.cpp:1681)\nUndefined external function: fmin_common\n"
               "When creating kernel 'clfuzz'")
    assert failure_message(cast) == "Unsupported instruction: addrspacecast"
    assert failure_message(missing) == "Undefined external function: fmin_common"

"""The audit's reading of a program's build options (triage.audit): which rules of OpenCL C
3.0.19 §7 still judge a floating-point lane, from the OpenCL 3.0 API's compiler options
(§5.8.6.2 math intrinsics, §5.8.6.3 optimization), written from their text with no oracle code.

* ``-cl-unsafe-math-optimizations`` allows optimizations that "(a) assume that arguments and
  results are valid, (b) may violate the IEEE 754 standard, (c) assume relaxed OpenCL numerical
  compliance requirements" (OpenCL C §7.4 Table 67, defined for float on OpenCL C >= 2.0 builds
  only; on SPIR-V the OpenCL SPIR-V environment §6.6.3, with no such condition) "and (d) may
  violate edge case behavior"; it "includes the -cl-no-signed-zeros,
  -cl-mad-enable, and -cl-denorms-are-zero options".
* ``-cl-finite-math-only`` assumes "that arguments and results are not NaNs, +Inf, -Inf" and "may
  violate the OpenCL numerical compliance requirements ... as well as edge case behavior".
* ``-cl-fast-relaxed-math`` sets both of them.
* ``-cl-no-signed-zeros``: "the sign of a zero result isn't significant".
* ``-cl-denorms-are-zero``: float (and double) denormals may be flushed (not in image reads).
* ``-cl-mad-enable``: ``a * b + c`` may be a mad.
* ``-cl-opt-disable`` and every other option void nothing.

So: under unsafe, fast-relaxed or finite-math-only no edge-case rule judges (the prescribed
values of §7.5.1 and C99 F.9, the sign of ``lgamma_r`` at a pole, each function's handling of
zeros, infinities and NaNs, the rules that say what a NaN or infinite operand gives); under
finite-math-only, and under unsafe on OpenCL C 1.x builds or on a type other than float, no
accuracy rule judges either.

The options are those the run recorded (the exact ``clBuildProgram`` string, ``-cl-std``
included); for a run that recorded none, the program's and the ``-cl-std`` clfuzz builds its
requirements with.
"""

from __future__ import annotations

from dataclasses import dataclass

CL2_REQUIREMENTS = frozenset({"cl2.0", "cl3.0", "generic_address_space"})
"""Program requirements clfuzz builds with -cl-std=CL2.0 or CL3.0 (without -cl-std a device
builds OpenCL C 1.2, API §5.8.6.5)."""
CL2_STD = frozenset({"-cl-std=CL2.0", "-cl-std=CL3.0"})


@dataclass(frozen=True)
class Build:
    """What the build options of one program leave of the rules (module docstring)."""

    finite: bool = False  # -cl-finite-math-only, -cl-fast-relaxed-math
    unsafe: bool = False  # -cl-unsafe-math-optimizations, -cl-fast-relaxed-math
    no_signed_zeros: bool = False  # -cl-no-signed-zeros, or implied by unsafe
    mad: bool = False  # -cl-mad-enable, or implied by unsafe
    daz: bool = False  # -cl-denorms-are-zero, or implied by unsafe
    cr: bool = False  # -cl-fp32-correctly-rounded-divide-sqrt
    table67: bool = False  # unsafe math's float bounds apply: OpenCL C >= 2.0, or SPIR-V

    @classmethod
    def of(cls, options: str, table67: bool) -> Build:
        """The rules an options string leaves (``table67``: whether the build is one unsafe math's
        float bounds are defined for)."""
        words = set(options.split())
        unsafe = bool(words & {"-cl-unsafe-math-optimizations", "-cl-fast-relaxed-math"})
        return cls(finite=bool(words & {"-cl-finite-math-only", "-cl-fast-relaxed-math"}), unsafe=unsafe,
                   no_signed_zeros=unsafe or "-cl-no-signed-zeros" in words,
                   mad=unsafe or "-cl-mad-enable" in words, daz=unsafe or "-cl-denorms-are-zero" in words,
                   cr="-cl-fp32-correctly-rounded-divide-sqrt" in words, table67=table67)

    @classmethod
    def of_run(cls, options: str, requires: frozenset[str], recorded: str | None, spirv: bool) -> Build:
        """The rules of one run of a program with ``options`` and ``requires``: from the options
        string the run ``recorded`` where it did, else from the program's."""
        if recorded is not None:
            return cls.of(recorded, spirv or bool(set(recorded.split()) & CL2_STD))
        return cls.of(options, spirv or bool(requires & CL2_REQUIREMENTS))

    @property
    def edges(self) -> bool:
        """Whether edge-case rules judge (neither unsafe nor finite-math-only)."""
        return not (self.unsafe or self.finite)

    def accuracy(self, s: str) -> bool:
        """Whether accuracy rules judge a lane of floating type ``s``."""
        return not self.finite and not (self.unsafe and (s != "float" or not self.table67))

    @property
    def voids_edges(self) -> str:
        """Why edge-case rules do not judge ('' where they do)."""
        if self.edges:
            return ""
        which = "-cl-finite-math-only" if self.finite else "-cl-unsafe-math-optimizations"
        return f"{which}: edge-case behaviour is not required (API §5.8.6.3)"

    def voids_accuracy(self, s: str) -> str:
        """Why no accuracy rule judges type ``s`` ('' where one does)."""
        if self.accuracy(s):
            return ""
        if self.finite:
            return "-cl-finite-math-only: numerical compliance is not required (API §5.8.6.3)"
        return ("-cl-unsafe-math-optimizations: accuracy is defined for float on OpenCL C >= 2.0 builds and "
                "SPIR-V only (OpenCL C §7.4 Table 67, OpenCL SPIR-V environment §6.6.3)")

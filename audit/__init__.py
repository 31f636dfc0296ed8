"""The audit: a second, independent derivation of the oracle's verdicts (``clfuzz audit``,
triage.audit), sharing no code with :mod:`oracles` (the import-linter contract
``audit-independent``): Python integers, exact fractions in the four rounding modes, mpmath with
the spec's special values, and a plain texel walk, from OpenCL C 3.0.19.

Its modules: the number model (:mod:`.values`), C's typing (:mod:`.types`), conversions and
floating-point arithmetic (:mod:`.convert`), what the operation modules share (:mod:`.base`), what
the build options leave of the rules (:mod:`.build`), what the floating-point built-ins share
(:mod:`.floats`), the operations (:mod:`.ops`, :mod:`.integers`, :mod:`.math` with
:mod:`.specials`, :mod:`.exact` and :mod:`.common`, :mod:`.geometric`, :mod:`.images`) and the
evaluator that walks a statement (:mod:`.eval`).
"""

from audit.base import Unsupported
from audit.convert import Env
from audit.eval import Evaluator
from audit.values import NOT_AUDITED, TooMany, bits_text, decode, is_float, round_real

__all__ = ["NOT_AUDITED", "Env", "Evaluator", "TooMany", "Unsupported", "bits_text", "decode", "is_float",
           "round_real"]

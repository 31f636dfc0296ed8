"""The oracle: what the specs allow every output lane of a program to be, and why.

This package's face is the contract the rest of clfuzz uses (``from oracles import ...``):

* expectations: :func:`expected` (every output buffer of a program), :func:`rederive` (the same
  with the uncached exact reference: no filter, no operand-set cache), :func:`evaluate` (one
  expression), :func:`environment` (the float environment of a program on a device: the flushable
  types and the flags of its build), :class:`Expectation` and :func:`as_bits`, and
  :class:`UndefinedBehaviour` where a judged lane reaches a case the spec leaves undefined;
* defined programs: :func:`undefined_results`, the operations some lane of whose result the spec
  leaves undefined or implementation-defined (:class:`UndefinedResult`, each with the rule that
  says so: ``Rule.leaves``, :data:`LEAVES`);
* the rules: every verdict names one (:func:`rule`, :func:`by_id`, :data:`RULES`; a lane's rule index is
  this process's: :func:`portable_rules` and :func:`adopt_rules` carry indices to another), each with its
  severity (:data:`SEVERITIES`, :func:`at_least`, :func:`severity_of`); :data:`FAILURE` (a build
  error, crash or hang; :data:`FAILURE_SPIRV` on a SPIR-V path, :func:`failure_rule`), :data:`SLOW`
  (a run cut at the time ceiling) and :data:`WRONG_CODE` (a statement's value changed by the code
  around it);
* explaining a wrong value: the deviation classifier (:class:`Classifier`, :class:`Deviation`) and
  the input class of an operand (:func:`input_class`);
* the atomics: a program's :func:`histories` and their :func:`check`;
* flow programs (lang.flow): every output's exact bits for every work-item, :func:`flow_outcomes`
  (:mod:`oracles.flow`), from the inputs :func:`flow_inputs` gives;
* what triage and the strategies compute as the oracle does: the image addressing
  (:func:`address`, :func:`array_layer`, :func:`axis_candidates`, :func:`int_floor`), the
  operators' types (:data:`OPERATORS`, :func:`operator_type`), :func:`arith_is_defined`, and the
  float formats (:func:`fmt`).

The oracle's areas are subpackages with faces of their own (:mod:`oracles.math`,
:mod:`oracles.images`, :mod:`oracles.atomics`, :mod:`oracles.deviation`); the bit-exact
conversions are :mod:`oracles.conversions` (``convert``, which outside checkers import).
"""

from oracles.arith import arith_is_defined
from oracles.atomics import Histories, Violation, check, histories
from oracles.classes import input_class
from oracles.deviation import Classifier, Deviation
from oracles.interpreter import FLUSHED_TYPES, UndefinedBehaviour, environment, evaluate, expected, ftz_neutral, path_neutral, rederive
from oracles.expect import ErrorScale, Expectation, as_bits
from oracles.floats import fmt
from oracles.flow import input_values as flow_inputs
from oracles.flow import interpret as flow_outcomes
from oracles.images import address, array_layer, axis_candidates, int_floor
from oracles.operands import OPERATORS, operator_type
from oracles.references import REFERENCES, severity_of
from oracles.rules import (
    FAILURE,
    FAILURE_SPIRV,
    LEAVES,
    RULES,
    SEVERITIES,
    SLOW,
    WRONG_CODE,
    Rule,
    adopt_rules,
    at_least,
    by_id,
    failure_rule,
    portable_rules,
    rule,
)
from oracles.undefined import UndefinedResult, undefined_results

__all__ = [
    "FAILURE", "FAILURE_SPIRV", "LEAVES", "OPERATORS", "REFERENCES", "RULES", "SEVERITIES", "SLOW", "WRONG_CODE", "Classifier",
    "Deviation", "ErrorScale", "FLUSHED_TYPES", "Expectation", "Histories", "Rule", "UndefinedBehaviour", "UndefinedResult", "Violation", "address",
    "adopt_rules", "arith_is_defined", "array_layer", "as_bits", "at_least", "axis_candidates", "by_id", "check", "environment",
    "evaluate", "expected", "ftz_neutral", "failure_rule", "flow_inputs", "flow_outcomes", "fmt", "histories", "input_class", "int_floor",
    "operator_type", "path_neutral", "portable_rules", "rederive", "rule",
    "severity_of", "undefined_results",
]

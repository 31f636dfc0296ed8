"""A new bucket joined to a known bug with one run, before its reduction (triage.join), on a real
driver: Oclgrind computes sinpi(x) as sin(pi * x) in double, a tiny number where OpenCL C 3.0.19
§6.15.2 Table 11 and the special values of §7.5.1 require zero for an integer x, on float and on
double alike."""

from __future__ import annotations

import struct
from dataclasses import replace

from corpus.bug_queries import stored_evidence
from corpus.reads import bucket_rows
from corpus.store import Corpus
from fuzz.drivers import Worker
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.shapes import Part, Shape
from lang.types import Type
from triage.bugs import listed
from triage.join import join_known
from triage.session import reduction_row

from tests.test_siblings import one
from .conftest import skip_without_icd, target_named
from .test_siblings_run import _stored

skip_without_icd()


def _float(x: float) -> int:
    return int.from_bytes(struct.pack("<f", x), "little")


def _corpus(tmp_path, target) -> Corpus:
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    return corpus


def test_a_new_bucket_takes_its_reduced_siblings_case(tmp_path):
    """The float bucket is reduced (sinpi(1.0f)); the double bucket, new and not reduced, gets the
    float case's double variant as its reduced case after one run, with the evidence stored."""
    target = target_named("oclgrind")
    corpus = _corpus(tmp_path, target)
    single = one("sinpi", "float", "float", [_float(1.0)])
    double = one("sinpi", "double", "double", [int.from_bytes(struct.pack("<d", 3.0), "little")])
    with Worker(target) as worker:
        _stored(corpus, single, target, worker)
        [float_bucket] = [b["id"] for b in corpus.buckets()]
        corpus.add_reduction(reduction_row(single, single, float_bucket, target))
        _stored(corpus, double, target, worker)
        [double_bucket] = [b["id"] for b in corpus.buckets() if b["id"] != float_bucket]
        assert corpus.bucket(double_bucket)["reduced"] is None
        joined = join_known(corpus, double_bucket, bucket_rows(corpus, double_bucket)[0], target, worker)
    assert joined == float_bucket
    assert corpus.bucket(double_bucket)["reduced"]["statements"] == 1
    [evidence] = stored_evidence(corpus)
    assert (evidence["bucket"], evidence["same_as"], evidence["kind"]) == (double_bucket, float_bucket, "re-run")
    assert len(listed(corpus)[0]) == 1


def test_a_bucket_with_no_reduced_sibling_is_left_to_its_reduction(tmp_path):
    target = target_named("oclgrind")
    corpus = _corpus(tmp_path, target)
    single = one("sinpi", "float", "float", [_float(1.0)])
    with Worker(target) as worker:
        _stored(corpus, single, target, worker)
        [bucket] = [b["id"] for b in corpus.buckets()]
        assert join_known(corpus, bucket, bucket_rows(corpus, bucket)[0], target, worker) is None
    assert corpus.bucket(bucket)["reduced"] is None and not stored_evidence(corpus)


def _shaped() -> Program:
    f = Type("float")
    base = Program((Buffer("in0", f, "in", Fill(0, (), 3, (_float(1.0),) * 64)), Buffer("out0", f, "out")),
                   (Store("out0", Op("sinpi", (Load("in0", f),), f)),), 64, area="maths")
    return replace(base, area="shapes", local_size=16,
                   shape=Shape("maths", (Part("carried", "for", (3, 1, 9, 0)),), (Part("loop", "while-break", (9, 4)),)))


def test_a_shaped_bucket_moves_to_its_built_ins_bucket(tmp_path):
    """sinpi(1) wrong inside a loop: the shaped bucket (keyed ``shape: unreduced``) moves to the
    straight-line bucket of the same signature, which its twin shows, after one run; where that
    bucket does not exist yet, it is left to its reduction (nothing moves)."""
    target = target_named("oclgrind")
    corpus = _corpus(tmp_path, target)
    shaped = _shaped()
    with Worker(target) as worker:
        _stored(corpus, shaped, target, worker)
        [bucket] = [b["id"] for b in corpus.buckets()]
        assert corpus.bucket(bucket)["signature"]["shape"] == "unreduced"
        row = bucket_rows(corpus, bucket)[0]
        assert join_known(corpus, bucket, row, target, worker) is None  # no straight-line bucket yet
        assert [b["id"] for b in corpus.buckets()] == [bucket]
        _stored(corpus, one("sinpi", "float", "float", [_float(1.0)]), target, worker)
        [plain] = [b["id"] for b in corpus.buckets() if b["id"] != bucket]
        assert join_known(corpus, bucket, row, target, worker) == plain
    assert [b["id"] for b in corpus.buckets()] == [plain]
    assert {r["program_id"] for r in bucket_rows(corpus, plain)} >= {shaped.id}


def test_a_signed_case_shows_its_unsigned_twins_bucket(tmp_path):
    """Oclgrind's min of a short3 with a scalar bound (a wrong lane: the scalar form mishandled)
    reduced on signed values; the ushort3 bucket, new, is shown by the same bits as ushort (the
    negative value -1 is 0xFFFF there: triage.siblings keeps the bits of a value the unsigned twin
    does not hold)."""
    from lang.ir import Buffer, Fill, Load, Op, Program, Store

    target = target_named("oclgrind")
    corpus = _corpus(tmp_path, target)

    def case(scalar: str, x: tuple[int, ...]) -> Program:
        v, s = Type(scalar, 3), Type(scalar)
        return Program((Buffer("in0", v, "in", Fill(0, (), 3, x)), Buffer("in4", s, "in", Fill(0, (), 3, (1,))),
                        Buffer("out1", v, "out")), (Store("out1", Op("min", (Load("in0", v), Load("in4", s)), v)),),
                       global_size=1, area="expressions")

    signed = case("short", (0xFFFF, 1, 1, 0))
    with Worker(target) as worker:
        _stored(corpus, signed, target, worker)
        [signed_bucket] = [b["id"] for b in corpus.buckets()]
        corpus.add_reduction(reduction_row(signed, signed, signed_bucket, target))
        _stored(corpus, case("ushort", (0, 2, 1, 0)), target, worker)
        [unsigned_bucket] = [b["id"] for b in corpus.buckets() if b["id"] != signed_bucket]
        joined = join_known(corpus, unsigned_bucket, bucket_rows(corpus, unsigned_bucket)[0], target, worker)
    assert joined == signed_bucket
    assert len(listed(corpus)[0]) == 1


def _border(channel: str, result: str) -> Program:
    """A read at (-0.5, 1.25), outside a 1x1 R image under CLK_ADDRESS_CLAMP: the border colour
    (0, 0, 0, 1) for an R image, OpenCL C 3.0.19 §6.15.15.1.1."""
    from lang.ir import Image, Sampler

    coord = Type("float", 2)
    read = Op("read_image", (Load("in3", coord),), Type(result, 4),
              (("dim", "2d"), ("form", "unnorm-nearest-clamp:program"), ("image", "img1"), ("sampler", "smp3")))
    return Program((Buffer("in3", coord, "in", Fill(0, (), 3, (_float(-0.5), _float(1.25)))),
                    Buffer("out3", Type(result, 4), "out")), (Store("out3", read),), global_size=1, area="images",
                   images=(Image("img1", "2d", "R", channel, (1, 1), Fill(0, (), 3, (0,))),),
                   samplers=(Sampler("smp3", False, "clamp", "nearest", "program"),))


def test_pocls_border_colour_is_one_bug_on_every_read_function(tmp_path):
    """PoCL's border colour of an R image is wrong for read_imagef and read_imageui alike: the
    read_imageui bucket's case re-run as read_imagef (the same texel bits as UNORM_INT8) lands in
    the read_imagef bucket."""
    target = target_named("pocl")
    corpus = _corpus(tmp_path, target)
    unsigned = _border("UNSIGNED_INT8", "uint")
    with Worker(target) as worker:
        _stored(corpus, unsigned, target, worker)
        [ui_bucket] = [b["id"] for b in corpus.buckets()]
        corpus.add_reduction(reduction_row(unsigned, unsigned, ui_bucket, target))
        _stored(corpus, _border("UNORM_INT8", "float"), target, worker)
        [f_bucket] = [b["id"] for b in corpus.buckets() if b["id"] != ui_bucket]
        joined = join_known(corpus, f_bucket, bucket_rows(corpus, f_bucket)[0], target, worker)
    assert joined == ui_bucket
    assert corpus.bucket(f_bucket)["signature"]["deviation"] == "border-colour"
    assert len(listed(corpus)[0]) == 1

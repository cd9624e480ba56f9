"""The AI core's vector microbenchmarks build each op's call from its family's descriptor
(isa/tile_roles.py: operand_shapes, operand_dtypes, bench_values, bench_in_place, bench_spare,
unchainable) and the ISA record's own operands and signature (calibrate/aicore_kernels.py)."""
import dataclasses

import pytest

from pypto_sim.calibrate import UNCOVERED, CalibrationError
from pypto_sim.calibrate.aicore_kernels import op_allocs, op_call, unchainable_specs, vector_specs
from pypto_sim.isa import VECTOR_FAMILIES, load_isa
from pypto_sim.isa.tile_roles import FAMILY_ROLES

ISA = load_isa()


@pytest.mark.parametrize("name, dtype, rows, cols, allocs, call", [
    # a mask written from two tiles, or from a tile and a scalar (the record has `scalar`)
    ("TCMP", "float32", 8, 64, ["big 8 64 float32", "mask 8 32 uint8", "other 8 64 float32"],
     'pto.tcmp(mask, big, other, mode="eq")'),
    ("TCMPS", "int32", 8, 64, ["big 8 64 int32", "mask 8 32 uint8"], 'pto.tcmps(mask, big, 1, mode="eq")'),
    # dst written over a: one tile; TSELS's scalar in the data dtype
    ("TSEL", "float32", 8, 64, ["big 8 64 float32", "mask 8 32 uint8", "other 8 64 float32"],
     "pto.tsel(big, mask, big, other)"),
    ("TSELS", "float32", 8, 64, ["big 8 64 float32", "mask 8 32 uint8"], "pto.tsels(big, mask, big, 1.0)"),
    # the in-place form's signature takes no src
    ("TFILLPAD", "float32", 8, 64, ["big 8 64 float32", "other 8 64 float32"], 'pto.tfillpad(big, other, pad="min")'),
    ("TFILLPAD_INPLACE", "float32", 8, 64, ["big 8 64 float32"], 'pto.tfillpad_inplace(big, pad="min")'),
    # an int32 index column, col-major, its rows whole 32-byte blocks; a float16 column: 16-row blocks;
    # either holds the op's 3 rows valid (A2/A3 asserts that a row reduction's column has its rows)
    ("TROWARGMAX", "float32", 3, 64, ["big 3 64 float32", "icol 8 1 int32 ColMajor 3"], "pto.trowargmax(icol, big)"),
    ("TROWSUM", "float16", 3, 64, ["big 3 64 float16", "col 16 1 float16 ColMajor 3"], "pto.trowsum(col, big)"),
    ("TCOLARGMIN", "float32", 8, 64, ["big 8 64 float32", "irow 1 64 int32"], "pto.tcolargmin(irow, big)"),
    ("TCOLEXPANDADD", "float32", 8, 64, ["big 8 64 float32", "row 1 64 float32"], "pto.tcolexpandadd(big, big, row)"),
    ("TTRANS", "float16", 8, 64, ["big 8 64 float16", "tr 64 16 float16"], "pto.ttrans(tr, big)"),
    ("TTRI", "float32", 8, 64, ["big 8 64 float32"], "pto.ttri(big, diagonal=0)"),
    # the ALU's unary ops keep their spare tile; a fill from a scalar has no source, so no spare
    ("TEXP", "float32", 8, 64, ["big 8 64 float32", "other 8 64 float32"], "pto.texp(big, big)"),
    ("TEXPANDS", "int32", 8, 64, ["big 8 64 int32"], "pto.texpands(big, 1)"),
    ("TADD", "float32", 8, 64, ["big 8 64 float32", "other 8 64 float32"], "pto.tadd(big, big, other)"),
    ("TCVT", "float32", 8, 64, ["big 8 64 float32", "half 8 64 float16"], "pto.tcvt(half, big)"),
])
def test_each_family_s_call_comes_from_its_descriptor_and_the_record(name, dtype, rows, cols, allocs, call):
    """Tile shapes and dtypes from operand_shapes / operand_dtypes, the values from
    bench_values, and which operands a call passes from the record."""
    lines, got = op_allocs(ISA[name], dtype, rows, cols)
    want = []
    for a in allocs:
        var, r, c, dt, *layout = a.split()
        valid = f", valid=({layout[1]}, {c})" if len(layout) > 1 else ""
        layout = ", layout=pto.ColMajor" if layout else ""
        want.append(f"{var} = pto.alloc_tile({r}, {c}, pto.{dt}, loc=pto.Vec{layout}{valid})")
    assert (lines, got) == (want, call)


def test_every_benchmarked_vector_op_has_a_call_and_unchainable_families_are_left_out_with_their_reason():
    """vector_specs is every vector record but those of unchainable families (the sorts) and those
    on another pipe than V (TEXPANDS_MAT, the cube core's Mat fill on MTE2), each of which gets a
    call; the others' latency is uncovered with their family's reason."""
    left_out = {s.name for s, _ in unchainable_specs()}
    assert {"TSORT32", "TMRGSORT", "TMRGSORT_LISTS", "TGATHER"} <= left_out
    off_v = {s.name for s in ISA.specs if s.family in VECTOR_FAMILIES and s.pipe != "vector"}
    assert off_v == {"TEXPANDS_MAT"}
    assert {s.name for s in vector_specs()} | left_out | off_v == {s.name for s in ISA.specs
                                                                   if s.family in VECTOR_FAMILIES}
    for spec in vector_specs():
        for dt in spec.dtypes:
            op_call(spec, dt)
    for spec, why in unchainable_specs():
        assert why in UNCOVERED[(spec.name, "latency")] and spec.family in UNCOVERED[(spec.name, "latency")]


@pytest.mark.parametrize("field, change, what", [
    ("operand_shapes", {"operand_shapes": (("dst", "mask"),)}, "tile operand 'a' has no shape"),
    ("operand_shapes", {"operand_shapes": (("dst", "mask"), ("a", "cube"), ("b", "tile"))}, "shape 'cube'"),
    ("bench_values", {"bench_values": ()}, "needs a value for 'scalar'"),
])
def test_a_family_without_benchmark_data_says_which_descriptor_field_to_fill(monkeypatch, field, change, what):
    """A vector family whose descriptor lacks what a call needs raises naming the record, the
    family and the FamilyRoles field."""
    monkeypatch.setitem(FAMILY_ROLES, "tile_cmp", dataclasses.replace(FAMILY_ROLES["tile_cmp"], **change))
    with pytest.raises(CalibrationError, match=what) as info:
        op_call(ISA["TCMPS"], "float32")
    assert "TCMPS (tile_cmp)" in str(info.value) and f"FamilyRoles.{field} of tile_cmp" in info.value.hint

"""The ISA table is the single source of truth: everything else must be derived from it and
cover it. Each test here fails when an instruction lacks one of its derived artefacts."""
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import IsaError
from pypto_sim.exec import comm_signals, reference, scalar_memory
from pypto_sim.exec.alu_source import generate_alu_source
from pypto_sim.exec.lane import executor, family_code
from pypto_sim.isa import load_isa, load_isa_from
from pypto_sim.isa.docs import render_markdown
from pypto_sim.timing.machine import machine_names, resolve_machine

ROOT = Path(__file__).resolve().parent.parent
ISA = load_isa()


def test_opcode_enum_is_derived_from_the_table():
    """Every instruction is a member of the Opcode enum with its table opcode."""
    for spec in ISA.specs:
        assert ISA.Opcode[spec.name] == spec.opcode


def test_every_builtin_is_exported_with_signature_and_docstring():
    """pto.<builtin> exists for every builtin the table names; its signature and doc come from it."""
    import inspect
    for name, specs in ISA.builtins().items():
        fn = getattr(pto, name)
        assert str(inspect.signature(fn)) == ISA.signature_of(specs[0], name).replace("float32", "pto.float32")
        assert specs[0].doc in fn.__doc__


def test_instructions_api_exposes_the_table():
    """pto.instructions() returns records with name, opcode, pipe, category and doc."""
    recs = pto.instructions()
    assert len(recs) == len(ISA.specs) >= 50
    fma = next(r for r in recs if r.name == "FMA")
    assert (fma.pipe, fma.category) == ("vector", "lane_alu") and fma.doc


def test_every_executor_family_has_both_implementations():
    """The numba executor dispatches every family the table uses (each ALU instruction's
    expression is a branch of the generated ALU module); the reference has a handler. The AI
    core's scalar memory family is one step both AI-core executors call (exec/scalar_memory.py), and so is
    the functional executor's communication-signal family (exec/comm_signals.py; the SimPy model splits it
    in time, timing/aicore_signals.py)."""
    src = generate_alu_source()
    for spec in ISA.specs:
        if spec.family in ("alu", "fma_store"):
            assert spec.float_expr or spec.int_expr
            assert f"if op == {spec.opcode}:  # {spec.name}\n" in src
        family_code(spec.family)
    ex = executor()
    for family in {s.family for s in ISA.specs} - {"alloc", "sync", "control", "tile_sync"}:
        if family == "scalar_mem":
            assert scalar_memory.run.__doc__
        elif family == "comm_signal":
            assert comm_signals.run.__doc__
        elif family.startswith("tile_"):
            kernel = reference.TILE_FAMILY_KERNELS[family]
            assert getattr(ex, kernel.__name__).__doc__ and kernel.__doc__
        else:
            assert family in reference.FAMILY_HANDLERS


def test_every_machine_table_covers_every_instruction():
    """Each shipped latency table has a latency and issue interval, with a source, per instruction."""
    assert machine_names()
    for name in machine_names():
        m = resolve_machine(name)
        for spec in ISA.specs:
            assert m.latency(spec.name) >= 0 and m.issue_interval(spec.name) >= 1
            assert m.source(spec.name).strip()
        assert all(m.sources[k].strip() for k in m.sources)


def test_docs_isa_md_is_generated_from_the_table():
    """docs/isa.md is up to date (regenerate: python -m pypto_sim.isa.docs > docs/isa.md)."""
    assert (ROOT / "docs" / "isa.md").read_text() == render_markdown()


def test_docs_isa_md_names_every_builtin_and_alias():
    """Every name a kernel can call for an instruction (builtins and their AI-core aliases such as
    pto.tload and pto.alloc_tile) appears in docs/isa.md as `pto.NAME(` on its instruction's row."""
    text = (ROOT / "docs" / "isa.md").read_text()
    rows = {line.split("|")[2].strip(): line for line in text.splitlines() if line.startswith("| 0x")}
    for name, specs in ISA.builtins().items():
        for spec in specs:
            assert f"`pto.{name}(" in rows[spec.name], (name, spec.name)


EVERYTHING = '''
@pto.kernel
def helper(x):
    if x > 3.0:
        return x
    return x * 2.0

@pto.kernel
def everything(a, ai, o, oi, n):
    i = pto.get_global_id()
    j = pto.get_local_id() + pto.get_block_id() + pto.get_block_dim() + pto.get_grid_dim()
    j = j + pto.get_lane_id() + pto.get_warp_id()
    buf = pto.alloc_local(64)
    x = pto.load(a + i)
    k = pto.load(ai + i)
    y = x + 1.0 - x * 2.0 / 3.0
    y = pto.fma(None, y, x, 1.0) + x // 2.0 + x % 2.0
    y = pto.min(y, x) + pto.max(y, x) + abs(-y)
    y = y + pto.exp(x) + pto.log(x + 1.0) + pto.sqrt(x) + pto.rsqrt(x + 1.0)
    m = (k & 3) | (k ^ 5) + (k << 1) + (k >> 1) + ~k
    c = (i < n) and (i <= n) and not (i > n) and (i >= 0) and (i == i) and (i != -1)
    y = pto.select(c, y, x) + pto.cast(m, pto.float32) + helper(x)
    y = y + pto.shfl_idx(y, 0) + pto.shfl_up(y, 1) + pto.shfl_down(y, 1) + pto.shfl_xor(y, 1)
    m = m + pto.ballot(y > 0.0) + pto.select(pto.vote_all(y > 0.0) or pto.vote_any(y < 0.0), 1, 0)
    m = m + pto.match_any(k) + pto.match_all(k, 0xFFFF) + pto.select(pto.vote_eq(y > 0.0), 1, 0)
    m = m + pto.atomic_add(oi + i % 8, 1) + pto.atomic_max(oi + 1, m) + pto.atomic_min(oi + 2, m)
    m = m + pto.atomic_exchange(oi + 3, m) + pto.atomic_cas(oi + 4, 0, m)
    y = y + pto.atomic_add(buf + 1, 1.0) + pto.atomic_max(buf + 2, y) + pto.atomic_min(buf + 3, y)
    y = y + pto.atomic_exchange(buf + 4, y) + pto.atomic_cas(buf + 5, 0.0, y)
    pto.fence()
    arr = pto.local_array(4)
    arr[m % 4] = y
    y = y + arr[m % 4] + arr[0]
    m = m + pto.barrier_block_count(y > 0.0) + pto.select(pto.barrier_block_and(y > 0.0), 1, 0)
    m = m + pto.select(pto.barrier_block_or(y > 0.0), 1, 0)
    pto.store(buf + j % 64, y)
    pto.barrier()
    pto.barrier_block()
    y = pto.load(buf + j % 64)
    for t in range(3):
        if t == 1:
            continue
        if y > 100.0:
            break
        y = y + 1.0
    else_ = 0
    while else_ < 2:
        else_ += 1
    if i >= n:
        return
    elif i < 0:
        y = 0.0
    else:
        y = y + 0.5
    pto.store(oi + i, m)
    pto.fma(o + i, y, 1.0, 0.0)

@pto.kernel
def tiles(a, o):
    t = pto.alloc_local(64)
    u = pto.alloc_local(64)
    r = pto.alloc_local(8)
    with pto.pipeline(depth=2) as pl:
        for k in pl.range(0, 2, 1):
            with pl.stage("load"):
                x = pto.alloc_local(64)
                pto.async_load(x, a, 256)
            with pl.stage("compute", after="load"):
                pto.wait_all()
                pto.mma(t, x, x, 8, 8, 8)
    pto.set_flag("mma", "vector", 0)
    pto.wait_flag("mma", "vector", 0)
    pto.tadd(u, t, t, 64)
    pto.tsub(u, u, t, 64)
    pto.tmul(u, u, t, 64)
    pto.tdiv(u, u, t, 64)
    pto.tmax(u, u, t, 64)
    pto.tmin(u, u, t, 64)
    pto.texp(u, u, 64)
    pto.tlog(u, u, 64)
    pto.tsqrt(u, u, 64)
    pto.tadds(u, u, 1.0, 64)
    pto.tmuls(u, u, 2.0, 64)
    pto.tmaxs(u, u, 0.0, 64)
    pto.trowsum(r, u, 8, 8)
    pto.trowmax(r, u, 8, 8)
    pto.trowexpand(u, r, 8, 8)
    pto.wait_all()
    pto.store(o, u, rows=8, cols=8, stride=8)


@pto.kernel(sync="manual")
def aicore(h, f, ix):
    with pto.cube():
        m = pto.alloc_tile(16, 16, pto.float16, loc=pto.Mat)
        a = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left)
        b = pto.alloc_tile(16, 16, pto.float16, loc=pto.Right)
        mf = pto.alloc_tile(16, 16, pto.float32, loc=pto.Mat)
        bias = pto.alloc_tile(1, 16, pto.float32, loc=pto.Bias)
        c = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc)
        pto.tload(m, h)
        pto.set_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.wait_flag(pto.PIPE_MTE2, pto.PIPE_MTE1, 0)
        pto.textract(a, m)
        pto.timg2col(a, m, 0, 0, 4, 4, pad_top=1, pad_bottom=1, pad_left=1, pad_right=1)
        pto.tmov(b, m)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.textract(bias, mf)
        pto.texpands(mf, 1.0)
        pto.tmatmul(c, a, b)
        pto.tmatmul_acc(c, a, b)
        pto.tmatmul_bias(c, a, b, bias)
        g = pto.alloc_tile(16, 16, pto.float16, loc=pto.Left, valid=(1, 16))
        gc = pto.alloc_tile(16, 16, pto.float32, loc=pto.Acc, valid=(1, 16))
        pto.tgemv(gc, g, b)
        pto.tgemv_acc(gc, g, b)
        pto.tgemv_bias(gc, g, b, bias)
        pto.pipe_barrier(pto.PIPE_ALL)
        pto.tmov(mf, c)
        pto.tstore(f, c)
        qm = pto.alloc_tile(1, 16, pto.int64, loc=pto.Mat)
        fp = pto.alloc_tile(1, 16, pto.int64, loc=pto.Scaling)
        ci = pto.alloc_tile(16, 16, pto.int32, loc=pto.Acc)
        pto.tmov(fp, qm)                        # TMOV_M2S: the quant words into the fixpipe buffer
        pto.tstore(h, ci, quant=fp)             # TSTORE_FP: VDEQF16, a word a column
        pto.mgather(mf, f, ix, 64)
        pto.mgather(mf, f, ix, 4096, coalesce='elem', oob='wrap', scratch=f)
        pto.cross_core_set_flag(0)
    with pto.vector():
        v = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
        v16 = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec)
        pto.cross_core_wait_flag(0)
        pto.tload(v, f)
        pto.tcvt(v16, v)
        pto.tstore(h, v16)
        pto.syncall()
        pto.syncall(workspace=ix)
        v[3] = ix[1] + v[2]                     # the scalar unit on UB and GM
        ix[2] = 5
        pto.dcci(ix)
        col = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        pto.tabs(v, v)
        pto.tneg(v, v)
        pto.trelu(v, v)
        pto.trecip(v, v)
        pto.trsqrt(v, v)
        pto.tprelu(v, v, v)
        pto.tsubs(v, v, 0.5)
        vchk = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, valid=(pto.get_block_id() + 16, 16))
        pto.tadds(vchk, v, 1.0)                 # a run-time valid region: CHECK that it is v's
        pto.tdivs(v, v, 0.5)
        pto.tdivs(vchk, 2.0, v)                 # the scalar first: TSDIVS, scalar / tile
        pto.tmins(v, v, 0.5)
        pto.tlrelu(v, v, 0.5)
        pto.trowmin(col, v)
        pto.trowprod(col, v)
        pto.trowexpandsub(v, v, col)
        pto.trowexpandadd(v, v, col)
        pto.trowexpandmul(v, v, col)
        pto.trowexpanddiv(v, v, col)
        pto.trowexpandmax(v, v, col)
        pto.trowexpandmin(v, v, col)
        pto.trowexpandexpdif(v, v, col)
        row = pto.alloc_tile(1, 16, pto.float32, loc=pto.Vec)
        pto.tcolsum(row, v)
        pto.tcolmax(row, v)
        pto.tcolmin(row, v)
        pto.tcolprod(row, v)
        pto.tcolexpand(v, row)
        pto.tcolexpandsub(v, v, row)
        pto.tcolexpandadd(v, v, row)
        pto.tcolexpandmul(v, v, row)
        pto.tcolexpanddiv(v, v, row)
        pto.tcolexpandmax(v, v, row)
        pto.tcolexpandmin(v, v, row)
        pto.tcolexpandexpdif(v, v, row)
        pto.tsubrelu(v, v, v)
        pto.trem(v, v, v)
        pto.tfmod(v, v, v)
        pto.trems(v, v, 3.0)
        pto.tfmods(v, v, 3.0)
        pto.tpow(v, v, v)
        pto.tpows(v, v, 2.0)
        pto.tmuladddst(v, v, v)
        pto.tfusedmuladd(v, v, v)
        pto.tfusedmuladdrelu(v, v, v)
        pto.taxpy(v, v, 0.5)
        pto.texpands(v, 1.0)
        mask = pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec)
        pto.tcmp(mask, v, v, mode="lt")
        pto.tcmps(mask, v, 0.0, mode="ge")
        pto.tsel(v, mask, v, v)
        pto.tsels(v, mask, v, 0.0)
        pto.ttri(v, 0, upper=True)
        vp = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, valid=(8, 8))
        pto.tfillpad(v, vp, pad="min")
        pto.tfillpad_inplace(vp, pad="zero")
        pto.tfillpad_expand(v, row)
        irow = pto.alloc_tile(1, 16, pto.int32, loc=pto.Vec)
        icol = pto.alloc_tile(16, 1, pto.int32, loc=pto.Vec, layout=pto.ColMajor)
        pto.trowargmax(icol, v)
        pto.trowargmin(icol, v)
        pto.tcolargmax(irow, v)
        pto.tcolargmin(irow, v)
        pto.ttrans(v, v)
        fv = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
        pto.ttrans_conv(fv, fv, fv, "NC1HWC0", (1, 1, 2, 16, 8), "NCHW", (1, 8, 2, 16))
        vr = pto.treshape(v, 32, 8)
        vs = pto.tsubview(vr, 8, 0, 8, 8)
        pto.texpands(vs, 0.0)
        iv = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        pto.tnot(iv, iv)
        pto.tand(iv, iv, iv)
        pto.tor(iv, iv, iv)
        pto.txor(iv, iv, iv)
        pto.tshl(iv, iv, iv)
        pto.tshr(iv, iv, iv)
        pto.tands(iv, iv, 3)
        pto.tors(iv, iv, 3)
        pto.txors(iv, iv, 3)
        pto.tshls(iv, iv, 3)
        pto.tshrs(iv, iv, 3)
        pto.tnotify(ix, 1, op="atomic_add")
        if pto.ttest(ix + 1, 0, cmp="ge", rows=2, cols=2, stride=8):
            pto.twait(ix, 1)
        fr = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
        fs = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
        ir = pto.alloc_tile(1, 128, pto.int32, loc=pto.Vec)
        iu = pto.alloc_tile(1, 64, pto.uint32, loc=pto.Vec)
        pto.tsort32(pto.tsubview(fs, 0, 0, 1, 128), pto.tsubview(fr, 0, 0, 1, 64), iu)
        pto.tmrgsort(fr, fs, 64)
        ft = pto.alloc_tile(1, 256, pto.float32, loc=pto.Vec)
        pto.tmrgsort(fs, pto.tsubview(fr, 0, 0, 1, 128), src1=pto.tsubview(fr, 0, 128, 1, 128), tmp=ft)
        pto.tgather(ir, fs, "P1010")
        gi = pto.alloc_tile(1, 128, pto.int32, loc=pto.Vec)
        pto.tgather(ir, iv, gi, gi)
        pto.tgatherb(ir, pto.alloc_tile(1, 128, pto.int32, loc=pto.Vec), iu)
        gs = pto.alloc_tile(1, 256, pto.int32, loc=pto.Vec)
        pto.tscatter(gs, ir, gi)
        pto.tscatter(gs, ir, "P0101")
        sc = pto.alloc_tile(2, 128, pto.int32, loc=pto.Vec)
        pto.tscatter(sc, ir, "P1010", axis="col")
        pto.textract(ir, sc, 1, 0)
        pto.tinsert(sc, ir, 0, 0)
        nz = pto.alloc_tile(16, 16, pto.float16, loc=pto.Vec, layout=pto.NZ)
        pto.textract_nd2xnz(nz, nz, pto.alloc_tile(16, 32, pto.float16, loc=pto.Vec), 0, 0, 0, 16)
        pto.tmov(fr, fs)
        pto.tci(pto.tsubview(ir, 0, 0, 1, 64), 0, fs)
        pto.tci(pto.tsubview(ir, 0, 0, 1, 64), 7, descending=True)
        pv = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec, valid=(4, 16))
        pto.tpartadd(v, v, pv)
        pto.tpartmax(v, pv, v)
        pto.tpartmin(v, v, v)
        pto.tpartmul(v, v, pv)
        pi = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec, valid=(4, 16))
        vi = pto.alloc_tile(16, 16, pto.int32, loc=pto.Vec)
        pto.tpartargmax(v, pv, v, vi, pi, vi)
        pto.tpartargmin(v, v, pv, vi, vi, pi)
        pto.tpairreducesum(v, v)
        ch = pto.alloc_tile(16, 8, pto.float32, loc=pto.Vec)
        pto.tconcat(pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec), ch, ch)
        cx = pto.alloc_tile(16, 8, pto.int32, loc=pto.Vec)
        pto.tconcat_idx(pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec), ch, ch, cx, cx)
        pto.tconcat_dstidx(pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec), ch, ch,
                           pto.alloc_tile(16, 8, pto.int32, loc=pto.Vec, valid=(16, 1)), cx, cx)
        dq = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.tdequant(dq, pto.alloc_tile(16, 32, pto.int16, loc=pto.Vec), pv, pv)
        pto.tdequant(dq, pto.alloc_tile(16, 32, pto.int8, loc=pto.Vec), pv, pv)
        qc = pto.alloc_tile(16, 1, pto.float32, loc=pto.Vec, layout=pto.ColMajor)
        qt = pto.alloc_tile(16, 32, pto.float32, loc=pto.Vec)
        pto.tquant(pto.alloc_tile(16, 32, pto.int8, loc=pto.Vec), dq, qc, qt)
        pto.tquant(pto.alloc_tile(16, 32, pto.uint8, loc=pto.Vec), dq, qc, qt, offset=qc)
        pto.taddreluconv(pto.alloc_tile(16, 32, pto.float16, loc=pto.Vec), dq, dq)
        rc = pto.alloc_tile(16, 32, pto.int16, loc=pto.Vec)
        pto.tsubreluconv(pto.alloc_tile(16, 32, pto.int8, loc=pto.Vec), rc, rc)
        d0 = pto.alloc_tile(16, 32, pto.int32, loc=pto.Vec)
        d1 = pto.alloc_tile(16, 32, pto.int32, loc=pto.Vec)
        d2 = pto.alloc_tile(16, 32, pto.int32, loc=pto.Vec)
        pto.tadddeqrelu(pto.alloc_tile(16, 32, pto.float16, loc=pto.Vec), d0, d1, 0.5, d2)
        gx = pto.alloc_tile(1, 8, pto.int32, loc=pto.Vec)
        gd = pto.alloc_tile(8, 8, pto.float32, loc=pto.Vec)
        ge = pto.alloc_tile(8, 8, pto.int32, loc=pto.Vec)
        pto.mgather(gd, f, gx, 8)
        pto.mgather(gd, f, ge, 64, coalesce='elem', oob='zero')
        pto.mscatter(f, gd, gx, 8, atomic='add')
        pto.mscatter(f, gd, ge, 64, coalesce='elem', oob='skip')
        pto.tprefetch(gd, f)
        pto.tprint(gd)
        pto.tprint(f, rows=2, cols=4)
'''


def test_the_compiler_can_emit_every_instruction(make_kernels):
    """A corpus kernel using every builtin and statement form emits every ISA instruction, so
    no instruction is left without a way to reach it from Python."""
    mod = make_kernels(EVERYTHING)
    args = (pto.alloc_tensor(256), pto.alloc_tensor(256, pto.int32), pto.alloc_tensor(256),
            pto.alloc_tensor(256, pto.int32), 64)
    prog = mod.everything.program_for(args)
    emitted = {ins.op for ins in prog.instrs}
    emitted |= {ins.op for ins in mod.tiles.program_for((pto.alloc_tensor(256), pto.alloc_tensor(256))).instrs}
    half = (pto.alloc_tensor(4096, pto.float16), pto.alloc_tensor(4096, pto.float32), pto.alloc_tensor(256, pto.int32))
    emitted |= {ins.op for ins in mod.aicore.program_for(half).instrs}
    assert emitted == set(ISA.by_name), f"never emitted: {sorted(set(ISA.by_name) - emitted)}"


def test_isa_errors_name_the_file_and_instruction(tmp_path):
    """A malformed record is rejected with the file and instruction named."""
    good = (ROOT / "isa" / "00_core.toml").read_text()
    (tmp_path / "00_core.toml").write_text(good.replace('name = "MOV"\nopcode = 0x10\n',
                                                        'name = "MOV"\nopcode = 0x10\nbogus = 1\n'))
    with pytest.raises(IsaError, match=r"00_core.toml: instruction MOV: unknown field"):
        load_isa_from(tmp_path)
    (tmp_path / "00_core.toml").write_text(good.replace('opcode = 0x11', 'opcode = 0x10'))
    with pytest.raises(IsaError, match=r"instruction CAST: opcode 0x10 already used by MOV"):
        load_isa_from(tmp_path)
    # a record of a tile family without a descriptor: the hint names where a family is made
    tiles = (ROOT / "isa" / "46_sequence.toml").read_text().replace('family = "tile_ci"', 'family = "tile_iota"')
    (tmp_path / "00_core.toml").write_text(good)
    (tmp_path / "46_sequence.toml").write_text(tiles)
    with pytest.raises(IsaError, match=r"(?s)instruction TCI: family 'tile_iota' is not one of .*FAMILY_ROLES"):
        load_isa_from(tmp_path)


def test_every_tile_family_names_its_operand_roles_by_the_records_names():
    """isa/tile_roles.py: every tile family that moves data has roles; in every record of it
    the destination, the sources, the outputs and the scratch tile (of the records that have one:
    TCOLSUM among the column reductions) are tile operands (and together every tile operand the record has), the shape operands are values, a data candidate exists and a GM side is a
    pointer, so the decode by name (exec/aicore_tiles.py) finds what the positions held."""
    from pypto_sim.isa.tile_roles import FAMILY_ROLES, data_operand
    families = {s.family for s in ISA.specs if s.is_tile and s.family != "tile_sync"}
    assert families == set(FAMILY_ROLES), f"roles missing for {sorted(families - set(FAMILY_ROLES))}"
    for spec in ISA.specs:
        roles = FAMILY_ROLES.get(spec.family)
        if roles is None:
            continue
        kinds = {o.name: o.kind for o in spec.value_operands}
        tiles = {n for n, k in kinds.items() if k == "tile"}
        named = {roles.dst} - {None} | {n for n in (*roles.sources, roles.scratch, *roles.outputs) if n in kinds}
        assert named == tiles, f"{spec.name}: roles name {sorted(named)}, its tiles are {sorted(tiles)}"
        assert all(kinds.get(n) == "value" for n in roles.shape), f"{spec.name}: shape {roles.shape}"
        assert kinds[data_operand(spec)] == "tile", spec.name
        if roles.gm is not None:
            assert kinds.get(roles.gm) == "pointer", spec.name
        if roles.mask is not None:
            assert roles.mask in tiles and "mstride" in kinds, spec.name


def test_every_vector_family_describes_its_microbenchmark_operands():
    """isa/tile_roles.py: what the AI core's microbenchmarks read (calibrate/aicore_kernels.py)
    names operands of the family's records, with shapes OPERAND_SHAPES describes; a family's
    mask operand is a "mask"; every vector family either shapes every tile operand its
    records' calls take (no signature default) or says why its ops are not chained
    (unchainable)."""
    import ast
    from pypto_sim.isa.tile_roles import FAMILY_ROLES, OPERAND_SHAPES, VECTOR_FAMILIES
    for family in VECTOR_FAMILIES:
        roles = FAMILY_ROLES[family]
        specs = [s for s in ISA.specs if s.family == family]
        operands = {o.name for s in specs for o in s.value_operands}
        shapes = dict(roles.operand_shapes)
        assert set(OPERAND_SHAPES) >= set(shapes.values()), family
        for field in ("operand_shapes", "operand_dtypes", "bench_values"):
            named = {n for n, _ in getattr(roles, field)}
            assert named <= operands, f"{family}.{field} names {sorted(named - operands)}"
        if roles.mask is not None:
            assert shapes.get(roles.mask) == "mask", family
        if roles.unchainable:
            continue
        for spec in specs:
            args = ast.parse(f"def _f{spec.signature}: pass").body[0].args
            required = [a.arg for a in args.args[:len(args.args) - len(args.defaults)]]
            tiles = {o.name for o in spec.value_operands if o.kind == "tile"}
            assert set(required) & tiles <= set(shapes), f"{spec.name}: {sorted(set(required) & tiles - set(shapes))}"

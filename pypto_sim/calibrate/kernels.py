"""The microbenchmark kernels, as generated PTO source.

Every benchmark is one kernel ``bench(af, ai, o, n, z)`` (float32 tensor ``af``, int32 tensor
``ai``, float32 output ``o``, int scalars ``n`` and ``z = 0``) run on one warp unless it says
otherwise; ``size`` is the swept quantity (how many of the measured instructions it executes, or
bytes). The kernel's total cycles at two or more sizes give a slope (cycles = a + b * size);
fit.py turns slopes into table entries. The kinds, and what a slope measures (g(X) is
max(1, issue_interval(X)); F is a filler, an independent lane ADD):

- ``chain``: k dependent X (``x = x + 1.0``): max(latency, g)
- ``stream``: k independent X (``y_r = x + r``): g
- ``id_use``: k times (id read; an ADD that uses it): latency + 1 (ids have no operand to chain)
- ``chase``: pointer chasing, ``p = load(ai + p)`` (or an atomic that leaves the word as it
  was), one 32-byte sector: latency (+ transfer on HBM)
- ``store_barrier``: k times (store; barrier()): latency + transfer + 1
- ``barrier_gap``: k times (barrier_block(); F): max(latency + 1, issue_interval) (a voting
  barrier's F uses its result)
- ``ctl_*``: control instructions in fixed patterns with a scalar probe after the measured one
  and fillers after the others (fit.py has each pattern's formula)
- ``load_strided``: k independent 1024-byte lane loads: bytes / read bandwidth
- ``tload_chain.bytes=B``: k TLOADs into one tile (each waits for the last): latency + B / bw
- ``tstore_chain.bytes=B``: k times (TSTORE; wait_all()): latency + B / bw + 1
- ``tload_cores.cores=N``: one TLOAD of ``size`` bytes on each of N cores: chip bandwidth
- ``tload_stream`` / ``tstore_stream``: k 32-byte transfers: the DMA issue interval
- ``mma_chain.DTYPE.k=K``: k MMAs (16 x 16 x K) into one accumulator: head + repeats
- ``tile_chain.bytes=B``: k vector tile ops over B bytes (the pipe serialises them)
- ``fused_pair.bytes=1024``: k times (TLOAD 16x16 float32; MMA that reads it): the pair's
  cost, compared with its parts' costs to measure a TLOAD+MMA fusion saving
"""
from __future__ import annotations

from dataclasses import dataclass
from ..isa import LANE_TILE_FAMILIES, load_isa

CTL_FILL = 4          # fillers that hide a control instruction's issue interval (straight line)
LOOP_FILL = 10        # fillers in loop bodies: they also hide the loop counter's latency
LANE_SIZES = (2, 6, 10)
TILE_SIZES = (1, 2, 3)
TENSOR_ELEMS = 65536  # af and o: 256 KiB each
TILE_ELEMS = 32768    # vector tile operands: 128 KiB each, three fit in L1

# name: (chain statement, stream expression with {r}, variable) -- variable x float, j int, c bool
ALU = {
    "ADD": ("x = x + 1.0", "x + {r}.0", "x"), "SUB": ("x = x - 1.0", "x - {r}.0", "x"),
    "MUL": ("x = x * 1.0", "x * {r}.0", "x"), "DIV": ("x = x / 1.0", "x / {r}.0", "x"),
    "FLOORDIV": ("x = x // 1.0", "x // {r}.0", "x"), "MOD": ("x = x % 7.0", "x % {r}.0", "x"),
    "MIN": ("x = pto.min(x, 5.0)", "pto.min(x, {r}.0)", "x"),
    "MAX": ("x = pto.max(x, -5.0)", "pto.max(x, {r}.0)", "x"),
    "AND": ("j = j & 7", "j & {r}", "j"), "OR": ("j = j | 1", "j | {r}", "j"),
    "XOR": ("j = j ^ 3", "j ^ {r}", "j"), "SHL": ("j = j << 1", "j << {r}", "j"),
    "SHR": ("j = j >> 1", "j >> {r}", "j"), "INV": ("j = ~j", "~j", "j"),
    "FMA": ("x = pto.fma(None, x, 1.0, 1.0)", "pto.fma(None, x, 1.0, {r}.0)", "x"),
    "ABS": ("x = pto.abs(x)", "pto.abs(x)", "x"), "NEG": ("x = -x", "-x", "x"),
    "NOT": ("c = pto.logical_not(c)", "pto.logical_not(c)", "c"),
    "EXP": ("x = pto.exp(x)", "pto.exp(x)", "x"), "LOG": ("x = pto.log(x)", "pto.log(x)", "x"),
    "SQRT": ("x = pto.sqrt(x)", "pto.sqrt(x)", "x"), "RSQRT": ("x = pto.rsqrt(x)", "pto.rsqrt(x)", "x"),
    "LT": ("c = pto.lt(c, 1)", "pto.lt(x, {r}.0)", "c"), "LE": ("c = pto.le(c, 1)", "pto.le(x, {r}.0)", "c"),
    "GT": ("c = pto.gt(c, 0)", "pto.gt(x, {r}.0)", "c"), "GE": ("c = pto.ge(c, 1)", "pto.ge(x, {r}.0)", "c"),
    "EQ": ("c = pto.eq(c, 1)", "pto.eq(x, {r}.0)", "c"), "NE": ("c = pto.ne(c, 0)", "pto.ne(x, {r}.0)", "c"),
    "MOV": ("x = pto.cast(x, pto.float32)", "x", "x"),
    "SELECT": ("x = pto.select(c, x, 1.0)", "pto.select(c, x, {r}.0)", "x"),
    "CAST": (None, "pto.cast(x, pto.int32)", "x"),
    "SHFL_IDX": ("x = pto.shfl_idx(x, 0)", "pto.shfl_idx(x, {r})", "x"),
    "SHFL_UP": ("x = pto.shfl_up(x, 1)", "pto.shfl_up(x, {r})", "x"),
    "SHFL_DOWN": ("x = pto.shfl_down(x, 1)", "pto.shfl_down(x, {r})", "x"),
    "SHFL_XOR": ("x = pto.shfl_xor(x, 1)", "pto.shfl_xor(x, {r})", "x"),
    "VOTE_ALL": ("c = pto.vote_all(c)", "pto.vote_all(c)", "c"),
    "VOTE_ANY": ("c = pto.vote_any(c)", "pto.vote_any(c)", "c"),
    "VOTE_EQ": ("c = pto.vote_eq(c)", "pto.vote_eq(c)", "c"),
    "MATCH_ANY": ("j = pto.match_any(j)", "pto.match_any(j)", "j"),
    "MATCH_ALL": ("j = pto.match_all(j)", "pto.match_all(j)", "j"),
}
# atomics: name -> the call on pointer {ptr} that returns the word's old value unchanged
ATOMICS = {"ADD": "pto.atomic_add({ptr}, 0)", "MAX": "pto.atomic_max({ptr}, 0)",
           "MIN": "pto.atomic_min({ptr}, 0)", "EXCH": "pto.atomic_exchange({ptr}, 0)",
           "CAS": "pto.atomic_cas({ptr}, 1, 0)"}
IDS = {"GLOBAL_ID": "pto.get_global_id(0)", "LOCAL_ID": "pto.get_local_id(0)",
       "BLOCK_ID": "pto.get_block_id(0)", "BLOCK_DIM": "pto.get_block_dim(0)",
       "GRID_DIM": "pto.get_grid_dim(0)", "LANE_ID": "pto.get_lane_id()", "WARP_ID": "pto.get_warp_id()"}
PITCHES = ("cols", "dpitch", "apitch", "bpitch")      # an elementwise op's row form (isa/30_tiles.toml)


def _tile_ops():
    """{instruction: kind} of the vector tile ops the article's tile API runs (every tile_alu,
    tile_reduce and tile_expand record but the AI core's TCVT, Vec -> Vec TMOV and Mat fill
    TEXPANDS_MAT), from the ISA table."""
    out = {}
    for spec in load_isa().specs:
        if spec.family not in LANE_TILE_FAMILIES or spec.name in ("TCVT", "TMOV_V2V", "TEXPANDS_MAT"):
            continue
        names = [o.name for o in spec.value_operands if o.name not in PITCHES]
        out[spec.name] = ("reduce" if spec.family == "tile_reduce" else "expand" if spec.family == "tile_expand"
                          else "expand_op" if spec.family in ("tile_expand_op", "tile_col_expand_op")
                          else "col_reduce" if spec.family == "tile_col_reduce"
                          else "col_expand" if spec.family == "tile_col_expand"
                          else "fill" if names == ["dst", "scalar", "n"]
                          else "scalar" if "scalar" in names else "binary" if len(names) == 4 else "unary")
    return out


TILE_OPS = _tile_ops()
TILE_BYTES = (256, 4096, 131072)
TLOAD_BYTES = (32, 4096, 65536, 262144)
TSTORE_BYTES = (32, 4096, 65536, 262144)
CORE_BYTES = (4096, 65536, 262144)
MMA_K = (16, 64, 256, 512)
PROLOGUE = ("i = pto.get_lane_id()", "x = pto.load(af + i)", "c = x < 1e9",
            "j = pto.cast(x, pto.int32)", "p = i * 0")
# a body's first line that waits for every value of the prologue (and so for its load)
AFTER_PROLOGUE = "p = pto.select(c, p + j, p)"
BARRIER_SIZES = (8, 12, 16)


@dataclass(frozen=True)
class Bench:
    """One microbenchmark: ``lines(size)`` gives the kernel body (after the lane prologue when
    ``lane``) and the variable the final single-sector store writes (None: no store).
    ``runtime(size)`` gives ``n`` when size is a launch argument instead of compiled in.
    ``count`` names the instruction whose static count must grow by one per size step."""

    name: str
    instruction: str
    sizes: tuple
    lines: object
    runtime: object = None
    lane: bool = True
    grid: tuple = (1, 1, 1)
    count: str | None = None
    per_size: int = 1

    def source(self, size, fn="bench") -> str:
        """The kernel's Python source for this size."""
        body, result = self.lines(size)
        out = ["@pto.kernel", f"def {fn}(af, ai, o, n, z):"]
        out += [f"    {s}" for s in (PROLOGUE if self.lane else ())]
        out += [f"    {s}" for ln in body for s in ln.split("\n")]
        if result is not None:
            out.append(f"    pto.store(o + 0, {result})")
        if len(out) == 2:
            out.append("    pass")
        return "\n".join(out) + "\n"


def _fill(tag, m, indent=""):
    return [f"{indent}f{tag}_{q} = x + {q + 1}.0" for q in range(m)]


def _alu_benches():
    out = []
    for name, (chain, stream, var) in ALU.items():
        if name == "CAST":
            def cl(k):
                return ([("j = pto.cast(x, pto.int32)" if r % 2 == 0 else "x = pto.cast(j, pto.float32)")
                         for r in range(k)], "x")
        else:
            def cl(k, chain=chain, var=var):
                return [chain] * k, var
        out.append(Bench("chain", name, LANE_SIZES, cl, count=name))
        # copies become MOVs only when the source is overwritten later: hence MOV's "x = ..."
        tail = ["x = x + 1.0"] if name == "MOV" else []
        out.append(Bench("stream", name, LANE_SIZES,
                         lambda k, e=stream, tail=tail: ([f"y{r} = {e.format(r=r + 1)}" for r in range(k)] + tail,
                                                         f"y{k - 1}"), count=name))
    for name, expr in IDS.items():
        out.append(Bench("id_use", name, LANE_SIZES,
                         lambda k, e=expr: ([f"t{r} = {e}\nu{r} = t{r} + i" for r in range(k)], f"u{k - 1}"),
                         count=name))
        out.append(Bench("stream", name, LANE_SIZES,
                         lambda k, e=expr: ([f"t{r} = {e}" for r in range(k)], f"t{k - 1}"), count=name))
    out.append(Bench("id_use", "BALLOT", LANE_SIZES,
                     lambda k: ([f"t{r} = pto.ballot(c)\nu{r} = t{r} + i" for r in range(k)], f"u{k - 1}"),
                     count="BALLOT"))
    out.append(Bench("stream", "BALLOT", LANE_SIZES,
                     lambda k: ([f"t{r} = pto.ballot(c)" for r in range(k)], f"t{k - 1}"), count="BALLOT"))
    out.append(Bench("chain", "pipes.scalar", LANE_SIZES,
                     lambda k: (["s = n * 3"] + ["s = s + 1"] * k, "s"), count="ADD"))
    out.append(Bench("stream", "pipes.scalar", LANE_SIZES,
                     lambda k: ([f"s{r} = n + {r + 1}" for r in range(k)], f"s{k - 1}"), count="ADD"))
    return out


def _memory_benches():
    b = Bench
    return [
        b("chase", "LOAD", LANE_SIZES, lambda k: (["p = pto.load(ai + p)"] * k, "p"), count="LOAD"),
        b("stream", "LOAD", LANE_SIZES,
          lambda k: ([f"q{r} = pto.load(ai + p)" for r in range(k)], f"q{k - 1}"), count="LOAD"),
        b("load_strided.bytes=1024", "memory.hbm_core_read_bytes_per_cycle", (8, 16, 32, 64),
          lambda k: (["q = i * 8"] + [f"y{r} = pto.load(af + q)" for r in range(k)], f"y{k - 1}"),
          count="LOAD"),
        b("store_barrier", "STORE", LANE_SIZES,
          lambda k: (["pto.store(o + 0, x)\npto.barrier()"] * k, None), count="STORE"),
        b("stream", "STORE", LANE_SIZES, lambda k: (["pto.store(o + 0, x)"] * k, None), count="STORE"),
        b("chain", "FMA_STORE", LANE_SIZES, lambda k: (["x = pto.fma(o + 0, x, 1.0, 1.0)"] * k, "x"),
          count="FMA_STORE"),
        b("stream", "FMA_STORE", LANE_SIZES,
          lambda k: ([f"y{r} = pto.fma(o + 0, x, 1.0, {r + 1}.0)" for r in range(k)], f"y{k - 1}"),
          count="FMA_STORE"),
        b("chase", "LOAD_L1", LANE_SIZES,
          lambda k: (["b = pto.alloc_local(64, pto.int32)"] + ["p = pto.load(b + p)"] * k, "p"),
          count="LOAD_L1"),
        b("stream", "LOAD_L1", LANE_SIZES,
          lambda k: (["b = pto.alloc_local(64, pto.int32)"]
                     + [f"q{r} = pto.load(b + p)" for r in range(k)], f"q{k - 1}"), count="LOAD_L1"),
        b("store_barrier", "STORE_L1", LANE_SIZES,
          lambda k: (["bf = pto.alloc_local(64)"] + ["pto.store(bf + i, x)\npto.barrier()"] * k, None),
          count="STORE_L1"),
        b("stream", "STORE_L1", LANE_SIZES,
          lambda k: (["bf = pto.alloc_local(64)"] + ["pto.store(bf + i, x)"] * k, None), count="STORE_L1"),
        b("chain", "LOCAL_LOAD", LANE_SIZES,
          lambda k: (["la = pto.local_array(4, pto.int32)"] + ["p = la[p]"] * k, "p"), count="LOCAL_LOAD"),
        b("stream", "LOCAL_LOAD", LANE_SIZES,
          lambda k: (["la = pto.local_array(4, pto.int32)"] + [f"q{r} = la[p]" for r in range(k)],
                     f"q{k - 1}"), count="LOCAL_LOAD"),
        b("stream", "LOCAL_STORE", LANE_SIZES,
          lambda k: (["la = pto.local_array(4, pto.int32)"] + ["la[p] = j"] * k, None), count="LOCAL_STORE"),
        b("stream", "LOCAL_ARRAY", LANE_SIZES,
          lambda k: ([f"la{r} = pto.local_array(2)" for r in range(k)], None), count="LOCAL_ARRAY"),
    ] + _atomic_benches()


def _atomic_benches():
    """Pointer chases through atomics that leave the word as it was (one sector), and
    independent streams of them, on HBM (ai) and on an L1 buffer."""
    out = []
    for op, call in ATOMICS.items():
        for suffix, setup, ptr in (("", [], "ai + p"), ("_L1", ["b = pto.alloc_local(64, pto.int32)"], "b + p")):
            name = f"ATOM_{op}{suffix}"
            out.append(Bench("chase", name, LANE_SIZES,
                             lambda k, s=setup, c=call.format(ptr=ptr): (s + [f"p = {c}"] * k, "p"),
                             count=name))
            out.append(Bench("stream", name, LANE_SIZES,
                             lambda k, s=setup, c=call.format(ptr=ptr): (s + [f"q{r} = {c}" for r in range(k)],
                                                                        f"q{k - 1}"), count=name))
    return out


def _sync_benches():
    b = Bench
    flag = 'pto.set_flag("load", "mma", 0)'
    return [
        b("stream", "ALLOC_LOCAL", LANE_SIZES,
          lambda k: ([f"b{r} = pto.alloc_local(8)" for r in range(k)], None), count="ALLOC_LOCAL"),
        b("stream", "BARRIER", LANE_SIZES, lambda k: (["pto.barrier()"] * k, None), count="BARRIER"),
        b("stream", "FENCE", LANE_SIZES, lambda k: (["pto.fence()"] * k, None), count="FENCE"),
        # block barriers produce no result: a warp retires once every result it computed is
        # ready, so the prologue's (its load's) must be ready before the barriers start, and the
        # wait's own result before the last barrier: the SELECT (latency 7) waits for them all,
        # and at least 8 barriers follow it
        b("stream", "BARRIER_BLOCK", BARRIER_SIZES, lambda k: ([AFTER_PROLOGUE] + ["pto.barrier_block()"] * k, None),
          count="BARRIER_BLOCK"),
        b("barrier_gap", "BARRIER_BLOCK", BARRIER_SIZES,
          lambda k: ([AFTER_PROLOGUE] + [f"pto.barrier_block()\ng{r} = x + 1.0" for r in range(k)], None),
          count="BARRIER_BLOCK"),
        # voting block barriers: the ADD / SELECT after each uses the result (one instruction)
        *[bench for name, call, use in (("BARRIER_BLOCK_COUNT", "pto.barrier_block_count(c)", "t{r} + i"),
                                        ("BARRIER_BLOCK_AND", "pto.barrier_block_and(c)", "pto.select(t{r}, i, p)"),
                                        ("BARRIER_BLOCK_OR", "pto.barrier_block_or(c)", "pto.select(t{r}, i, p)"))
          for bench in (b("stream", name, LANE_SIZES,
                          lambda k, c=call: ([f"t{r} = {c}" for r in range(k)], None), count=name),
                        b("barrier_gap", name, LANE_SIZES,
                          lambda k, c=call, u=use: ([f"t{r} = {c}\nu{r} = " + u.format(r=r)
                                                     for r in range(k)], None), count=name))],
        b("stream", "WAIT_ALL", LANE_SIZES, lambda k: (["pto.wait_all()"] * k, None), count="WAIT_ALL"),
        b("stream", "SET_FLAG", LANE_SIZES, lambda k: ([flag] * k, None), count="SET_FLAG"),
        b("stream", "WAIT_FLAG", LANE_SIZES,
          lambda k: ([flag] * 16 + ['pto.wait_flag("load", "mma", 0)'] * k, None), count="WAIT_FLAG"),
    ]


def _loop(body, head="jj = i * 0\nwhile jj < n:"):
    return [head] + ["    " + s for ln in body for s in ln.split("\n")]


def _control_benches():
    m, big = CTL_FILL, LOOP_FILL
    b = Bench
    step = "jj = jj + 1"
    return [
        b("ctl_if", "IF", LANE_SIZES,
          lambda k: ([f"if c:\n    u{r} = n + {r}\n" + "\n".join(_fill(f"{r}", m)) for r in range(k)], None),
          count="IF"),
        b("ctl_endif", "ENDIF", LANE_SIZES,
          lambda k: (["if c:\n" + "\n".join(_fill(f"{r}", m, "    ")) + f"\nu{r} = n + {r}" for r in range(k)],
                     None), count="ENDIF"),
        b("ctl_else", "ELSE", LANE_SIZES,
          lambda k: (["if c:\n" + "\n".join(_fill(f"{r}", m, "    ")) + f"\nelse:\n    e{r} = x + 2.0\n"
                      + "\n".join(_fill(f"{r}b", m)) for r in range(k)], None), count="ELSE"),
        b("ctl_loop_cont", "LOOP_CONT", LANE_SIZES, lambda k: (_loop([step] + _fill("l", big)), None),
          runtime=lambda k: k),
        b("ctl_brk_unless", "BRK_UNLESS", LANE_SIZES,
          lambda k: (_loop(["u = n + 1", step] + _fill("l", big)), None), runtime=lambda k: k),
        b("ctl_continue", "CONTINUE", LANE_SIZES,
          lambda k: (_loop([step] + _fill("l", big) + ["if c:\n    continue"]), None), runtime=lambda k: k),
        b("ctl_ret", "RET", LANE_SIZES,
          lambda k: ([f"if i == {r}:\n    return" for r in range(k)], "x"), count="RET"),
        b("ctl_loop", "LOOP", LANE_SIZES,
          lambda k: (["while True:\n    break\n" + "\n".join(_fill(f"{r}", m)) for r in range(k)], None),
          count="LOOP"),
        b("ctl_break", "BREAK", LANE_SIZES,
          lambda k: (["while True:\n" + "\n".join(_fill(f"{r}", m, "    ")) + "\n    break\n"
                      + "\n".join(_fill(f"{r}b", m)) for r in range(k)], None), count="BREAK"),
        b("ctl_endloop", "ENDLOOP", LANE_SIZES,
          lambda k: (["while True:\n" + "\n".join(_fill(f"{r}", m, "    ")) + f"\n    break\nu{r} = n + {r}"
                      for r in range(k)], None), count="ENDLOOP"),
    ]


def _tile_benches(cores):
    b = Bench
    out = []
    big = "t = pto.alloc_local(65536)"
    for nbytes in TLOAD_BYTES:
        out.append(b(f"tload_chain.bytes={nbytes}", "TLOAD", TILE_SIZES,
                     lambda k: ([big] + ["pto.async_load(t, af, rows=1, cols=n, stride=n)"] * k, None),
                     runtime=lambda k, nb=nbytes: nb // 4, lane=False, count="TLOAD"))
    for nbytes in TSTORE_BYTES:
        out.append(b(f"tstore_chain.bytes={nbytes}", "TSTORE", TILE_SIZES,
                     lambda k: ([big] + ["pto.store(o, t, rows=1, cols=n, stride=n)\npto.wait_all()"] * k, None),
                     runtime=lambda k, nb=nbytes: nb // 4, lane=False, count="TSTORE"))
    out.append(b(f"tload_cores.cores={cores}", "memory.hbm_chip_bytes_per_cycle", CORE_BYTES,
                 lambda k: ([big, "pto.async_load(t, af, rows=1, cols=n, stride=n)"], None),
                 runtime=lambda nb: nb // 4, lane=False, grid=(cores, 1, 1)))
    out.append(b("tload_stream", "TLOAD", LANE_SIZES,
                 lambda k: (["t = pto.alloc_local(512)"]
                            + [f"pto.async_load(t + {8 * r}, af, rows=1, cols=8, stride=8)" for r in range(k)], None),
                 lane=False, count="TLOAD"))
    out.append(b("tstore_stream", "TSTORE", LANE_SIZES,
                 lambda k: (["t = pto.alloc_local(8)"]
                            + [f"pto.store(o + {8 * r}, t, rows=1, cols=8, stride=8)" for r in range(k)], None),
                 lane=False, count="TSTORE"))
    for dt in ("float16", "float32"):
        for kk in MMA_K:
            out.append(b(f"mma_chain.{dt}.k={kk}", "MMA", TILE_SIZES,
                         lambda k, dt=dt: ([f"cc = pto.alloc_local(256)\naa = pto.alloc_local(8192, pto.{dt})\n"
                                            f"bb = pto.alloc_local(8192, pto.{dt})"]
                                           + ["pto.mma(cc, aa, bb, 16, 16, n)"] * k, None),
                         runtime=lambda k, kk=kk: kk, lane=False, count="MMA"))
    for op, kind in TILE_OPS.items():
        dt = "float32" if "float32" in load_isa()[op].dtypes else "int32"
        one = "1.0" if dt == "float32" else "1"
        # TSDIVS is pto.tdivs with the scalar first (scalar / tile)
        scalar = f"pto.tdivs(d, {one}, s1, n)" if op == "TSDIVS" else f"pto.{op.lower()}(d, s1, {one}, n)"
        call = {"binary": f"pto.{op.lower()}(d, s1, s2, n)", "unary": f"pto.{op.lower()}(d, s1, n)",
                "scalar": scalar, "fill": f"pto.{op.lower()}(d, {one}, n)",
                "reduce": f"pto.{op.lower()}(d, s1, 16, n)",
                "expand": f"pto.{op.lower()}(s1, d, 16, n)", "col_expand": f"pto.{op.lower()}(s1, d, 16, n)",
                "expand_op": f"pto.{op.lower()}(s1, s2, d, 16, n)",
                "col_reduce": f"pto.{op.lower()}(d, s1, 16, n)"}[kind]
        alloc = (f"d = pto.alloc_local({TILE_ELEMS}, pto.{dt})\ns1 = pto.alloc_local({TILE_ELEMS}, pto.{dt})\n"
                 f"s2 = pto.alloc_local({TILE_ELEMS}, pto.{dt})")
        per = (lambda nb: nb // 64) if kind in ("reduce", "expand", "expand_op", "col_reduce", "col_expand") else (lambda nb: nb // 4)
        for nbytes in TILE_BYTES:
            out.append(b(f"tile_chain.bytes={nbytes}", op, TILE_SIZES,
                         lambda k, call=call, alloc=alloc: ([alloc] + [call] * k, None),
                         runtime=lambda k, nb=nbytes, per=per: per(nb), lane=False, count=op))
    out.append(b("fused_pair.bytes=1024", "TLOAD+MMA", TILE_SIZES,
                 lambda k: (["cc = pto.alloc_local(256)\nxt = pto.alloc_local(256)"]
                            + ["pto.async_load(xt, af, rows=16, cols=16, stride=16)\n"
                               "pto.mma(cc, xt, xt, 16, 16, 16)"] * k, None),
                 lane=False, count="TLOAD"))
    return out


def all_benchmarks(cores=24) -> list:
    """Every microbenchmark, for a machine with ``cores`` cores (the chip-bandwidth sweep uses
    them all)."""
    return (_alu_benches() + _memory_benches() + _sync_benches() + _control_benches()
            + _tile_benches(cores))

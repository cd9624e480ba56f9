"""A seeded differential fuzzer for the two timing engines (timing/model.py under SimPy and
the compiled event loop of exec/compiled/timing.py + timing/fast.py).

test_fast_engine.py runs hand-written kernels and the compiler's random kernels on one or two
small launches of the default machine. Here a generator writes random lane kernels that mix
everything the compiled loop re-implements (HBM loads and stores with ascending, strided,
reversed and all-lanes-one-word addresses, fma stores, L1 phases between block barriers,
warp barriers, divergent if/else, loops with break/continue, early returns, transcendental
ops), launches them on random 1-3 dimensional grids and blocks (partial warps, more blocks
than the machine holds at once) on the default machine, the simple machine and random
variations of it (issue width, cores, warp slots, L1 size, latencies, issue intervals,
bandwidths, sector size, fusion rules), with and without the checks, cycle limits and faults.
Every case runs both engines on private copies of memory and compares everything
(assert_engines_agree); each is seeded, so a failure is reproducible from its test id.
"""
import random
import re
from pathlib import Path

import numpy as np
import pytest

import pypto_sim as pto
from pypto_sim.errors import PtoError
from pypto_sim.runtime.launch import simulation_for
from pypto_sim.runtime.device import current_device
from pypto_sim.timing.block_fit import check_block_fits
from pypto_sim.timing.model import LaunchSimulation
from pypto_sim.timing.records import FIELDS

from engine_compare import assert_engines_agree, tensors
from random_kernels import RandomKernel

ALL_CHECKS = {"racecheck", "initcheck", "synccheck"}
SIMPLE_MACHINE = Path(__file__).parent / "machines" / "simple.toml"


# ---------------------------------------------------------------- the kernel generator
class LaneKernel:
    """Source of a random lane kernel ``kern(a, b, o, n, m)`` for blocks of ``lanes`` lanes.

    a (NA words) and b (NB words) are inputs; o holds S words per lane of the launch (lane
    ``lin`` owns o[lin * S .. lin * S + S - 1]); n is the launch's total lanes, m a small
    uniform trip count. Race-free by construction: a lane writes only its own o words and
    its own L1 word, reads other lanes' L1 words only after a barrier_block() that follows
    their writes, and writes again only after a barrier_block() that follows those reads.
    barrier_block() is only ever reached by every lane of a block (top level, a uniform
    branch or a uniform loop); returns come after the last one.

    racy="l1": one write -> cross-warp read pair is ordered by barrier() only (a RaceError on
    multi-warp blocks); racy="hbm": lanes read a word another lane of another warp writes;
    fault=True: some lanes load past the end of a or of buf (an OutOfBoundsError mid-run);
    sync=0-3: a barrier_block() reached by warp 0 only, by some lanes only, after some lanes
    returned, or warp 1 returns early (a DeadlockError, a SyncCheckError, or barriers that
    pair up differently but complete: barrier_block counts arrivals)."""

    UNARY = ["pto.exp(pto.min({}, 3.0))", "pto.sqrt(abs({}))", "pto.log(abs({}) + 1.0)",
             "pto.rsqrt(abs({}) + 0.5)", "abs({})", "(-{})", "pto.cast(pto.cast({}, pto.int32), pto.float32)"]
    BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (abs({}) + 1.5))", "pto.min({}, {})",
              "pto.max({}, {})", "pto.fma(None, {}, {}, 0.25)", "pto.select({} > {}, x, y)"]

    def __init__(self, seed, lanes, racy=None, fault=False, b16=False, sync=None):
        self.r = random.Random(seed)
        self.lanes = lanes
        self.warps = -(-lanes // 32)
        self.racy, self.fault, self.b16, self.sync = racy, fault, b16, sync
        r = self.r
        self.na, self.nb = r.randint(33, 300), r.randint(1, 97)
        self.slot = 0
        self.loop_id = 0
        self.wrote_l1 = False         # lanes wrote buf since the last barrier_block
        self.read_l1 = False          # lanes read other lanes' buf words since then

    # -- expressions
    def fvar(self):
        return self.r.choice(["x", "y", "z"])

    def index(self, size):
        """An in-bounds index of a tensor of `size` words (ascending, strided, reversed,
        the same word for every lane, per block...)."""
        r = self.r
        k, c = r.randint(2, 9), r.randint(0, 50)
        return r.choice([f"lin % {size}", f"(lin * {k} + {c}) % {size}", f"{size - 1} - lin % {size}",
                         f"{c % size}", f"bid % {size}", f"(lid * {k}) % {size}",
                         f"(lin // {k}) % {size}", f"(lin + {k} * q) % {size}"])

    def load(self):
        if self.r.random() < 0.6:
            return f"pto.load(a + {self.index(self.na)})"
        return f"pto.load(b + {self.index(self.nb)})"

    def fexpr(self, depth=0):
        r = self.r
        if depth > 2 or r.random() < 0.3:
            p = r.random()
            if p < 0.55:
                return self.fvar()
            if p < 0.7:
                return self.load()
            if p < 0.8:
                return "pto.cast(q, pto.float32)"
            return repr(round(r.uniform(-3, 3), 2))
        if r.random() < 0.35:
            return r.choice(self.UNARY).format(self.fexpr(depth + 1))
        return r.choice(self.BINARY).format(self.fexpr(depth + 1), self.fexpr(depth + 1))

    def fx(self, depth=0):
        """A float32 expression (cast when b is float16: a variable keeps one dtype)."""
        e = self.fexpr(depth)
        return f"pto.cast({e}, pto.float32)" if self.b16 else e

    def iexpr(self):
        r = self.r
        return r.choice([f"lin % {r.randint(2, 7)}", f"(lid * {r.randint(1, 5)}) % {r.randint(3, 9)}",
                         f"q % {r.randint(2, 5)}", f"bid % {r.randint(2, 4)}", "m",
                         f"pto.get_lane_id() % {r.randint(2, 6)}", f"pto.get_warp_id() + {r.randint(0, 2)}"])

    def cond(self):
        r = self.r
        c = r.choice([f"{self.fvar()} > {round(r.uniform(-2, 2), 2)}",
                      f"lin % {r.randint(2, 5)} == {r.randint(0, 1)}",
                      f"lid < {r.randint(1, self.lanes)}", f"{self.fvar()} < {self.fvar()}",
                      f"bid % 2 == {r.randint(0, 1)}", f"n > {r.randint(0, 400)}", f"q > {r.randint(0, 5)}",
                      f"pto.get_lane_id() >= {r.randint(0, 31)}"])
        p = r.random()
        if p < 0.15:
            return f"{c} and {self.fvar()} > {round(r.uniform(-1, 1), 2)}"
        if p < 0.25:
            return f"{c} or lin % 3 == 0"
        if p < 0.3:
            return f"not ({c})"
        return c

    # -- statements (lists of lines)
    def own(self, k=None):
        """A word of o that only this lane touches."""
        if k is None:
            self.slot += 1
            k = self.slot
        return f"lin * S + {k}"

    def simple(self, ind):
        r = self.r
        p = r.random()
        v = self.fvar()
        if p < 0.25:
            return [f"{ind}{v} = {self.fx()}"]
        if p < 0.4:
            return [f"{ind}{v} = {v} + {self.load()}"]
        if p < 0.52:
            return [f"{ind}o[{self.own()}] = {self.fx()}"]
        if p < 0.6:
            return [f"{ind}pto.store(o + {self.own()}, {self.fx()})"]
        if p < 0.7:
            return [f"{ind}{v} = pto.fma(o + {self.own()}, {self.fvar()}, {self.fvar()}, {self.fx(2)})"]
        if p < 0.78 and self.slot:        # read back one of this lane's words (maybe not landed yet)
            return [f"{ind}{v} = pto.load(o + {self.own(r.randint(1, self.slot))}) * 0.5 + {v}"]
        if p < 0.86:
            return [f"{ind}q = ({self.iexpr()} + q) % 11"]
        if p < 0.92:
            return [f"{ind}pto.barrier()"]
        return [f"{ind}{v} = pto.select({self.cond()}, {self.fx(1)}, {v})"]

    def block(self, ind, depth, in_loop, may_return):
        return [line for _ in range(self.r.randint(1, 3))
                for line in self.stmt(ind, depth, in_loop, may_return)]

    def stmt(self, ind, depth, in_loop, may_return):
        """Per-lane code: no barrier_block, no L1."""
        r = self.r
        p = r.random() * (0.5 if depth >= 2 else 1)
        inner = ind + "    "
        if p < 0.5:
            return self.simple(ind)
        if p < 0.62:
            lines = [f"{ind}if {self.cond()}:", *self.block(inner, depth + 1, in_loop, may_return)]
            k = r.random()
            if k < 0.25:
                lines += [f"{ind}elif {self.cond()}:", *self.block(inner, depth + 1, in_loop, may_return)]
            if k < 0.6:
                lines += [f"{ind}else:", *self.block(inner, depth + 1, in_loop, may_return)]
            return lines
        if p < 0.7 and in_loop:
            return [f"{ind}if {self.cond()}:", f"{inner}{r.choice(['break', 'continue'])}"]
        if p < 0.74 and may_return:
            return [f"{ind}if {self.cond()}:", f"{inner}o[{self.own()}] = {self.fvar()}", f"{inner}return"]
        self.loop_id += 1
        if p < 0.88:
            k = f"k{self.loop_id}"
            rng = r.choice([f"range({self.iexpr()})", f"range(1, lid % 5 + 1)", "range(m)",
                            f"range(lin % 6, 0, -{r.randint(1, 2)})", f"range({r.randint(1, 3)})"])
            body = self.block(inner, depth + 1, True, may_return)
            return [f"{ind}for {k} in {rng}:", f"{inner}z = z + pto.cast({k}, pto.float32) * 0.25", *body]
        w = f"w{self.loop_id}"
        return [f"{ind}{w} = 0", f"{ind}while {w} < {self.iexpr()} + 1:", f"{inner}{w} += 1",
                *self.block(inner, depth + 1, True, may_return)]

    # -- block-level phases (top level, or a uniform branch / loop)
    def bb(self, ind):
        self.wrote_l1 = self.read_l1 = False
        return [f"{ind}pto.barrier_block()"]

    def l1_write(self, ind):
        lines = self.bb(ind) if self.read_l1 else []
        self.wrote_l1 = True
        p = self.r.random()
        if p < 0.3:
            return lines + [f"{ind}if {self.cond()}:", f"{ind}    pto.store(buf + lid, {self.fx(1)})"]
        if p < 0.45:
            return lines + [f"{ind}pto.fma(buf + lid, {self.fvar()}, {self.fvar()}, {self.fx(2)})"]
        return lines + [f"{ind}pto.store(buf + lid, {self.fx(1)})"]

    def l1_read(self, ind):
        lines = self.bb(ind) if self.wrote_l1 else []
        self.read_l1 = True
        p, c = self.r.choice([1, 3, 5, 7, 31, 33]), self.r.randint(0, 64)
        v = self.fvar()
        return lines + [f"{ind}{v} = {v} + pto.load(buf + (lid * {p} + {c}) % {self.lanes})"]

    def warp_exchange(self, ind):
        """Lanes swap values through L1 inside their warp: barrier() orders that."""
        v = self.fvar()
        k = self.r.randint(1, 31)
        return [f"{ind}pto.store(wbuf + lid, {v})", f"{ind}pto.barrier()",
                f"{ind}{v} = pto.load(wbuf + (lid // 32) * 32 + (lid + {k}) % 32) + {self.fvar()}",
                f"{ind}pto.barrier()"]

    def phase(self, ind):
        r = self.r
        p = r.random()
        if p < 0.3:
            return self.block(ind, 0, False, False)
        if p < 0.5:
            return self.l1_write(ind)
        if p < 0.7:
            return self.l1_read(ind)
        if p < 0.78:
            return self.bb(ind)
        if p < 0.86:
            return self.warp_exchange(ind)
        if p < 0.93:                      # a barrier in a branch the whole block takes or skips
            saved = (self.wrote_l1, self.read_l1)
            lines = [f"{ind}if {r.choice(['bid % 2 == 0', 'n > 100', 'm > 1'])}:",
                     *self.bb(ind + "    "), *self.block(ind + "    ", 1, False, False)]
            self.wrote_l1, self.read_l1 = saved
            return lines
        # a uniform loop of write / barrier / read / barrier rounds
        lines = self.bb(ind) if (self.wrote_l1 or self.read_l1) else []
        self.loop_id += 1
        k = f"r{self.loop_id}"
        inner = ind + "    "
        body = [*self.l1_write(inner), *self.l1_read(inner), *self.bb(inner)]
        return lines + [f"{ind}for {k} in range({r.choice(['m', 'bid % 3', '2'])}):",
                        f"{inner}x = x + pto.cast({k}, pto.float32)", *body]

    def source(self):
        r = self.r
        lines = ["@pto.kernel", "def kern(a, b, o, n: int, m: int):",
                 "    d0 = pto.get_block_dim(0)",
                 "    d1 = pto.get_block_dim(1)",
                 "    lid = pto.get_local_id(0) + pto.get_local_id(1) * d0 + pto.get_local_id(2) * d0 * d1",
                 "    g0 = pto.get_grid_dim(0)",
                 "    bid = pto.get_block_id(0) + pto.get_block_id(1) * g0"
                 " + pto.get_block_id(2) * g0 * pto.get_grid_dim(1)",
                 f"    lin = bid * {self.lanes} + lid",
                 "    q = lin % 7",
                 f"    buf = pto.alloc_local({self.lanes})",
                 f"    wbuf = pto.alloc_local({self.warps * 32})",
                 f"    x = pto.load(a + {self.index(self.na)})",
                 f"    y = {'pto.cast(' if self.b16 else ''}pto.load(b + {self.index(self.nb)})"
                 f"{', pto.float32)' if self.b16 else ''}",
                 "    z = x * 0.5"]
        phases = [self.phase("    ") for _ in range(r.randint(3, 7))]
        # the deliberate bugs go between two top-level phases
        if self.racy == "l1":             # a write and a cross-warp read ordered by barrier() only
            phases.insert(r.randint(0, len(phases)), [
                *self.bb("    "), "    pto.store(buf + lid, x + 1.0)", "    pto.barrier()",
                f"    y = y + pto.load(buf + (lid + 32) % {self.lanes})", *self.bb("    ")])
        if self.racy == "hbm":            # lane lin reads the word lane lin + 32 writes
            phases.insert(r.randint(0, len(phases)), [
                "    o[lin * S] = y", "    x = x + pto.load(o + ((lin + 32) % n) * S)"])
        if self.fault:                    # lanes whose index reaches past a's end (or buf's) fault
            bad = r.choice([f"pto.load(a + (lin * 7) % {self.na + 40})",
                            f"pto.load(buf + (lid * 5) % {self.lanes + 9})"])
            phases.insert(r.randint(0, len(phases)),
                          [*self.bb("    "), f"    y = y + {bad}", *self.bb("    ")])
        if self.sync is not None:         # a barrier_block that not every lane reaches
            bug = [["    if pto.get_warp_id() == 0:", "        pto.barrier_block()"],
                   [f"    if lid < {r.randint(1, self.lanes)}:", "        pto.barrier_block()"],
                   [f"    if lin % {r.randint(2, 4)} == 0:", f"        o[{self.own()}] = x", "        return",
                    "    pto.barrier_block()"],
                   ["    if pto.get_warp_id() == 1:", "        return"]][self.sync]
            phases.insert(r.randint(0, len(phases)), bug)
        body = [line for phase in phases for line in phase]
        lines += body
        lines += self.block("    ", 0, False, True)     # the tail: returns allowed
        lines += [f"    o[{self.own(0)}] = x + y + z"]
        return f"S = {self.slot + 1}\n" + "\n".join(lines) + "\n"


def random_shape(r, max_warps, max_blocks):
    """(grid, block): 1-3 dimensions each, lanes often not a multiple of 32."""
    while True:
        dims = r.choice([1, 1, 2, 3])
        block = [r.randint(1, 48), r.randint(1, 4) if dims > 1 else 1, r.randint(1, 2) if dims > 2 else 1]
        if dims == 1 and r.random() < 0.5:
            block[0] = r.randint(33, 32 * max_warps)
        lanes = block[0] * block[1] * block[2]
        if -(-lanes // 32) <= max_warps:
            break
    gdims = r.choice([1, 2, 3])
    while True:
        grid = [r.randint(1, 12), r.randint(1, 4) if gdims > 1 else 1, r.randint(1, 3) if gdims > 2 else 1]
        if grid[0] * grid[1] * grid[2] <= max_blocks:
            return tuple(grid), tuple(block)


def prepare(make_kernels, seed, grid, block, racy=None, fault=False, init_out=True, b16=None, sync=None):
    """Compile the seed's kernel for this block size and allocate its tensors; returns
    (kernel, args, source). b is float16 (2-byte words: other sector counts) for a third of
    the seeds unless b16 says."""
    lanes = block[0] * block[1] * block[2]
    b16 = seed % 3 == 2 if b16 is None else b16
    gen = LaneKernel(seed, lanes, racy=racy, fault=fault, b16=b16, sync=sync)
    source = gen.source()
    mod = make_kernels(source)
    total = lanes * grid[0] * grid[1] * grid[2]
    rng = np.random.default_rng(seed)
    a, b = tensors(rng.uniform(-3, 3, gen.na).astype(np.float32),
                   rng.uniform(-3, 3, gen.nb).astype(np.float16 if b16 else np.float32))
    if init_out:
        (o,) = tensors(rng.uniform(-1, 1, total * mod.S).astype(np.float32))
    else:
        o = pto.alloc_tensor(total * mod.S * 4)
    return mod.kern, (a, b, o, total, seed % 3), source


def agree(kernel, args, grid, block, source, **kw):
    """assert_engines_agree, with the kernel and launch in the failure message."""
    try:
        return assert_engines_agree(kernel, args, grid, block, **kw)
    except AssertionError as err:
        raise AssertionError(f"{err}\ngrid={grid} block={block} kw={kw}\n{source}") from None


# ---------------------------------------------------------------- machine variations
LANE_INSTRUCTIONS = ["GLOBAL_ID", "LOCAL_ID", "BLOCK_ID", "BLOCK_DIM", "GRID_DIM", "LANE_ID", "WARP_ID",
                     "MOV", "CAST", "SELECT", "ADD", "SUB", "MUL", "DIV", "FLOORDIV", "MOD", "MIN", "MAX",
                     "FMA", "ABS", "NEG", "NOT", "EXP", "LOG", "SQRT", "RSQRT", "LT", "LE", "GT", "GE",
                     "EQ", "NE", "LOAD", "STORE", "FMA_STORE", "LOAD_L1", "STORE_L1", "BARRIER",
                     "BARRIER_BLOCK", "IF", "ELSE", "ENDIF", "LOOP", "BRK_UNLESS", "BREAK", "CONTINUE",
                     "LOOP_CONT", "ENDLOOP", "RET", "EXIT", "ALLOC_LOCAL"]
FUSIONS = [("MUL", "ADD"), ("LOAD", "ADD"), ("ADD", "STORE"), ("LOAD", "FMA_STORE"), ("FMA", "ADD"),
           ("LOAD_L1", "ADD"), ("ADD", "STORE_L1"), ("MUL", "MUL"), ("LOAD", "MUL")]


def _set(text, key, value):
    new, n = re.subn(rf"^{key} = {{ value = [0-9.]+", f"{key} = {{ value = {value}", text, flags=re.M)
    assert n == 1, key
    return new


def _set_instruction(text, name, latency, interval):
    new, n = re.subn(rf"^{name} = {{ latency = \d+, issue_interval = \d+",
                     f"{name} = {{ latency = {latency}, issue_interval = {interval}", text, flags=re.M)
    assert n == 1, name
    return new


def machine_variant(r, path, wpb, block_l1):
    """A random variation of simple.toml written to path: cores, warp slots (>= wpb), issue
    width, L1 size (sometimes only 1-2 blocks fit per core), HBM bandwidths (fractional),
    sector size, the scalar pipe, latencies (>= 1) and issue intervals of random lane
    instructions, and fusion rules (fused latency >= 1). Returns a one-line description."""
    text = SIMPLE_MACHINE.read_text()
    cores = r.randint(1, 3)
    slots = max(wpb, r.choice([2, 4, 8, 12, 16]))
    width = r.choice([1, 1, 2, 3])
    text = _set(text, "cores", cores)
    text = _set(text, "warp_slots_per_core", slots)
    text = _set(text, "issue_width", width)
    l1 = r.choice([524288, block_l1 * r.randint(1, 2) + r.randint(0, 60) * 4])
    text = _set(text, "l1_bytes", l1)
    bws = [round(r.uniform(3, 90), r.choice([0, 1, 3])) for _ in range(3)]
    bws = [max(b, 1.5) for b in bws]
    for key, bw in zip(("hbm_chip_bytes_per_cycle", "hbm_core_read_bytes_per_cycle",
                        "hbm_core_write_bytes_per_cycle"), bws):
        text = _set(text, key, bw)
    text = _set(text, "sector_bytes", r.choice([4, 16, 32, 64, 128]))
    s_lat, s_ii = r.randint(1, 3), r.randint(1, 2)
    text = text.replace("scalar = { count = 1, latency = 1, issue_interval = 1",
                        f"scalar = {{ count = 1, latency = {s_lat}, issue_interval = {s_ii}")
    lat = {}
    for name in r.sample(LANE_INSTRUCTIONS, 14):
        big = name in ("LOAD", "STORE", "FMA_STORE")
        lat[name] = r.randint(10, 160) if big else r.randint(1, 12)
        text = _set_instruction(text, name, lat[name], r.choice([1, 1, 2, 3, 5]))
    fusions = []
    for first, second in r.sample(FUSIONS, r.randint(0, 2)):
        own = lat.get(second) or int(re.search(rf"^{second} = {{ latency = (\d+)", text, re.M).group(1))
        if own > 1:
            saving = r.randint(1, own - 1)
            fusions.append(f"{first}+{second}-{saving}")
            text += (f'\n[[fusion]]\nfirst = "{first}"\nsecond = "{second}"\nsaving = {saving}\n'
                     f'source = "test value"\n')
    path.write_text(text)
    return (f"cores={cores} slots={slots} width={width} l1={l1} bw={bws} scalar={s_lat}/{s_ii} "
            f"lat={lat} fusions={fusions}")


def block_l1_need(kernel, args, block):
    prog = kernel.program_for(args)
    return check_block_fits(prog, block, pto.machine(), kernel.name)


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", range(12))
def test_random_kernels_default_machine(make_kernels, seed):
    """Random kernels on the default machine (24 cores, 32 warp slots): random 1-3
    dimensional grids and blocks, partial last warps, L1 phases, divergent control flow.
    Runs the race, init and sync checks too: the kernels are race-free by construction, so
    both engines must also stay silent (an error would mean a generator or engine bug)."""
    r = random.Random(100 + seed)
    grid, block = random_shape(r, max_warps=6, max_blocks=30)
    kern, args, source = prepare(make_kernels, seed, grid, block)
    checks = ALL_CHECKS if seed % 2 else set()
    slow = agree(kern, args, grid, block, source, checks=checks)
    assert slow["error"] is None, f"{slow['error']}\n{source}"


def test_more_blocks_than_the_default_machine_holds(make_kernels):
    """17-warp blocks (530 lanes, a partial last warp) on a 3-D grid: one per core, 24
    resident on 24 cores, 12 more queue; the later blocks start as others end, on cores
    whose HBM links and the chip's are still busy with other blocks' traffic."""
    grid, block = (4, 3, 3), (53, 10, 1)
    kern, args, source = prepare(make_kernels, 8, grid, block)
    slow = agree(kern, args, grid, block, source)
    assert slow["error"] is None and len(set(slow["records"].block)) == 36


@pytest.mark.parametrize("seed", range(16))
def test_random_kernels_simple_machine(make_kernels, simple_machine, seed):
    """The simple machine (2 cores, 8 warp slots, issue width 1): up to 40 blocks queue for 2
    cores, so resident blocks' warps contend for the one issue port and pipes while blocks
    start and end."""
    r = random.Random(200 + seed)
    grid, block = random_shape(r, max_warps=4, max_blocks=40)
    kern, args, source = prepare(make_kernels, 1000 + seed, grid, block)
    slow = agree(kern, args, grid, block, source, checks=ALL_CHECKS if seed % 3 == 0 else set())
    assert slow["error"] is None, f"{slow['error']}\n{source}"


@pytest.mark.parametrize("seed", range(24))
def test_random_machines(make_kernels, tmp_path, seed):
    """Random variations of simple.toml: 1-3 cores, 2-16 warp slots, issue width 1-3, an L1
    that sometimes fits only one or two blocks per core, fractional HBM bandwidths (the links'
    float arithmetic and its rounding), sector sizes 4-128 bytes, slower scalar pipe, random
    latencies and issue intervals (pipe booking over several cycles) and fusion rules."""
    r = random.Random(300 + seed)
    grid, block = random_shape(r, max_warps=4, max_blocks=24)
    wpb = -(-block[0] * block[1] * block[2] // 32)
    pto.use_machine(SIMPLE_MACHINE)
    kern, args, source = prepare(make_kernels, 2000 + seed, grid, block)
    need = block_l1_need(kern, args, block)
    path = tmp_path / f"variant_{seed}.toml"
    desc = machine_variant(r, path, wpb, need)
    pto.use_machine(path)
    slow = agree(kern, args, grid, block, source + "\n# machine: " + desc,
                 checks=ALL_CHECKS if seed % 2 else set(), record=seed % 5 != 4)
    assert slow["error"] is None, f"{slow['error']}\n{desc}\n{source}"


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("racy", ["l1", "hbm"])
def test_races_are_reported_alike(make_kernels, seed, racy):
    """Deliberately racy kernels under racecheck (+ initcheck, synccheck): an L1 write and a
    cross-warp read ordered only by barrier(), or lanes reading a word a lane of another warp
    writes in HBM. Both engines must raise the same RaceError text (lines, warps, lanes,
    cycles) and land the same stores before it; on the simple machine for odd seeds."""
    r = random.Random(400 + seed)
    if seed % 2:
        pto.use_machine(SIMPLE_MACHINE)
    block = (r.randint(65, 120), 1, 1) if racy == "l1" else (r.randint(40, 100), 1, 1)
    grid = (r.randint(1, 6), r.randint(1, 2), 1)
    kern, args, source = prepare(make_kernels, 3000 + seed, grid, block, racy=racy)
    slow = agree(kern, args, grid, block, source, checks=ALL_CHECKS)
    assert isinstance(slow["error"], pto.RaceError), f"{slow['error']}\n{source}"


@pytest.mark.parametrize("seed", range(8))
def test_uninitialised_output_under_initcheck(make_kernels, seed):
    """o left unwritten by the host: a lane that reads back one of its words before its own
    store has landed (or on a path where it never stored) is an UninitializedReadError whose
    cycle depends on the timing; kernels that always store first run clean. Either way both
    engines must agree."""
    r = random.Random(500 + seed)
    if seed % 2:
        pto.use_machine(SIMPLE_MACHINE)
    grid, block = random_shape(r, max_warps=3, max_blocks=12)
    kern, args, source = prepare(make_kernels, 4000 + seed, grid, block, init_out=False)
    agree(kern, args, grid, block, source, checks={"initcheck"})


@pytest.mark.parametrize("seed", range(8))
def test_out_of_bounds_mid_run(make_kernels, seed):
    """Some lanes load past the end of a somewhere in the middle of a random kernel, while
    other blocks and warps are in flight: the same OutOfBoundsError, and the same stores
    landed (issued before the fault) from both engines."""
    r = random.Random(600 + seed)
    if seed % 2:
        pto.use_machine(SIMPLE_MACHINE)
    grid, block = random_shape(r, max_warps=4, max_blocks=16)
    if block[0] * block[1] * block[2] < 40:
        block = (40 + seed, 1, 1)
    kern, args, source = prepare(make_kernels, 5000 + seed, grid, block, fault=True)
    slow = agree(kern, args, grid, block, source, checks=ALL_CHECKS if seed % 4 == 1 else set())
    assert isinstance(slow["error"], pto.OutOfBoundsError), f"{slow['error']}\n{source}"


# ---------------------------------------------------------------- cycle limits
def run_with_limit(kernel, args, grid, block, engine, max_cycles):
    """One launch on a copy of HBM; records are kept even when the limit stops it."""
    dev = current_device()
    handle = dev.launch(kernel, grid, block, args)
    words = dev.hbm.data.copy()
    sim = simulation_for(dev.queue.pop(), words, dev.hbm.init.copy(), engine=engine,
                         max_cycles=max_cycles)
    try:
        cycles, error = sim.run(), None
    except PtoError as err:
        cycles, error = None, err
    del handle
    return cycles, error, sim.records(), words


@pytest.mark.parametrize("seed", range(6))
def test_cycle_limits_at_event_cycles(make_kernels, simple_machine, seed):
    """max_cycles placed exactly at cycles where events happen (a record's issue or completion
    cycle, the last cycle, one before it) and in the middle: SimPy stops at its URGENT limit
    event, numbered after the slots' first events, so events at the limit cycle run only if
    they are URGENT and older. Same error (or success), memory and, beyond
    assert_engines_agree, the same records up to the stop. Odd seeds run the checks too."""
    r = random.Random(700 + seed)
    grid, block = random_shape(r, max_warps=3, max_blocks=10)
    kern, args, source = prepare(make_kernels, 6000 + seed, grid, block)
    total, _, recs, _ = run_with_limit(kern, args, grid, block, "fast", None)
    assert total is not None
    limits = {total, total - 1, max(1, total // 2),
              int(recs.issue[r.randrange(len(recs))]) or 1, int(recs.complete[r.randrange(len(recs))])}
    for limit in sorted(limits):
        slow = agree(kern, args, grid, block, source, max_cycles=limit,
                     checks=ALL_CHECKS if seed % 2 else set())
        if limit < total:
            assert isinstance(slow["error"], pto.SimulationLimitError), (limit, total, slow["error"])
        s, f = (run_with_limit(kern, args, grid, block, e, limit) for e in ("simpy", "fast"))
        assert len(s[2]) == len(f[2]), (limit, source)
        for name in FIELDS:
            a, b = getattr(s[2], name), getattr(f[2], name)
            assert np.array_equal(a, b), \
                f"limit {limit}: records.{name} differ first at row {np.argmax(a != b)}\n{source}"


@pytest.mark.parametrize("seed", range(8))
def test_broken_block_barriers(make_kernels, seed):
    """A barrier_block() only warp 0 reaches, or only some lanes, or one after some lanes
    returned, or a warp returning early: deadlocks (the same list of waiting warps and lines),
    synccheck errors (partial barrier, a warp ending while others wait) or, without the checks,
    barriers that complete with arrivals from different barrier_block() lines."""
    r = random.Random(800 + seed)
    if seed % 2:
        pto.use_machine(SIMPLE_MACHINE)
    grid, block = random_shape(r, max_warps=4, max_blocks=10)
    if block[0] * block[1] * block[2] <= 32:
        block = (r.randint(33, 128), 1, 1)
    kern, args, source = prepare(make_kernels, 7000 + seed, grid, block, sync=seed % 4)
    checks = [set(), {"synccheck"}, ALL_CHECKS][seed % 3]
    slow = agree(kern, args, grid, block, source, checks=checks)
    if seed % 4 == 0:             # warp 0 alone at a barrier: the others end or wait elsewhere
        assert slow["error"] is not None or source.count("barrier_block") > 1, source


SAME_CYCLE_FAULTS = """
@pto.kernel
def kern(a, o):
    i = pto.get_local_id()
    j = 63 - i
    o[i] = 1.0
    x = pto.load(a + j)
    o[i] = x
"""


@pytest.mark.parametrize("width,grid", [(1, 4), (3, 1), (3, 4), (3, 7)])
def test_faults_in_the_same_cycle(make_kernels, tmp_path, monkeypatch, width, grid):
    """Two-warp blocks where warp 1's STORE (o has 32 words) and warp 0's LOAD (a[63 - i])
    fault: with issue width 3 both in the same cycle, and on 3 cores several blocks in the
    same cycle. SimPy propagates each failure warp -> all_of -> block -> slot one event at a
    time; a second failure in a block whose all_of already failed is raised at once. Both
    engines must name the same block, warp and lane, and land the same stores. A spy on
    SimPy's faults checks that the case really has simultaneous faults (with 7 blocks, block
    0 shares core 0 with block 3 and only blocks of different cores coincide)."""
    path = tmp_path / "faults.toml"
    path.write_text(_set(_set(SIMPLE_MACHINE.read_text(), "cores", 3), "issue_width", width))
    pto.use_machine(path)
    seen = []
    original = LaunchSimulation._oob

    def spy(self, pc, blk, w, info):
        if self.engine_used == "simpy":
            seen.append((int(self.env.now), blk.id, w))
        return original(self, pc, blk, w, info)

    monkeypatch.setattr(LaunchSimulation, "_oob", spy)
    kern = make_kernels(SAME_CYCLE_FAULTS).kern
    a, o = tensors(np.zeros(32, np.float32), np.zeros(32, np.float32))
    slow = assert_engines_agree(kern, (a, o), (grid, 1, 1), (64, 1, 1))
    assert isinstance(slow["error"], pto.OutOfBoundsError)
    cycles = [c for c, _, _ in seen]
    assert len(seen) >= 2 and len(set(cycles)) < len(cycles), seen
    if width == 3 and grid < 7:      # two warps of one block in one cycle
        assert len({(c, b) for c, b, _ in seen}) < len(seen), seen


@pytest.mark.parametrize("seed", range(6))
def test_compiler_random_kernels_on_random_machines(make_kernels, tmp_path, seed):
    """The compiler tests' random int32 kernels (helpers, nested loops, and/or, per-lane
    returns inside loops) on several blocks of odd sizes, on random variations of the simple
    machine."""
    r = random.Random(900 + seed)
    source = RandomKernel(5000 + seed).source()
    mod = make_kernels(source)
    lanes, blocks = r.randint(1, 100), r.randint(1, 9)
    out = pto.alloc_tensor(lanes * blocks * mod.S * 4, dtype=pto.int32)
    pto.memcpy_h2d(out, np.zeros(lanes * blocks * mod.S, np.int32))
    a = pto.alloc_tensor(16 * 4, dtype=pto.int32)
    pto.memcpy_h2d(a, np.random.default_rng(seed).integers(-5, 6, 16).astype(np.int32))
    args = (out, a, seed % 7 - 2)
    pto.use_machine(SIMPLE_MACHINE)
    need = block_l1_need(mod.kern, args, (lanes, 1, 1))
    path = tmp_path / f"variant_{seed}.toml"
    desc = machine_variant(r, path, -(-lanes // 32), need)
    pto.use_machine(path)
    slow = agree(mod.kern, args, (blocks, 1, 1), (lanes, 1, 1), source + "\n# machine: " + desc,
                 checks=ALL_CHECKS if seed % 2 else set())
    assert slow["error"] is None, slow["error"]


@pytest.mark.parametrize("seed", range(4))
def test_engine_stops_and_grows_often(make_kernels, tmp_path, monkeypatch, seed):
    """The compiled loop returns to Python every few events (progress) and whenever a buffer
    is full; here every 1-13 events and with every buffer starting tiny (heap, commits,
    record rows, booking table), on random kernels and machine variations, checks on: a
    state kept in a local variable across calls, or a buffer grown while an event was half
    done, would show."""
    from pypto_sim.timing import fast
    r = random.Random(1100 + seed)
    monkeypatch.setattr(fast, "EVENTS_PER_CALL", r.randint(1, 13))
    monkeypatch.setattr(fast, "initial_sizes",
                        lambda warps, room, slots: dict(heap=3 * 8 + 9, commits=10, rows=3,
                                                        table=1 << max(4, (4 * room).bit_length())))
    grid, block = random_shape(r, max_warps=4, max_blocks=12)
    wpb = -(-block[0] * block[1] * block[2] // 32)
    pto.use_machine(SIMPLE_MACHINE)
    kern, args, source = prepare(make_kernels, 8000 + seed, grid, block)
    path = tmp_path / f"variant_{seed}.toml"
    machine_variant(r, path, wpb, block_l1_need(kern, args, block))
    pto.use_machine(path)
    slow = agree(kern, args, grid, block, source, checks=ALL_CHECKS)
    assert slow["error"] is None, slow["error"]

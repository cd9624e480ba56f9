"""The IR of a compiled kernel and its encoding into numpy arrays for the executors.

Register space: each warp has ``n_lane_slots`` per-lane registers (one L1 word per lane each,
printed ``v0, v1, ...``) followed by ``n_scalar_regs`` uniform registers (the scalar unit's
GPRs, printed ``s0, s1, ...``). In the encoding both live in one (n_regs, 32) array; a uniform
register holds the same value in every lane.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import DType, word_of
from ..isa import load_isa

# an instruction's value operands at most (TPARTARGMAX's 18: six tiles, two regions and the six
# tiles' row pitches, isa/51_partial_arg.toml)
MAX_SRCS = 18
AUX_WIDTH = 3
# An ALU instruction's first aux word, its semantics ("int_sem"): the ISA table's float
# expression on float64 words (0), its int expression on int64 numbers whose result wraps to
# int32 (1), or on int64 values (their words' bits, dtypes.word_of) wrapping to int64 (2). A
# CAST's says how its source word holds its value (2: an int64's bits).
INT_SEM_FLOAT, INT_SEM_INT32, INT_SEM_INT64 = 0, 1, 2
UNIT_NAMES = ("AIC", "AIV0", "AIV1")      # an AI core's units, by index (Program.unit_entry)
# the instructions whose aux words are jump targets (absolute pcs)
JUMP_OPS = ("IF", "ELSE", "LOOP", "ENDLOOP")


def block_coords(block_id: int, grid) -> tuple:
    """The (x, y, z) of block block_id in a launch's grid (gx, gy, gz): x varies fastest."""
    gx, gy, _ = grid
    return block_id % gx, (block_id // gx) % gy, block_id // (gx * gy)


def int_sem_of(dtype: DType) -> int:
    """The int_sem an ALU instruction on operands of dtype computes with."""
    if dtype.is_float:
        return INT_SEM_FLOAT
    return INT_SEM_INT64 if dtype.name == "int64" else INT_SEM_INT32


@dataclass(frozen=True)
class Reg:
    """A register: its index in its file, dtype, and whether it is uniform (scalar file)."""

    index: int
    dtype: DType
    uniform: bool

    def __str__(self):
        return f"{'s' if self.uniform else 'v'}{self.index}"


@dataclass(frozen=True)
class Imm:
    """An immediate operand; a typed tile's base word also names the tile (its buffer index),
    since a view (treshape, tsubview) shares its words with the tile it views."""

    value: float
    dtype: DType
    tile: int = field(default=-1, compare=False)

    def __str__(self):
        if self.dtype.is_float:
            return repr(float(self.value))
        return str(int(self.value))


@dataclass
class Instr:
    """One PTO instruction in a kernel, with the source line it came from."""

    op: str
    dst: Reg | None = None
    srcs: tuple = ()
    dtype: DType | None = None
    aux: tuple = ()
    line: int = 0
    comment: str = ""

    @property
    def wide(self) -> bool:
        """Whether it computes on 64-bit values (a float64 or int64 result or operand): a
        machine table's latency_64 / issue_interval_64 price it."""
        values = (self.dst, *self.srcs)
        return (self.dtype is not None and self.dtype.itemsize == 8) or any(
            getattr(getattr(v, "dtype", None), "itemsize", 0) == 8 for v in values)

    @property
    def uniform(self) -> bool:
        """True when every register operand is uniform: the scalar unit computes it once."""
        regs = [s for s in self.srcs if isinstance(s, Reg)]
        if self.dst is not None and not self.dst.uniform:
            return False
        return all(r.uniform for r in regs)


@dataclass(frozen=True)
class ArgSpec:
    """A kernel parameter as specialised for one launch signature."""

    name: str
    kind: str            # "tensor", "scalar", or "const" (a scalar compiled in as its value)
    dtype: DType
    slot: int            # tensor: index into the launch's tensor table; scalar: register index
    reg: Reg | None = None
    value: object = None  # "const": the value this Program was specialised for


@dataclass(frozen=True)
class LocalBuffer:
    """A block-scoped L1 buffer from alloc_local: word offset in the block's L1 area and size."""

    name: str
    offset: int
    count: int
    dtype: DType
    line: int
    copies: int = 1      # pipeline buffers: one copy per iteration in flight
    space: str = "L1"    # typed tiles: Vec, Mat, Left, Right, Acc or Bias (docs/aicore.md)
    rows: int = 0        # typed tiles: the static shape (row pitch = cols)
    cols: int = 0
    # a view of another tile (pto.treshape, pto.tsubview): the index of the buffer that owns
    # its words, and its row pitch when that is not cols (a window narrower than its tile)
    alias_of: int = -1
    pitch: int = 0

    @property
    def words(self) -> int:
        return self.count * self.copies

    @property
    def owns_memory(self) -> bool:
        """False for a view: its words belong to the tile it views and count once, there."""
        return self.alias_of < 0

    @property
    def row_pitch(self) -> int:
        """Words from one row of the tile to the next."""
        return self.pitch or self.cols

    def element_words(self) -> np.ndarray:
        """The word of each element relative to offset, row by row (a view may skip words)."""
        if self.row_pitch == self.cols or self.rows == 0:
            return np.arange(self.count)
        return (np.arange(self.rows)[:, None] * self.row_pitch + np.arange(self.cols)).ravel()

    @property
    def nbytes(self) -> int:
        return self.words * self.dtype.itemsize


@dataclass
class Program:
    """A kernel compiled for one argument signature."""

    kernel: str
    file: str
    first_line: int
    args: tuple
    instrs: list = field(default_factory=list)
    n_lane_slots: int = 0
    # of those, the ones holding float64 / int64: each takes two lane_slot_bytes words of L1
    n_wide_lane_slots: int = 0
    n_scalar_regs: int = 0
    buffers: tuple = ()
    source_lines: dict = field(default_factory=dict)
    # kernel variable name -> the register holding it (top-level scope, for the debugger)
    symbols: dict = field(default_factory=dict)
    # the real AI core (docs/aicore.md): one block = one AI core of 1 AIC + 2 AIV, each a
    # scalar unit that issues into its own pipes; sync "auto" (ordered by data) or "manual"
    aicore: bool = False
    sync: str = "auto"
    # an AI-core kernel: each unit's own program (frontend/aicore_units.py), the first pc of
    # the AIC's, AIV0's and AIV1's (-1: the unit does not run; AIV1 may share AIV0's). The
    # programs follow each other in instrs, each ending in EXIT; they reuse register numbers
    # (each unit has its own registers), and symbols are the last program's.
    unit_entry: tuple = ()

    @property
    def aiv_ratio(self) -> int:
        """The AIVs an AIC's cross-core flags pair with (FFTS mode 2): 2, or 1 when AIV1 runs no
        program (a 1:1 kernel, @pto.kernel(aiv_ratio=1), or vector code without sections)."""
        return 1 if len(self.unit_entry) > 2 and self.unit_entry[2] < 0 else 2

    def cross_partners(self, unit: int) -> tuple:
        """The units a cross-core flag of `unit` signals, and a wait of it takes one signal from
        each of: the AIC's AIVs for the AIC, the AIC for an AIV (exec/compiled/aicore_sync.py
        cross_pairs, the compiled form)."""
        return tuple(range(1, self.aiv_ratio + 1)) if unit == 0 else (0,)

    @property
    def local_words(self) -> int:
        """L1 words of alloc_local buffers per block."""
        return sum(b.words for b in self.buffers if b.owns_memory)

    @property
    def local_bytes(self) -> int:
        """L1 bytes of alloc_local buffers per block."""
        return sum(b.nbytes for b in self.buffers if b.owns_memory)

    def encode(self) -> "EncodedProgram":
        """Encode to the flat numpy arrays that the executors and the timing model read."""
        return EncodedProgram.from_program(self)


# Columns of EncodedProgram.code (one int64 row per instruction).
C_OP, C_DST, C_SRC, C_DTYPE, C_AUX, C_UNIFORM, C_LINE = 0, 1, 2, 2 + MAX_SRCS, 3 + MAX_SRCS, 3 + MAX_SRCS + AUX_WIDTH, 4 + MAX_SRCS + AUX_WIDTH
N_COLS = C_LINE + 1


@dataclass
class EncodedProgram:
    """A Program as two arrays: ``code`` (int64, one row per instruction, columns C_*) and
    ``imm`` (float64 immediates, one column per source). Register numbers are flat: lane slots
    first, then the scalar registers. A source register of -1 means "use the immediate".
    """

    code: np.ndarray
    imm: np.ndarray
    n_regs: int
    n_lane_slots: int

    @property
    def op(self):
        return self.code[:, C_OP]

    @property
    def line(self):
        return self.code[:, C_LINE]

    def __len__(self):
        return self.code.shape[0]

    @classmethod
    def from_program(cls, prog: Program) -> "EncodedProgram":
        isa = load_isa()
        n = len(prog.instrs)
        code = np.zeros((n, N_COLS), np.int64)
        code[:, C_DST] = -1
        code[:, C_SRC:C_SRC + MAX_SRCS] = -1
        imm = np.zeros((n, MAX_SRCS), np.float64)
        nv = prog.n_lane_slots

        def flat(reg: Reg) -> int:
            return reg.index + nv if reg.uniform else reg.index

        for i, ins in enumerate(prog.instrs):
            code[i, C_OP] = isa[ins.op].opcode
            if ins.dst is not None:
                code[i, C_DST] = flat(ins.dst)
            for j, s in enumerate(ins.srcs):
                if isinstance(s, Reg):
                    code[i, C_SRC + j] = flat(s)
                else:
                    imm[i, j] = word_of(s.value, s.dtype)
            code[i, C_DTYPE] = ins.dtype.code if ins.dtype is not None else 0
            for j, a in enumerate(ins.aux):
                code[i, C_AUX + j] = a
            code[i, C_UNIFORM] = 1 if ins.uniform else 0
            code[i, C_LINE] = ins.line
        return cls(code, imm, nv + prog.n_scalar_regs, nv)


def register_sources(code) -> np.ndarray:
    """The source-register columns of encoded code, trimmed to the widest any instruction uses
    (at least one), as int64: the compiled scoreboards loop over them for every issue, and most
    programs' registers fill a few of MAX_SRCS's columns."""
    srcs = code[:, C_SRC:C_SRC + MAX_SRCS]
    used = np.nonzero((srcs >= 0).any(axis=0))[0]
    return srcs[:, :max(1, int(used[-1]) + 1 if len(used) else 1)].astype(np.int64).copy()

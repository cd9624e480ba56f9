"""Lowering of the memory and synchronisation builtins: load, store, fma, alloc_local, barriers.

The builtins' lowerings are functions of the compiler ``comp`` registered in registry.py's
LOWERINGS; the helpers they and the compiler share (require_ptr, store_to, local arrays) are a
mixin of :class:`pypto_sim.frontend.codegen.KernelCompiler`.
"""
from __future__ import annotations

import dataclasses

from .. import dtypes
from ..ir import LocalBuffer, Reg
from ..ir.program import int_sem_of
from .builtin_checks import lane_tiles_only
from .registry import LOWERINGS
from .scalar_memory_builtins import scalar_load, scalar_store
from .values import NONE, Const, DTypeRef, LocalArray, Ptr, Val


class MemoryOperands:
    """Pointers, lane stores and local arrays in the kernel compiler (a mixin), shared by the
    registered memory lowerings and the compiler's assignments."""

    def require_ptr(self, value, node, what):
        if not isinstance(value, Ptr):
            self.error(node, f"{what} must be a pointer (a tensor argument or alloc_local buffer "
                             f"plus an offset), got {type(value).__name__}",
                       "write e.g. pto.load(a + i) where a is a device tensor argument")
        return value

    def memory_aux(self, ptr: Ptr) -> tuple:
        return (ptr.slot,) if ptr.space == "hbm" else (ptr.base, self.buffers[ptr.slot].words)


    def int32_index(self, v, node):
        """An element offset as the int32 that addresses take: an int64 value (numba's
        everyday index type) is clamped to int32's range, then converted, so an index past
        int32 stays out of bounds (memcheck names it) instead of wrapping into a valid one."""
        if isinstance(v, Val) and v.dtype == dtypes.int64:
            v = self.alu("MAX", [v, Const(-2**31, dtypes.int64, weak=False)], node)
            v = self.alu("MIN", [v, Const(2**31 - 1, dtypes.int64, weak=False)], node)
            return self.cast(v, dtypes.int32, node)
        return v

    def compute_dtype(self, ptr: Ptr, node, what):
        """The register dtype a tensor's elements are computed in: the dtype itself, int32 for
        int8 / uint8 / int16 / uint16, float32 for bfloat16 (dtypes.DType.compute); a dtype no
        unit computes is an error."""
        dt = ptr.dtype.compute_dtype
        if ptr.dtype in dtypes.MINIFLOATS:
            self.error(node, f"{what}: '{ptr.name}' holds {ptr.dtype}, which {dtypes.a5_only(ptr.dtype)}",
                       "read its values on the host (memcpy_d2h into a float32 array) and pass "
                       "a float32 tensor")
        if dt is None:
            self.error(node, f"{what}: '{ptr.name}' holds {ptr.dtype}, which no unit of the AI core "
                             f"computes (its vector and scalar units work on float32, float16, "
                             f"bfloat16 and 8 to 32-bit integers)",
                       "convert on the host (e.g. array.astype(np.float32)) and pass a float32 or "
                       "int32 tensor")
        return dt


    def store_to(self, ptr: Ptr, value, node):
        if self.is_aicore:              # the AI core's scalar unit (scalar_memory_builtins.py)
            scalar_store(self, ptr, value, node)
            return
        self.require_value(value, node)
        offset = self.operand(ptr.offset, dtypes.int32, node)
        # the value in the compute dtype; the STORE rounds (bfloat16) or wraps (int8 ...) it
        src = self.operand(value, self.compute_dtype(ptr, node, "pto.store"), node)
        op = "STORE" if ptr.space == "hbm" else "STORE_L1"
        self.emit(op, None, (offset, src), ptr.dtype, node, aux=self.memory_aux(ptr))
        self.instrs[-1].comment = ptr.name


    # ---------------------------------------------------------------- per-lane local arrays

    def local_element(self, arr: LocalArray, index, node):
        """arr[index] read: a copy of the slot for a constant index, else a LOCAL_LOAD."""
        if isinstance(index, Const):
            k = self._local_index(arr, index, node)
            dst = self.new_reg(arr.dtype, False)
            self.emit("MOV", dst, (Reg(arr.first.index + k, arr.dtype, False),), arr.dtype, node,
                      aux=(int_sem_of(arr.dtype),))
            return Val(dst)
        self.require_value(index, node)
        dst = self.new_reg(arr.dtype, False)
        at = self.operand(self.int32_index(index, node), dtypes.int32, node)
        self.emit("LOCAL_LOAD", dst, (at,), arr.dtype,
                  node, aux=(arr.first.index, arr.n))
        self.instrs[-1].comment = arr.name
        return Val(dst)

    def local_assign(self, arr: LocalArray, index, value, node):
        """arr[index] = value: a MOV into the slot for a constant index, else a LOCAL_STORE."""
        self.require_value(value, node)
        src = self.operand(value, arr.dtype, node)
        if isinstance(index, Const):
            k = self._local_index(arr, index, node)
            self.emit("MOV", Reg(arr.first.index + k, arr.dtype, False), (src,), arr.dtype, node,
                      aux=(int_sem_of(arr.dtype),))
            return
        self.require_value(index, node)
        at = self.operand(self.int32_index(index, node), dtypes.int32, node)
        self.emit("LOCAL_STORE", None, (at, src), arr.dtype,
                  node, aux=(arr.first.index, arr.n))
        self.instrs[-1].comment = arr.name

    def _local_index(self, arr, index, node):
        k = int(index.value)
        if not 0 <= k < arr.n:
            self.error(node, f"index {k} is outside the local array '{arr.name}' of {arr.n} elements")
        return k

    def rename_buffer(self, ptr: Ptr, name: str) -> Ptr:
        """Give an alloc_local buffer the name of the variable it is assigned to."""
        if ptr.space != "l1" or not ptr.name.startswith("local"):
            return ptr
        buf = self.buffers[ptr.slot]
        self.buffers[ptr.slot] = dataclasses.replace(buf, name=name)
        for ins in self.instrs:
            if ins.op == "ALLOC_LOCAL" and ins.aux == (buf.offset, buf.words):
                ins.comment = ins.comment.replace(buf.name, name, 1)
        return dataclasses.replace(ptr, name=name)

    # ---------------------------------------------------------------- atomics
    def _atomic(self, kind, node, args):
        ptr = self.require_ptr(args["ptr"], node, f"pto.atomic_{kind}(ptr, ...): ptr")
        if ptr.dtype not in dtypes.TILE_DTYPES + (dtypes.uint32, dtypes.float64, dtypes.int64):
            self.error(node, f"pto.atomic_{kind}: '{ptr.name}' holds {ptr.dtype}; atomics work on "
                             "float32, float16, int32, uint32, float64 and int64 elements",
                       "keep the counters or accumulators in a float32 or int32 tensor")
        values = [args["compare"], args["value"]] if kind == "cas" else [args["value"]]
        for v in values:
            self.require_value(v, node)
        op = {"add": "ATOM_ADD", "max": "ATOM_MAX", "min": "ATOM_MIN", "exchange": "ATOM_EXCH",
              "cas": "ATOM_CAS"}[kind] + ("" if ptr.space == "hbm" else "_L1")
        offset = self.operand(ptr.offset, dtypes.int32, node)
        ops = (offset,) + tuple(self.operand(v, ptr.dtype, node) for v in values)
        dst = self.new_reg(ptr.dtype, False)           # each lane gets its own old value
        aux = (ptr.slot, 0, 1) if ptr.space == "hbm" else (ptr.base, self.buffers[ptr.slot].words, 0)
        self.emit(op, dst, ops, ptr.dtype, node, aux=aux)
        self.instrs[-1].comment = ptr.name
        return Val(dst)


    def _voting_barrier(self, op, node, args, result):
        pred = self.truth(args["pred"], node)
        src = self.operand(pred, dtypes.bool_, node)
        dst = self.new_reg(result, not isinstance(src, Reg) or src.uniform)
        self.emit(op, dst, (src,), result, node)
        return Val(dst)


@LOWERINGS.lowering("cast")
def lower_cast(comp, node, args):
    """pto.cast(x, dtype): x converted to dtype (CAST); the dtypes no lane value converts to
    (A5's minifloats, bfloat16) are refused here, with what to do."""
    target = args["dtype"]
    if not isinstance(target, DTypeRef):
        comp.error(node, "pto.cast(x, dtype): dtype must be pto.float32, pto.float16, pto.int32, "
                         "pto.uint32 or pto.bool_")
    comp.require_value(args["x"], node)
    if target.dtype in dtypes.MINIFLOATS:
        comp.error(node, f"pto.cast: {target.dtype} {dtypes.a5_only(target.dtype)}",
                   "compute in float32 or float16; the host rounds float32 values to the "
                   "format when it copies them into such a tensor (memcpy_h2d)")
    converts = comp.isa["CAST"].dtypes
    if not isinstance(args["x"], Const) and target.dtype.name not in converts:
        comp.error(node, f"pto.cast: a lane value does not convert to {target.dtype} (CAST "
                         f"converts to {', '.join(converts)})",
                   "cast to float32 and store it to a tensor of that dtype (a store rounds)")
    return comp.cast(args["x"], target.dtype, node)


@LOWERINGS.lowering("load")
def lower_load(comp, node, args):
    ptr = comp.require_ptr(args["ptr"], node, "pto.load(ptr): ptr")
    if comp.is_aicore:                  # the AI core's scalar unit (scalar_memory_builtins.py)
        return scalar_load(comp, ptr, node)
    offset = comp.operand(ptr.offset, dtypes.int32, node)
    uniform = not isinstance(offset, Reg) or offset.uniform
    # the LOAD's dtype is the memory's (bytes moved); its register holds the compute dtype
    dst = comp.new_reg(comp.compute_dtype(ptr, node, "pto.load"), uniform)
    op = "LOAD" if ptr.space == "hbm" else "LOAD_L1"
    comp.emit(op, dst, (offset,), ptr.dtype, node, aux=comp.memory_aux(ptr))
    comp.instrs[-1].comment = ptr.name
    return Val(dst)


def lower_lane_store(comp, node, args):
    """pto.store(ptr, value), one value a lane (tile_builtins.lower_store, pto.store's lowering,
    takes the tile form and passes the lane form here)."""
    ptr = comp.require_ptr(args["ptr"], node, "pto.store(ptr, value): ptr")
    comp.store_to(ptr, args["value"], node)


@LOWERINGS.lowering("fma")
def lower_fma(comp, node, args):
    x, y, z = args["x"], args["y"], args["z"]
    for v in (x, y, z):
        comp.require_value(v, node)
    dst = args["dst"]
    if dst is NONE or dst is None:
        return comp.alu("FMA", [x, y, z], node)
    ptr = comp.require_ptr(dst, node, "pto.fma(dst, x, y, z): dst")
    if ptr.space != "hbm" or ptr.dtype not in (dtypes.float32, dtypes.float16, dtypes.int32, dtypes.uint32):
        # L1, and narrow memory dtypes and bool: the FMA in registers, then a store
        value = comp.alu("FMA", [x, y, z], node)
        comp.store_to(ptr, value, node)
        return value
    dtype = ptr.dtype
    offset = comp.operand(ptr.offset, dtypes.int32, node)
    ops = (offset,) + tuple(comp.operand(v, dtype, node) for v in (x, y, z))
    out = comp.new_reg(dtype, False)
    comp.emit("FMA_STORE", out, ops, dtype, node, aux=(ptr.slot, int_sem_of(dtype)))
    comp.instrs[-1].comment = ptr.name
    return Val(out)


@LOWERINGS.lowering("alloc_local", checks=(lane_tiles_only,))
def lower_alloc_local(comp, node, args):
    n = args["n_elems"]
    comp.int_constant(n, node, "pto.alloc_local: n_elems")      # a float (16.0 too) is refused
    if not isinstance(n, Const) or isinstance(n.value, bool) or int(n.value) != n.value or int(n.value) <= 0:
        comp.error(node, "pto.alloc_local(n_elems): n_elems must be a positive integer known "
                         "at compile time", "use a literal, a module constant or a constant expression")
    dtype = args["dtype"]
    if isinstance(dtype, DTypeRef):
        dtype = dtype.dtype
    if dtype in dtypes.MINIFLOATS:
        comp.error(node, f"pto.alloc_local: {dtype} {dtypes.a5_only(dtype)}")
    if dtype not in dtypes.TILE_DTYPES + (dtypes.uint32, dtypes.float64, dtypes.int64):
        comp.error(node, f"pto.alloc_local: dtype must be one of float32, float16, int32, uint32, "
                         f"float64, int64, got {dtype}",
                   "L1 buffers hold what the core computes; keep int8 / bfloat16 data in HBM "
                   "tensors (loads widen it to int32 / float32)")
    count = int(n.value)
    copies, offset = comp.buffer_copies(count, node)
    base = sum(b.words for b in comp.buffers if b.owns_memory)
    name = f"local{len(comp.buffers)}"
    line = getattr(node, "lineno", 0) + comp.kernel.line_offset
    comp.buffers.append(LocalBuffer(name, base, count, dtype, line, copies))
    comp.emit("ALLOC_LOCAL", None, (), dtype, node, aux=(base, count * copies))
    shape = f"{copies} x {count}" if copies > 1 else f"{count}"
    comp.instrs[-1].comment = f"{name}: {shape} x {dtype} at L1 word {base}"
    return Ptr("l1", len(comp.buffers) - 1, dtype, name, offset, count, base)


@LOWERINGS.lowering("local_array")
def lower_local_array(comp, node, args):
    n, dtype = args["n"], args["dtype"]
    comp.int_constant(n, node, "pto.local_array: n")
    if not isinstance(n, Const) or isinstance(n.value, bool) or int(n.value) != n.value or int(n.value) <= 0:
        comp.error(node, "pto.local_array(n): n must be a positive integer known at compile time",
                   "use a literal, a module constant or a size-deciding kernel argument")
    dtype = dtype.dtype if isinstance(dtype, DTypeRef) else dtype
    if dtype in dtypes.MINIFLOATS:
        comp.error(node, f"pto.local_array: {dtype} {dtypes.a5_only(dtype)}")
    if dtype not in dtypes.REGISTER_DTYPES:
        comp.error(node, f"pto.local_array: dtype must be one of "
                         f"{', '.join(d.name for d in dtypes.REGISTER_DTYPES)}, got {dtype}")
    count = int(n.value)
    first = comp.new_reg(dtype, False)
    for _ in range(count - 1):
        comp.new_reg(dtype, False)                 # consecutive lane slots
    comp.emit("LOCAL_ARRAY", None, (), dtype, node, aux=(first.index, count))
    comp.instrs[-1].comment = f"v{first.index}..v{first.index + count - 1}"
    return LocalArray(first, count, dtype, "local_array")


@LOWERINGS.lowering("atomic_add", "atomic_max", "atomic_min", "atomic_exchange", "atomic_cas", per_builtin=True)
def lower_atomic(comp, node, args, builtin):
    return comp._atomic(builtin.name.removeprefix("atomic_"), node, args)


@LOWERINGS.lowering("fence")
def lower_fence(comp, node, args):
    comp.emit("FENCE", None, (), None, node)


@LOWERINGS.lowering("barrier_block")
def lower_barrier_block(comp, node, args):
    comp.emit("BARRIER_BLOCK", None, (), None, node)


@LOWERINGS.lowering("barrier_block_count")
def lower_barrier_block_count(comp, node, args):
    return comp._voting_barrier("BARRIER_BLOCK_COUNT", node, args, dtypes.int32)


@LOWERINGS.lowering("barrier_block_and")
def lower_barrier_block_and(comp, node, args):
    return comp._voting_barrier("BARRIER_BLOCK_AND", node, args, dtypes.bool_)


@LOWERINGS.lowering("barrier_block_or")
def lower_barrier_block_or(comp, node, args):
    return comp._voting_barrier("BARRIER_BLOCK_OR", node, args, dtypes.bool_)

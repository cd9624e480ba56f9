"""The vendor's theoretical parallelism of vector instructions as machine-table data (a table's
[peaks]): the most elements one instruction can process a cycle, by instruction and dtype.
A vector op's cycles a repeat are at least its repeat's elements / peak (``per_repeat``: a
256-byte repeat of float16 holds twice the elements of one of float32, so an entry measured on
float32 cannot price float16 below the hardware's rate): ``per_repeat``, and ``vector_cycles``
priced with it, are the repeat costs the AI core's tables and the article's tiles use. A
[formulas] row cannot be raised so, and ``violations`` lists those (and any other cost) that
beat the peak.

    [peaks]
    source = "..."                                   # where the numbers come from
    OP = { float32 = 64, float16 = 128, api = "Add" }     # elements a cycle, by dtype
    OP = { float32 = 2, element_bytes = 8, api = "MrgSort" }  # an element of 8 bytes

An element is one value of the dtype unless ``element_bytes`` says otherwise (MrgSort's
8-byte (value, index) structures).
"""
from __future__ import annotations

import math

from ..errors import MachineError
from .. import dtypes

NON_DTYPE_KEYS = ("api", "element_bytes")


def parse(path, section: dict, isa) -> dict:
    """Validate a table's [peaks]; return {"source": str, "ops": {OP: {"dtypes": {dtype: peak},
    "element_bytes": int or None, "api": str}}} ({} when the table has none)."""
    if not section:
        return {}
    where = f"{path}: [peaks]"
    source = section.get("source")
    if not isinstance(source, str) or not source.strip():
        raise MachineError(f"{where} needs source = \"...\" (where the peaks come from)")
    ops = {}
    for op, entry in section.items():
        if op == "source":
            continue
        if op not in isa.by_name:
            raise MachineError(f"{where} {op}: no such instruction", hint="see pto.instructions()")
        if not isinstance(entry, dict):
            raise MachineError(f"{where} {op} must be {{ dtype = elements a cycle, ..., api = \"...\" }}")
        peaks = {}
        for key, value in entry.items():
            if key in NON_DTYPE_KEYS:
                continue
            if key not in dtypes.BY_NAME:
                raise MachineError(f"{where} {op}: {key!r} is not a dtype (or one of {NON_DTYPE_KEYS})")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                    or value <= 0:
                raise MachineError(f"{where} {op}: {key} = {value!r} must be a positive number of elements a cycle")
            peaks[key] = float(value)
        size = entry.get("element_bytes")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise MachineError(f"{where} {op}: element_bytes = {size!r} must be a positive integer")
        ops[op] = {"dtypes": peaks, "element_bytes": size, "api": str(entry.get("api", ""))}
    return {"source": source, "ops": ops}


def per_repeat(machine, name: str, dtype: str) -> float:
    """Cycles a repeat of vector op ``name`` on ``dtype``: the table's per_repeat, raised to the
    repeat's elements / the [peaks] parallelism where the table gives one for (name, dtype)."""
    extra = machine.instructions[name].extra
    cycles = float(extra.get("per_repeat", 0.0))
    entry = machine.vector_peaks.get("ops", {}).get(name)
    if entry is not None and dtype in entry["dtypes"] and "repeat_bytes" in extra:
        size = entry["element_bytes"] or dtypes.BY_NAME[dtype].itemsize
        cycles = max(cycles, extra["repeat_bytes"] / size / entry["dtypes"][dtype])
    return cycles


def vector_cycles(machine, name, nbytes, latency=None, dtype="float32"):
    """Cycles of a vector tile op over nbytes of dtype (the article's tiles hold float32
    words): latency + repeats of repeat_bytes x per_repeat above. ``latency`` overrides the
    table's fixed part (a fused operation's)."""
    repeats = math.ceil(nbytes / machine.cost_term(name, "repeat_bytes"))
    fixed = machine.latency(name) if latency is None else latency
    return fixed + int(math.ceil(repeats * per_repeat(machine, name, dtype) - 1e-9))


def violations(machine, nbytes: int = 65536) -> list:
    """The costs of ``machine`` that beat its [peaks] on an operand of ``nbytes``: for each
    instruction and dtype, the head + repeats x per_repeat cost and every [formulas] row's cost,
    against elements / peak cycles. Each is a sentence naming the entry and both numbers (the
    peaks' source is machine.vector_peaks["source"])."""
    found = []
    for op, entry in machine.vector_peaks.get("ops", {}).items():
        for dtype, peak in entry["dtypes"].items():
            size = entry["element_bytes"] or dtypes.BY_NAME[dtype].itemsize
            floor = nbytes / size / peak
            elements = nbytes // dtypes.BY_NAME[dtype].itemsize
            costs = []
            if "repeat_bytes" in machine.instructions[op].extra:
                costs.append(("head + repeats x per_repeat", vector_cycles(machine, op, nbytes, dtype=dtype)))
            for (name, fdtype, cols), (slope, bias) in machine.vector_formulas.items():
                if name == op and fdtype in (dtype, "any"):
                    # a row for one width on rows of it; a "*" row on one row of every element
                    used = elements if cols == "*" else max(1, elements // cols) * cols
                    costs.append((f"[formulas] row cols={cols}", machine.formula_value(slope, bias, used)))
            for what, cycles in costs:
                if cycles < floor:
                    found.append(f"{op} {dtype} ({what}): {cycles} cycles for {nbytes} bytes, fewer than the "
                                 f"{floor:g} that {entry['api'] or op}'s {peak:g} elements a cycle allow")
    return found

"""Run the microbenchmarks (kernels.py) on a machine and return measurement rows.

The kernels are generated PTO source written to a temporary module (kernels need a real source
file) and run with ``pto.profile`` in a copied context with its own device and the machine made
active, so the caller's device, machine and HBM are untouched. With ``on_npu=True`` the same
kernels run through ``pto.profile_on_npu`` (a hardware backend plugin) instead.
"""
from __future__ import annotations

import contextvars
import hashlib
import importlib.util
import sys
import tempfile
from pathlib import Path

from ..settings import settings
from ..timing.progress import Progress
from .aicore_kernels import all_aicore_benchmarks, unchainable_specs
from .kernels import TENSOR_ELEMS, TILE_OPS, all_benchmarks
from .rows import CalibrationError, Row
from ..isa import AICORE_ONLY_FAMILIES, load_isa
from ..timing.machine import machine as active, resolve_machine, use_machine
from ..runtime.device import reset_device
from ..runtime.api import alloc_tensor, profile as simulated_profile
from ..dtypes import int32
from .npu import profile_on_npu

def _aicore_only_vector_ops():
    """TCMP, TSEL, TTRI...: the vector families whose masks exist only as typed uint8 tiles."""
    return tuple(s.name for s in load_isa().specs if s.family in AICORE_ONLY_FAMILIES)


# Entries the microbenchmarks cannot measure, and why (docs/calibration.md, "Coverage").
_NO_LATENCY = ("they have no result register and the warp issues its next instruction one cycle "
               "later whatever their latency is: nothing in the timing model waits for it, so no "
               "kernel's cycles depend on it (only the timeline's end of the entry shows it)")
UNCOVERED = {
    **{(name, "latency"): _NO_LATENCY for name in (
        "ALLOC_LOCAL", "LOCAL_ARRAY", "LOCAL_STORE", "BARRIER", "FENCE", "IF", "ELSE", "ENDIF", "LOOP", "BRK_UNLESS", "BREAK", "CONTINUE",
        "LOOP_CONT", "ENDLOOP", "RET", "EXIT", "WAIT_ALL", "SET_FLAG", "WAIT_FLAG")},
    ("EXIT", "issue_interval"): "EXIT is a warp's last instruction: nothing issues after it on "
                                "its pipe, so its issue interval never delays anything",
    **{(name, "issue_interval"): "the timing model holds the pipe for the whole operation "
                                 "(latency + repeats), so the issue interval is never used"
       for name in ("MMA", *TILE_OPS)},
}
# The real AI core's instructions run in AI-core kernels, which aicore_kernels.py measures:
# the MTE1 / FIX copies' and the cube's latencies are covered; these fields are not
_AICORE_HIDDEN_II = ("the scalar unit hands an AI-core tile instruction to its pipe's queue in "
                     "issue_interval cycles, always hidden behind the pipe itself (no pipe "
                     "takes an operation a cycle), so no kernel's cycles depend on it")
_AICORE_SYNC = ("a sync instruction of the AI core costs what it waits for (the pipes' drain, "
                "the other core's signal), not a latency of its own; nothing issues behind it "
                "sooner or later for its latency")
_AICORE_V_LATENCY = ("the AI core prices this vector op by head, per_repeat, tail and "
                     "unaligned_floor (fitted from the aiv_* rows); its latency field is the "
                     "article path's, which cannot run it")
_DRAIN_LATENCY = ("TSTORE_ACC's latency adds to drain_fixed_cycles in every drain, so the two "
                  "cannot be told apart; the fit keeps the latency and puts the rest in "
                  "drain_fixed_cycles")
AICORE_INSTRUCTIONS = ("TEXTRACT", "TIMG2COL", "TMOV", "TMOV_ACC", "TMATMUL", "TMATMUL_ACC", "TMATMUL_BIAS",
                       "TGEMV", "TGEMV_ACC", "TGEMV_BIAS", "TMOV_M2S", "TSTORE_FP",
                       "TSTORE_ACC", "PIPE_BARRIER", "CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG", "SYNCALL",
                       "SYNCALL_SOFT",
                       "TCVT", "TMOV_V2V", "TEXTRACT_V2V", "TINSERT_V2V", "TEXTRACT_ND2NZ", "TEXPANDS_MAT",
                       *_aicore_only_vector_ops())
UNCOVERED.update({(name, "issue_interval"): _AICORE_HIDDEN_II for name in AICORE_INSTRUCTIONS})
UNCOVERED.update({(name, "latency"): _AICORE_SYNC
                  for name in ("PIPE_BARRIER", "CROSS_CORE_SET_FLAG", "CROSS_CORE_WAIT_FLAG", "SYNCALL",
                               "SYNCALL_SOFT")})
UNCOVERED.update({(name, "latency"): _AICORE_V_LATENCY
                  for name in ("TCVT", "TMOV_V2V", *_aicore_only_vector_ops())})
# a family the chained microbenchmarks cannot measure (FamilyRoles.unchainable says why)
UNCOVERED.update({(s.name, "latency"): f"the {s.family} family is priced by head, per_repeat and tail from "
                                       "the machine table (pto-isa's CCE mock in the shipped tables); "
                                       f"{why}, which the chained microbenchmarks cannot vary over rows, "
                                       "so neither field is measured"
                  for s, why in unchainable_specs()})
UNCOVERED[("TSTORE_ACC", "latency")] = _DRAIN_LATENCY
UNCOVERED.update({(name, "latency"): (
    f"{name} is the vector pipe's UB -> UB window copy, priced by its row's per_repeat and repeat_bytes "
    "(pto-isa's UB_TO_UB rate, as TMOV_V2V) and one fixed cycle (assumed); no microbenchmark times a "
    "window between Vec tiles") for name in ("TEXTRACT_V2V", "TINSERT_V2V")})
UNCOVERED[("TMOV_M2S", "latency")] = (
    "TMOV_M2S (the quant words Mat -> Scaling, copy_cbuf_to_fbuf on FIX) is priced at pto-isa's CCE mock "
    "L1_TO_FB rate (l1_to_fb_bytes_per_cycle) and one fixed cycle (assumed, as TMOV_ACC); no microbenchmark "
    "times it")
UNCOVERED[("TSTORE_FP", "latency")] = (
    "TSTORE_FP's latency is pto-isa's CCE mock set_fpc (1 cycle) before TSTORE_ACC's drain, whose "
    "drain_fixed_cycles it adds to as TSTORE_ACC's does; no microbenchmark times the vector quantization")
UNCOVERED[("TEXTRACT_ND2NZ", "latency")] = (
    "TEXTRACT_ND2NZ is priced as its vcopys at pto-isa's CCE mock (head 11 + tail 13 as the fixed cycles, "
    "1 a 32-byte block); no microbenchmark times a window into an NZ Vec tile")
UNCOVERED[("TEXPANDS_MAT", "latency")] = (
    "TEXPANDS_MAT is the cube core's create_cbuf_matrix on MTE2, priced by its row's per_repeat and "
    "repeat_bytes at pto-isa's CCE mock L1_FILL rate; its latency field is the article path's, which "
    "cannot run it (Mat tiles exist in AI-core kernels only), and no microbenchmark times it")
UNCOVERED[("TIMG2COL", "latency")] = (
    "TIMG2COL is priced as pto-isa's CCE mock prices img2colv2_cbuf_to_ca, TEXTRACT's L1 -> L0A "
    "path: its bytes term is the measured l1_to_l0a bandwidth, but no microbenchmark times the "
    "instruction itself (its fixed cycle is TEXTRACT's, assumed)")
_VIEW = ("a tile view exists only in AI-core kernels, where it is an address binding on the "
         "scalar unit with no result; the AI-core benchmarks time pipes, not the scalar unit's "
         "own instructions, so this field is not measured (the tables assume 1 cycle)")
UNCOVERED.update({(name, field): _VIEW for name in ("TRESHAPE", "TSUBVIEW")
                  for field in ("latency", "issue_interval")})
UNCOVERED.update({("CHECK", field): "CHECK is the run-time form of a compile-time rule (PTO_ASSERT), "
                  "emitted only in AI-core code, where the benchmarks time pipes, not the scalar unit's "
                  "own instructions; the tables assume 1 cycle" for field in ("latency", "issue_interval")})
# the indexed GM transfers (isa/54_gm_index.toml): priced from their headers' issued operations
GM_INDEX_INSTRUCTIONS = ("MGATHER", "MGATHER_ELEM", "MGATHER_L1", "MGATHER_L1_ELEM", "MSCATTER", "MSCATTER_ELEM")
UNCOVERED.update({(name, field): (
    f"{name} is priced from A2/A3's MGather.hpp / MScatter.hpp loops (the CCE mock's DMA bandwidths, TLOAD's "
    "and TSTORE's latencies, or an assumed scalar loop); its GM addresses come from its indices, and no "
    "microbenchmark times it") for name in GM_INDEX_INSTRUCTIONS for field in ("latency", "issue_interval")})
# TPREFETCH (isa/57_prefetch.toml): each record is one of the header's DMAs, priced as a TLOAD of its bytes
UNCOVERED.update({("TPREFETCH", field): (
    "TPREFETCH's rows are TLOAD's (each record is one TLoadInstrGm2ub of A2/A3's TPrefetch.hpp, priced as a "
    "TLOAD into UB of its bytes); it runs in AI-core kernels only and no microbenchmark times it apart from "
    "TLOAD, whose fields the tload benchmarks measure") for field in ("latency", "issue_interval")})
# the AI core's scalar unit on UB and GM (isa/56_scalar_memory.toml)
SCALAR_MEMORY_INSTRUCTIONS = tuple(s.name for s in load_isa().specs if s.family == "scalar_mem")
UNCOVERED.update({(name, field): (
    f"{name} is the AI core's scalar unit reading or writing UB or GM itself (through its DataCache), emitted "
    "only in AI-core code, where the benchmarks time pipes, not the scalar unit's own accesses; the tables' "
    "values are assumed (no public source prices them)") for name in SCALAR_MEMORY_INSTRUCTIONS
    for field in ("latency", "issue_interval")})
# the communication signals (isa/58_comm_signals.toml): the scalar unit's notify, wait and test of GM signals
COMM_SIGNAL_INSTRUCTIONS = tuple(s.name for s in load_isa().specs if s.family == "comm_signal")
UNCOVERED.update({(name, field): (
    f"{name} is a communication signal (TNotify.hpp / TWait.hpp / TTest.hpp): the AI core's scalar unit "
    "notifying or polling GM, priced by the DCCI, SLD_GM / SST_GM, LOAD, STORE and ATOM_ADD rows of the "
    "intrinsics it issues plus one constant cycle (assumed); no microbenchmark times it")
    for name in COMM_SIGNAL_INSTRUCTIONS for field in ("latency", "issue_interval")})
NOT_FITTED = {
    "memory.sector_bytes": "structural: the access granule, not a rate (taken from the base table)",
    "k_tile, k_tile_f32, repeat_bytes": "structural: the cube's and vector unit's repeat geometry; "
                                        "fit() takes them from the base table and fits the cycles "
                                        "per repeat",
    "[structure], [capacity]": "counts and sizes, not timing (cores, L1 bytes, ...)",
}


def coverage(machine=None) -> dict:
    """{(entry, field): "covered" or the reason it is not} for every latency and issue-interval
    entry of the machine's table (instructions and ``pipes.scalar``)."""
    m = resolve_machine(machine) if machine is not None else active()
    out = {}
    for name in list(m.instructions) + ["pipes.scalar"]:
        for fld in ("latency", "issue_interval"):
            out[(name, fld)] = UNCOVERED.get((name, fld), "covered")
    return out


def _module(directory: Path, source: str):
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    name = f"pypto_microbench_{digest}"
    path = directory / f"{name}.py"
    path.write_text("import pypto_sim as pto\n\n" + source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module.bench


def _count(kernel, args, name) -> int:
    prog = kernel.program_for(args)
    return sum(1 for ins in prog.instrs if ins.op == name)


def run_microbenchmarks(machine=None, only=None, on_npu=False, keep_sources=None,
                        progress=None) -> list:
    """Run every microbenchmark on ``machine`` (a Machine, a shipped table's name or a .toml
    path; default the active machine) and return rows (benchmark, instruction, size, cycles).

    ``only``: an iterable of instruction names (or table keys such as ``pipes.scalar``) to
    restrict the run; benchmarks that fit.py needs as known values for those are not added, so
    pass the whole set for a full calibration. ``on_npu``: run through ``pto.profile_on_npu``.
    ``keep_sources``: a directory to keep the generated kernel sources in (to read or port).
    ``progress``: None (a progress line on a terminal after two seconds, as the progress
    setting says, docs/settings.md), True (always) or False (never). The active machine and device of the caller are left as they were."""
    m = resolve_machine(machine) if machine is not None else active()
    benches = all_benchmarks(m.cores) + all_aicore_benchmarks(m)
    if only is not None:
        wanted = {str(x) for x in only}
        benches = [b for b in benches if b.instruction in wanted or b.instruction.upper() in wanted]
        if not benches:
            raise CalibrationError(f"no microbenchmark measures {sorted(wanted)}",
                                   hint="names are instruction names (ADD, TLOAD, ...) or table keys "
                                        "(pipes.scalar, memory.hbm_core_read_bytes_per_cycle)")
    return contextvars.copy_context().run(_run_all, m, benches, on_npu, keep_sources, progress)


def _run_all(m, benches, on_npu, keep_sources, progress):
    if not on_npu:
        # the benchmarks re-read one buffer, which an L2 would serve: they measure the table's
        # DMA entries (the miss path) on the machine without its L2
        m = m.without_l2()
    use_machine(m)              # in this run's copied context only
    reset_device(m)
    profile = profile_on_npu if on_npu else simulated_profile
    af = alloc_tensor(TENSOR_ELEMS * 4)
    ai = alloc_tensor(TENSOR_ELEMS * 4, dtype=int32)
    out = alloc_tensor(TENSOR_ELEMS * 4)
    rows, kernels = [], {}
    bar = Progress("pypto-sim microbench", sum(len(b.sizes) for b in benches), unit="kernel runs",
                   setting=settings().progress, enabled=progress)
    with bar, tempfile.TemporaryDirectory(prefix="pypto_microbench_") as tmp:
        directory = Path(keep_sources) if keep_sources else Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        for bench in benches:
            counts = []
            for size in bench.sizes:
                src = bench.source(size)
                if src not in kernels:
                    kernels[src] = _module(directory, src)
                kernel = kernels[src]
                n = bench.runtime(size) if bench.runtime else 0
                args = (af, ai, out, int(n), 0)
                if bench.count and not bench.runtime:
                    counts.append(_count(kernel, args, bench.count))
                prof = profile(kernel, grid=bench.grid, block=(32, 1, 1), args=args)
                rows.append(Row(bench.name, bench.instruction, int(size), int(prof.total_cycles), m.name,
                                "npu" if on_npu else ""))
                bar.update(len(rows), f"{bench.name} ({bench.instruction})")
            _check_counts(bench, counts)
    return rows


def _check_counts(bench, counts):
    """The kernel must contain one more measured instruction per size step (the compiler
    could fold or merge what the benchmark means to repeat)."""
    if len(counts) < 2:
        return
    for (s0, c0), (s1, c1) in zip(zip(bench.sizes, counts), zip(bench.sizes[1:], counts[1:])):
        if c1 - c0 != bench.per_size * (s1 - s0):
            raise CalibrationError(
                f"microbenchmark {bench.name} for {bench.instruction}: {bench.count} appears {c0} times "
                f"at size {s0} and {c1} times at size {s1}, not {bench.per_size} more per size step",
                hint="the compiler no longer emits what the benchmark repeats; see kernels.py")

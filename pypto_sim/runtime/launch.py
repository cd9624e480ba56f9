"""Running one queued launch: the functional runner or the timing model on the device's HBM,
and the Profile built from what the run recorded.

The runtime runs; the profiler (profiler/) only reads the records a run kept and never runs
anything (docs/design.md, "Layers")."""
from __future__ import annotations

from ..exec.aicore_functional import run_aicore_functional
from ..exec.blas import single_threaded_blas, uses_matmul
from ..exec.functional import run_functional
from ..exec.jit_clock import run_clock
from ..profiler.profile import Profile
from ..timing.model import LaunchSimulation


def launch_arguments(pending):
    """(tensors as (byte address, count, byte address), scalars by name, tensor names) of a
    queued launch, as the timing model and the functional runner take them."""
    tensors, scalars, names = [], {}, []
    for arg, value, name in zip(pending.program.args, pending.args, pending.names):
        if arg.kind == "tensor":
            tensors.append((value.byte_addr, value.count, value.byte_addr))
            names.append(name or value.name or arg.name)
        else:
            scalars[arg.name] = value
    return tensors, scalars, names


def simulation_for(pending, hbm, hbm_init, **options) -> LaunchSimulation:
    """The timing model of a queued launch on the HBM bytes ``hbm`` (and initcheck's map
    ``hbm_init``), with the launch's cycle limit and checks; ``options`` as LaunchSimulation
    takes them (record, engine, executor_module, ...) override those."""
    prog = pending.program
    tensors, scalars, names = launch_arguments(pending)
    options = {"max_cycles": pending.max_cycles, "checks": pending.checks,
               "engine": pending.settings.timing_engine, "progress": pending.settings.progress, **options}
    return LaunchSimulation(prog, prog.encode(), pending.grid, pending.block, tensors, scalars,
                            hbm, pending.machine, pending.kernel.name, names, hbm_init=hbm_init,
                            **options)


def run_launch(device, pending, record=None, executor_module=None) -> Profile:
    """Simulate one queued launch on its machine; results land in the device's HBM. The
    per-instruction records are kept when the launch asked for its timeline (record=None) or
    when record=True."""
    prog = pending.program
    if pending.mode == "functional":
        tensors, scalars, names = launch_arguments(pending)
        args = (prog, prog.encode(), pending.grid, pending.block, tensors, scalars, device.hbm.data,
                device.hbm.init, pending.kernel.name, names, pending.max_cycles)
        if not prog.aicore:
            return run_functional(*args)
        return run_aicore_functional(*args, cross_core_flag_limit=pending.machine.cross_core_flag_limit)
    keep = pending.timeline if record is None else record
    # the rate a profile reports is the simulation's: numba's compiling (the first launch of a
    # process compiles or loads the executor and the event loop) is timed apart
    with run_clock() as clock:
        sim = simulation_for(pending, device.hbm.data, device.hbm.init, record=keep,
                             executor_module=executor_module, values=pending.values)
        with single_threaded_blas(prog.aicore and pending.values and uses_matmul(prog)) as sim.blas:
            total = sim.run()
    wall = clock.run_seconds
    records = sim.records()
    # with records the totals are summed from them when first asked for
    prof = Profile(pending.kernel.name, prog, pending.machine, pending.grid, pending.block, total,
                   records, sim.pc_pipe, sim.pc_name, wall, pc_lat=sim.pc_lat,
                   totals=sim.totals() if records is None else None)
    prof.compile_seconds = clock.compile_seconds
    prof.aicore_stats = getattr(sim, "aicore_stats", None)
    grid_barrier = getattr(sim, "grid_barrier", None)     # SYNCALL: each round's last arrival, by kind
    prof.syncall_last = None if grid_barrier is None else grid_barrier.last_arrivals
    l2 = getattr(sim, "l2", None)
    prof.l2 = None if l2 is None else {"hits": l2.hits, "misses": l2.misses}
    return prof

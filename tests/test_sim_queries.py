"""The simulation's query API (timing/model.py, "stepping and queries"): the clock, the next
event, stepping to the end and the state of a warp, unit or block, which the debugger reads
instead of SimPy's internals."""
import pypto_sim as pto
from pypto_sim.runtime.device import DEFAULT_BLOCK, current_device
from pypto_sim.runtime.launch import simulation_for


@pto.kernel
def copy(a, o):
    i = pto.get_global_id()
    pto.store(o + i, pto.load(a + i))


def _stepped(kernel, grid, args):
    """A SimPy simulation of the launch, kept warp states (the debugger's), not started."""
    dev = current_device()
    dev.launch(kernel, grid, DEFAULT_BLOCK, args)
    return simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(), record=True,
                          engine="simpy", keep_warp_states=True)


def _total_of_run(kernel, grid, args):
    dev = current_device()
    dev.launch(kernel, grid, DEFAULT_BLOCK, args)
    return simulation_for(dev.queue.pop(), dev.hbm.data.copy(), dev.hbm.init.copy(),
                          engine="simpy").run()


def test_stepping_follows_the_next_event_time_and_ends_as_a_run_does():
    """Before start() nothing is queued (next event None, step() False, cycle 0); start()
    queues the blocks' processes at cycle 0. Each step() processes the event next_event_time()
    named, so the clock then reads that time and never goes back. run_to_end() gives the total
    cycles of an unstepped run() of the same launch."""
    a, o = pto.alloc_tensor(2 * 32 * 4), pto.alloc_tensor(2 * 32 * 4)     # bytes: 2 blocks of 32 lanes
    sim = _stepped(copy, (2, 1, 1), (a, o))
    assert (sim.next_event_time(), sim.step(), sim.now) == (None, False, 0)
    sim.start()
    assert (sim.next_event_time(), sim.now) == (0, 0)
    for _ in range(20):
        at = sim.next_event_time()
        assert sim.step()
        assert sim.now == at
    assert sim.run_to_end() == _total_of_run(copy, (2, 1, 1), (a, o))


def test_warp_and_block_state_appear_when_the_block_starts():
    """Block 0's warp 0 and its BlockState exist once its first instruction has issued (a
    record), with the pc it issues next; a block outside the grid of 2 has none."""
    a, o = pto.alloc_tensor(2 * 32 * 4), pto.alloc_tensor(2 * 32 * 4)     # bytes: 2 blocks of 32 lanes
    sim = _stepped(copy, (2, 1, 1), (a, o))
    sim.start()
    assert sim.warp_state(0, 0) is None and sim.block_state(0) is None
    while not len(sim.rows):
        assert sim.step()
    ws = sim.warp_state(0, 0)
    assert ws is not None and ws.pc >= 1 and sim.block_state(0).id == 0
    assert sim.warp_state(2, 0) is None and sim.block_state(2) is None


def test_an_ai_cores_unit_state_is_its_warps():
    """AI-core kernels: units AIC, AIV0, AIV1 are warps 0, 1, 2 of the block (one AI core)."""
    @pto.kernel(sync="manual")
    def units(A):
        with pto.vector():
            t = pto.alloc_tile(16, 16, pto.float32, loc=pto.Vec)
            pto.tload(t, A)

    A = pto.alloc_tensor(16 * 16)
    sim = _stepped(units, (1, 1, 1), (A,))
    sim.start()
    while sim.unit_state(0, "AIV1") is None:
        assert sim.step()
    assert [sim.unit_state(0, u) for u in ("AIC", "AIV0", "AIV1")] == [sim.warp_state(0, w) for w in range(3)]

"""Benchmark (run by hand, not a test): tile instructions per second of the AI core's compiled
event loop, on the kernels of benchmarks/published.py with ``values=False`` (issue 22).

    python benchmarks/aicore_rate.py [--repeat 3] [--gemm 6144] [--fa 8192] [--only gemm|fa]
                                     [--clock wall|cpu]

For each kernel: one warm-up run (numba's cache, the kernel's compile), then --repeat timed
``pto.profile`` calls; printed for the best of them: tile instructions, cycles, records, the
call's wall time, tile instructions per second, and where the time went:

- setup: from the call to the first event (the kernel's lowering and encoding, the timing
  model's tables, the engine's arrays),
- loop: inside the compiled event loop (``aicore_engine_run``, all its calls),
- grow: growing the engine's buffers between calls (records, log, heap, booking table),
- after: the driver after the loop (records concatenated, initcheck's marks, the pipes' and
  L2's figures),
- profile: the records turned into columns and the Profile object built,
- rest: the remainder of the call (the device's queue, the launch's arguments).

The phases are timed by wrapping the driver's methods here; nothing in the package is timed.
"""
import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

import flash_attention  # noqa: E402
import published  # noqa: E402

import pypto_sim as pto  # noqa: E402
from pypto_sim.runtime import launch as run_mod  # noqa: E402
from pypto_sim.timing import aicore_fast  # noqa: E402

NOW = time.perf_counter          # --clock cpu: time.process_time (a loaded machine)
PHASES = ("setup", "loop", "grow", "after", "profile", "rest")


class Clock:
    """Seconds per phase of the last pto.profile call, from wrapped driver methods."""

    def __init__(self):
        self.t = dict.fromkeys(PHASES, 0.0)
        self.start = 0.0
        self.first_event = None

    def reset(self):
        self.t = dict.fromkeys(PHASES, 0.0)
        self.start = NOW()
        self.first_event = None

    def wrap(self, owner, name, phase, before=None):
        """Time owner.name into phase (before: called with the clock before it runs)."""
        inner = getattr(owner, name)
        clock = self

        def timed(*args, **kwargs):
            if before is not None:
                before(clock)
            t0 = NOW()
            try:
                return inner(*args, **kwargs)
            finally:
                clock.t[phase] += NOW() - t0
        setattr(owner, name, timed)
        return inner


def _first_event(clock):
    if clock.first_event is None:
        clock.first_event = NOW()


def install(clock):
    """Wrap the driver: the engine's calls, its growing, its run and the Profile's building."""
    clock.wrap(aicore_fast.AICoreFastEngine, "_call", "loop", before=_first_event)
    clock.wrap(aicore_fast.AICoreFastEngine, "_grow", "grow")
    clock.wrap(aicore_fast.AICoreFastEngine, "run", "after")       # minus loop and grow below
    clock.wrap(run_mod, "Profile", "profile")
    sim_cls = run_mod.LaunchSimulation
    clock.wrap(sim_cls, "records", "profile")
    clock.wrap(sim_cls, "totals", "profile")


def gemm(n):
    return lambda: published.run_gemm(n, values=False)


def fa(s):
    return lambda: flash_attention.run(s, values=False)


@contextlib.contextmanager
def timed_profile(clock, out):
    """Time the pto.profile call made inside the block into out (wall seconds, phases)."""
    real = pto.profile

    def wrapper(*args, **kwargs):
        clock.reset()
        t0 = NOW()
        prof = real(*args, **kwargs)
        wall = NOW() - t0
        out.append((wall, dict(clock.t), (clock.first_event or t0) - t0, prof))
        return prof
    pto.profile = wrapper
    published.pto.profile = wrapper
    flash_attention.pto.profile = wrapper
    try:
        yield
    finally:
        pto.profile = published.pto.profile = flash_attention.pto.profile = real


def measure(clock, run, repeat):
    """Best-of-repeat (wall, phases, profile) of one kernel after a warm-up run."""
    out = []
    with timed_profile(clock, out):
        run()
        out.clear()
        for _ in range(repeat):
            run()
    wall, t, setup, prof = min(out, key=lambda r: r[0])
    t = dict(t)
    t["after"] -= t["loop"] + t["grow"]
    t["setup"] = setup
    t["rest"] = wall - sum(t[p] for p in PHASES if p != "rest")
    return wall, t, prof, [r[0] for r in out]


def tile_instructions(prof):
    """Tile instructions issued (records of tile pcs)."""
    return int(np.asarray(prof.pc_is_tile, bool)[prof.records.pc].sum())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gemm", type=int, default=6144)
    parser.add_argument("--fa", type=int, default=8192)
    parser.add_argument("--only", choices=("gemm", "fa"))
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall seconds, or this process's CPU seconds (less disturbed by "
                             "other processes on a loaded machine)")
    args = parser.parse_args(argv)
    global NOW
    NOW = time.perf_counter if args.clock == "wall" else time.process_time
    clock = Clock()
    install(clock)
    runs = [("GEMM %d^3" % args.gemm, gemm(args.gemm)), ("FA S=%d" % args.fa, fa(args.fa))]
    if args.only:
        runs = [r for r in runs if r[0].lower().startswith(args.only)]
    print(f"{'kernel':>12} {'tile ins':>9} {'cycles':>9} {'records':>9} {args.clock + ' s':>7} {'tile/s':>8}  "
          + " ".join(f"{p:>7}" for p in PHASES) + "  all walls")
    for name, run in runs:
        wall, t, prof, walls = measure(clock, run, args.repeat)
        n_tile = tile_instructions(prof)
        print(f"{name:>12} {n_tile:>9,} {prof.total_cycles:>9,} {len(prof.records):>9,} {wall:>7.3f} "
              f"{n_tile / wall / 1e3:>7.0f}K  " + " ".join(f"{t[p]:>7.3f}" for p in PHASES)
              + "  " + " ".join(f"{w:.3f}" for w in walls))


if __name__ == "__main__":
    main()

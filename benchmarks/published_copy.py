"""The data_copy table of benchmarks/published.py: CANN's Ascend C DataCopy streams
(examples/data_copy.py), simulated against the msprof figures their README publishes for Atlas
A2/A3.

Each row compares the Task Duration with the simulated one, and where the README gives them,
the MTE2 ratio (aiv_ / aic_mte2_ratio) and the L2's read hit rate ((r0_hit + r1_hit) / (hits +
miss-allocates)) with the simulated MTE2 busy share and L2 hit rate, both in percent; and the
mean core's time (aiv_ / aic_total_cycles / cores / clock against op_summary's) with how long
after it the task ended, which splits a row's error into the cores' own time and the rest.
UB 3 is where the machine table's HBM rate is read (its aiv_mte2_time, not its Task Duration),
so that row checks the rest of the model, not the rate.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from accuracy import Row

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import data_copy  # noqa: E402  (examples/ is not a package)

# (path, scenario) -> (Task Duration us, MTE2 ratio %, L2 read hit %): README.md of
# asc-devkit@82b89a15 examples/01_simd_cpp_api/05_best_practices/04_memory_access/data_copy,
# the Atlas A2/A3 rows (None: not published for that scenario)
PUBLISHED_COPY = {("UB", 1): (564.84, 98.9, None), ("UB", 2): (233.54, 97.2, None),
                  ("UB", 3): (215.82, 96.9, None), ("UB", 4): (275.3, 97.3, None),
                  ("UB", 5): (828.06, None, 0.005), ("UB", 6): (365.74, None, 75.00),
                  ("L1", 1): (300.7, 97.8, None), ("L1", 2): (230.24, 97.2, None),
                  ("L1", 3): (438.76, 98.6, None), ("L1", 4): (899.34, None, 0.006),
                  ("L1", 5): (414.96, None, 75.00)}
COPY_COLUMNS = ("MTE2", "L2 hit")
# (path, scenario) -> aiv_ / aic_total_cycles of the same README rows: the cores' cycles summed,
# so / cores / clock is the mean core's time (msprof's aiv_time / aicore_time), and Task
# Duration less it is how long after the mean core the task ended
PUBLISHED_COPY_TOTAL_CYCLES = {("UB", 1): 49222116, ("UB", 2): 20167322, ("UB", 3): 18563430,
                               ("UB", 4): 23648813, ("UB", 5): 72465129, ("UB", 6): 31484525,
                               ("L1", 1): 12870910, ("L1", 2): 9795512, ("L1", 3): 19020328,
                               ("L1", 4): 38725327, ("L1", 5): 17662155}


def copy_key(name: str) -> tuple:
    """'UB3' or 'L1 5' -> ('UB', 3); a name of neither form -> (name, -1), which no row has."""
    text = name.replace(" ", "").upper()
    return (text[:2], int(text[2:])) if text[2:].isdigit() else (name, -1)


def copy_rows(keys):
    """Run the data_copy scenarios ``keys`` ((path, scenario) pairs) and print them; returns
    [(Row, extra)]."""
    if not keys:
        return []
    print("\ndata_copy (A2/A3, Ascend C DataCopy streams of a [12288, 12288] half matrix): simulated | "
          "published; MTE2 busy and L2 read hits, %; the mean core's time and how long after it the "
          "task ended (Task Duration - mean core), us; scenario:")
    print(f"{'':>8} {'time us':>18} {'err':>7}  {'MTE2 %':>11} {'L2 hit %':>13}  {'mean core us':>17} "
          f"{'gap us':>13}  {'wall s':>6}")
    out = []
    for key in keys:
        t0 = time.perf_counter()
        prof = data_copy.run(*key)
        wall = time.perf_counter() - t0
        pub_us, pub_mte2, pub_hit = PUBLISHED_COPY[key]
        sim_us = prof.task_duration_us()
        mte2 = 100 * prof.pipe_shares("AIV" if key[0] == "UB" else "AIC")["MTE2"]
        st = prof.aicore_stats
        hit = 100 * st.l2_hits / max(st.l2_hits + st.l2_misses, 1)
        shares = {name: (sim, pub) for name, sim, pub in (("MTE2", mte2, pub_mte2), ("L2 hit", hit, pub_hit))
                  if pub is not None}
        name = f"{key[0]} {key[1]}"
        row = Row("COPY", name, sim_us, pub_us, shares, None)
        cells = "  ".join(f"{sim:>5.1f} | {'-' if pub is None else format(pub, '.3g'):>5}"
                          for sim, pub in ((mte2, pub_mte2), (hit, pub_hit)))
        core = mean_core_us(prof, key)
        print(f"{name:>8} {sim_us:>8.2f} | {pub_us:>7.2f} {100 * row.error:>+6.1f}%  {cells}  "
              f"{core[0]:>7.2f} | {core[1]:>7.2f} {sim_us - core[0]:>5.2f} | {pub_us - core[1]:>5.2f}  {wall:>6.1f}")
        out.append((row, {"simulated_shares": {"MTE2": mte2, "L2 hit": hit}, "cycles": prof.total_cycles,
                          "mean_core_us": {"simulated": core[0], "published": core[1]},
                          "values_ok": None, "wall_s": wall}))
    return out


def mean_core_us(prof, key) -> tuple:
    """(simulated, published) mean time of the scenario's cores, us: op_summary's total-row
    aiv_time / aicore_time, and the README's total cycles / cores / clock."""
    side = "aiv_time(us)" if key[0] == "UB" else "aicore_time(us)"
    cores = data_copy.AIV_CORES if key[0] == "UB" else data_copy.AIC_CORES
    published = PUBLISHED_COPY_TOTAL_CYCLES[key] / cores / (prof.machine.clock_ghz * 1e3)
    return prof.op_summary().total[side], published


def copy_markdown(results) -> list:
    """docs/performance.md's lines for the data_copy rows of results (none: [])."""
    rows = [(row, x) for row, x in results if row.table == "COPY"]
    if not rows:
        return []
    lines = ["", "| data_copy | simulated us | published us | error | MTE2 % sim / pub | L2 hit % sim / pub "
             "| mean core us sim / pub | Task Duration - mean core us sim / pub |",
             "|---|---|---|---|---|---|---|---|"]
    for row, x in rows:
        cells = " | ".join(f"{x['simulated_shares'][c]:.1f} / "
                           + (f"{row.shares[c][1]:g}" if c in row.shares else "-") for c in COPY_COLUMNS)
        sim_core, pub_core = x["mean_core_us"]["simulated"], x["mean_core_us"]["published"]
        lines.append(f"| {row.name} | {row.simulated_us:.2f} | {row.published_us:.2f} | {100 * row.error:+.1f}% "
                     f"| {cells} | {sim_core:.2f} / {pub_core:.2f} | {row.simulated_us - sim_core:.2f} / "
                     f"{row.published_us - pub_core:.2f} |")
    return lines


"""Chrome trace event JSON of a launch: opens in Perfetto (ui.perfetto.dev) and chrome://tracing.

Layout (the JSON Object Format of the Trace Event Format):
- one process per core ("core N"), named with "M" metadata events;
- in it, one thread (track) per pipe ("load (MTE2)", "mma (cube)", ...) and one per warp
  ("block B warp W"), named and ordered with "M" events. Operations in flight at the same time
  on one pipe (pipelined loads, several warps' ALU ops) go to extra rows of that pipe
  ("load (MTE2) #2"), because complete events on one track must nest;
- one "X" (complete) event per warp-instruction on its pipe track and on its warp track, from
  issue (tile operations: start on the pipe) to completion, with pc, source line, lanes, stall
  and the instruction it waited for in ``args``;
- flow events ("s" then "f" with "bp": "e", same id, cat and name) from the operation that was
  waited for to the one that waited, on the pipe tracks: operands, tiles not yet loaded (RAW),
  buffers not yet free (WAR), stage order and wait_all.

Time: by default 1 trace microsecond = 1 cycle (``time_unit="cycle"``), so the viewer's
numbers read as cycles; ``time_unit="us"`` converts cycles at the machine's clock. Which one
is stated in ``otherData.time_unit`` and in each process's labels.
"""
from __future__ import annotations

import bisect
import heapq
import json
from pathlib import Path

from ..isa import PIPES, PTO_PIPE_NAMES
from ..timing.records import STALL_CAUSES

AICORE_UNITS = ("AIC", "AIV0", "AIV1")
PIPE_LABELS = {"scalar": "scalar", "vector": "vector (V)", "sfu": "sfu", "load": "load (MTE2)",
               "store": "store (MTE3)", "mma": "mma (cube)", "mte1": "MTE1",
               "fix": "FIX"}
PHASES = {"X", "B", "E", "i", "I", "M", "s", "t", "f", "C", "b", "e", "n"}
METADATA = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
            "thread_sort_index": "sort_index", "process_labels": "labels"}
_TID_STRIDE = 1_000_000
_QUANTA = 4096        # time_unit="us": times are multiples of 1/4096 us


def _pack(starts, ends, order) -> list:
    """Row for each interval (in ``order``) so that intervals on one row never overlap."""
    free, busy, rows, n_rows = [], [], {}, 0
    for i in order:
        s = starts[i]
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            row = heapq.heappop(free)
        else:
            row, n_rows = n_rows, n_rows + 1
        rows[i] = row
        heapq.heappush(busy, (ends[i], row))
    return rows


def build_trace(prof, time_unit="cycle", warps=True, flows=True) -> dict:
    """The trace as a dict (``json.dump`` it, or use ``save_trace``)."""
    if time_unit not in ("cycle", "us"):
        raise ValueError(f"time_unit must be 'cycle' or 'us', not {time_unit!r}")
    rec = prof.records
    if time_unit == "cycle":
        def at(cycle):
            return cycle
    else:
        # microseconds in steps of 1/4096 us (0.24 ns, under a cycle at up to 4 GHz): such
        # numbers are exact in binary, so ts + dur of one slice never passes the ts of the next
        # on its track, also after Perfetto's conversion to whole nanoseconds
        per_us = prof.machine.clock_ghz * 1e3

        def at(cycle):
            return round(cycle * _QUANTA / per_us) / _QUANTA
    unit_text = ("1 trace microsecond = 1 cycle" if time_unit == "cycle" else
                 f"microseconds at the machine clock of {prof.machine.clock_ghz} GHz")
    n = len(rec)
    core, block, warp, pc = (a.tolist() for a in (rec.core, rec.block, rec.warp, rec.pc))
    issue, complete = rec.issue.tolist(), rec.complete.tolist()
    stall, cause, cause_pc = rec.stall.tolist(), rec.cause.tolist(), rec.cause_pc.tolist()
    nbytes, mask = rec.bytes.tolist(), rec.mask.tolist()
    pipes = prof.record_pipes.tolist()
    # AI-core kernels: one track per pipe per unit (AIC, AIV0, AIV1), as Perf-Sim draws them
    aicore = bool(getattr(prof.program, "aicore", False))
    unit = warp if aicore else [0] * n

    # ---- tracks: (core, pipe index, row) and (core, block, warp, row)
    by_start = sorted(range(n), key=lambda i: (issue[i], i))
    groups_p, groups_w = {}, {}
    for i in by_start:
        groups_p.setdefault((core[i], unit[i], pipes[i]), []).append(i)
        if warps:
            groups_w.setdefault((core[i], block[i], warp[i]), []).append(i)
    pipe_row, warp_row = {}, {}
    for members in groups_p.values():
        pipe_row.update(_pack(issue, complete, members))
    for members in groups_w.values():
        warp_row.update(_pack(issue, complete, members))

    events, tids, per_core = [], {}, {}
    cores = sorted(set(core))

    def tid_of(key, name):
        if key not in tids:
            pid = key[0] + 1
            per_core[pid] = per_core.get(pid, 0) + 1
            tids[key] = pid * _TID_STRIDE + per_core[pid]
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tids[key],
                           "args": {"name": name}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tids[key],
                           "args": {"sort_index": tids[key] - pid * _TID_STRIDE}})
        return tids[key]

    for c in cores:
        pid = c + 1
        events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"core {c}"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": c}})
        events.append({"ph": "M", "name": "process_labels", "pid": pid,
                       "args": {"labels": f"{prof.kernel_name}; {unit_text}"}})
    # tracks in a stable order: per core, pipes (and their rows) first, then warps
    for (c, u, p), members in sorted(groups_p.items()):
        for row in range(max(pipe_row[i] for i in members) + 1):
            if aicore:
                label = f"{AICORE_UNITS[u]} {PTO_PIPE_NAMES.get(PIPES[p], PIPES[p])}"
            else:
                label = PIPE_LABELS[PIPES[p]]
            tid_of((c, "pipe", u, p, row), label + (f" #{row + 1}" if row else ""))
    for (c, b, w), members in sorted(groups_w.items()):
        for row in range(max(warp_row[i] for i in members) + 1):
            tid_of((c, "warp", b, w, row), f"block {b} warp {w}" + (f" #{row + 1}" if row else ""))

    # ---- complete events
    from .profile import lane_ranges
    lanes_text, src = {}, prof.program.source_lines
    names, lines = prof.pc_name, prof.pc_line
    for i in range(n):
        w = warp[i]
        if (mask[i], w) not in lanes_text:
            lanes_text[(mask[i], w)] = lane_ranges(mask[i], w)
        p, ln = pc[i], lines[pc[i]]
        args = {"pc": p, "line": ln, "source": src.get(ln, "").strip(), "block": block[i],
                "warp": w, "lanes": lanes_text[(mask[i], w)], "issue_cycle": issue[i],
                "complete_cycle": complete[i]}
        if stall[i] or cause[i]:
            args["stall_cycles"] = stall[i]
            args["stall"] = STALL_CAUSES[cause[i]]
            if cause_pc[i] >= 0:
                args["waited_for"] = f"{names[cause_pc[i]]} at line {lines[cause_pc[i]]}"
        if nbytes[i]:
            args["bytes"] = nbytes[i]
        ts = at(issue[i])
        dur = at(complete[i]) - ts
        pid = core[i] + 1
        ev = {"ph": "X", "name": names[p], "cat": PIPES[pipes[i]], "ts": ts, "dur": dur,
              "pid": pid, "tid": tids[(core[i], "pipe", unit[i], pipes[i], pipe_row[i])], "args": args}
        events.append(ev)
        if warps:
            events.append(dict(ev, cat="warp", tid=tids[(core[i], "warp", block[i], w, warp_row[i])]))

    # ---- flow events: producer -> consumer, on the pipe tracks
    n_flows = 0
    if flows:
        producer = prof.producers().tolist()
        for i in range(n):
            j = producer[i]
            if j < 0 or complete[j] <= issue[j] or complete[i] <= issue[i]:
                continue
            s_ts = (at(issue[j]) + at(complete[j])) / 2
            f_ts = (at(issue[i]) + at(complete[i])) / 2
            if s_ts >= f_ts:
                continue
            n_flows += 1
            name = STALL_CAUSES[cause[i]]
            events.append({"ph": "s", "id": n_flows, "cat": "dependency", "name": name, "ts": s_ts,
                           "pid": core[j] + 1, "tid": tids[(core[j], "pipe", unit[j], pipes[j], pipe_row[j])]})
            events.append({"ph": "f", "bp": "e", "id": n_flows, "cat": "dependency", "name": name,
                           "ts": f_ts, "pid": core[i] + 1,
                           "tid": tids[(core[i], "pipe", unit[i], pipes[i], pipe_row[i])]})
    return {"traceEvents": events,
            "displayTimeUnit": "ms" if time_unit == "cycle" else "ns",
            "otherData": {"generator": "pypto_sim", "kernel": prof.kernel_name,
                          "machine": prof.machine.name, "grid": list(prof.grid),
                          "block": list(prof.block), "total_cycles": prof.total_cycles,
                          "clock_ghz": prof.machine.clock_ghz, "time_unit": unit_text,
                          "flows": n_flows}}


def save_trace(prof, path, time_unit="cycle", warps=True, flows=True) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = build_trace(prof, time_unit=time_unit, warps=warps, flows=flows)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
    return path


def validate_trace(doc) -> list:
    """Problems found checking ``doc`` against the Trace Event Format as Perfetto and
    chrome://tracing read it (an empty list: none): required keys of each phase, metadata
    names, complete events that nest on each track, flow starts and ends paired (same id, cat
    and name, start first) and bound to a slice on their track, every track and process named."""
    errors = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["the top level must be an object with a 'traceEvents' list"]
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        errors.append(f"displayTimeUnit must be 'ms' or 'ns', not {doc['displayTimeUnit']!r}")
    slices, flows, named_threads, named_procs, used_procs = {}, {}, set(), set(), set()

    def number(ev, key):
        return isinstance(ev.get(key), (int, float)) and not isinstance(ev.get(key), bool) and ev[key] >= 0

    for k, ev in enumerate(doc["traceEvents"]):
        ph = ev.get("ph") if isinstance(ev, dict) else None
        if ph not in PHASES:
            errors.append(f"event {k}: unknown or missing ph {ph!r}")
            continue
        if not isinstance(ev.get("name"), str):
            errors.append(f"event {k} ({ph}): missing name")
        if not isinstance(ev.get("pid"), int):
            errors.append(f"event {k} ({ph}): pid must be an integer")
        if ph == "M":
            key = METADATA.get(ev.get("name"))
            if key is None or key not in ev.get("args", {}):
                errors.append(f"event {k}: metadata {ev.get('name')!r} needs args.{key or '?'}")
            elif ev["name"] == "thread_name":
                named_threads.add((ev["pid"], ev.get("tid")))
            elif ev["name"] == "process_name":
                named_procs.add(ev["pid"])
            continue
        if not isinstance(ev.get("tid"), int) or not number(ev, "ts"):
            errors.append(f"event {k} ({ph}): needs an integer tid and a non-negative ts")
            continue
        track = (ev["pid"], ev["tid"])
        used_procs.add(ev["pid"])
        if ph == "X":
            if not number(ev, "dur"):
                errors.append(f"event {k} (X): needs a non-negative dur")
                continue
            slices.setdefault(track, []).append((ev["ts"], ev["ts"] + ev["dur"], k))
        elif ph in ("s", "t", "f"):
            if "id" not in ev or not isinstance(ev.get("cat"), str):
                errors.append(f"event {k} ({ph}): a flow event needs id and cat")
                continue
            if ph == "f" and ev.get("bp", "e") != "e":
                errors.append(f"event {k} (f): bp must be 'e' (bind to the enclosing slice)")
            flows.setdefault(ev["id"], []).append((ph, ev, k))
    for track, items in slices.items():
        items.sort()
        stack = []
        for start, end, k in items:
            while stack and stack[-1] <= start:
                stack.pop()
            if stack and end > stack[-1]:
                errors.append(f"event {k}: complete event overlaps another on track {track} without nesting")
            stack.append(end)
        if track not in named_threads:
            errors.append(f"track {track} has complete events but no thread_name")
    for pid in used_procs - named_procs:
        errors.append(f"process {pid} has events but no process_name")
    starts = {t: [s for s, _, _ in items] for t, items in slices.items()}

    def enclosed(track, ts):
        items = slices.get(track, [])
        j = bisect.bisect_right(starts.get(track, []), ts) - 1
        return j >= 0 and items[j][0] <= ts <= items[j][1]

    for fid, parts in flows.items():
        phases = [ph for ph, _, _ in parts]
        if phases.count("s") != 1 or phases.count("f") != 1:
            errors.append(f"flow {fid}: needs exactly one 's' and one 'f', has {phases}")
            continue
        s = next(ev for ph, ev, _ in parts if ph == "s")
        f = next(ev for ph, ev, _ in parts if ph == "f")
        if (s["cat"], s["name"]) != (f["cat"], f["name"]):
            errors.append(f"flow {fid}: 's' and 'f' differ in cat or name")
        if s["ts"] > f["ts"]:
            errors.append(f"flow {fid}: ends before it starts")
        for ev in (s, f):
            if not enclosed((ev["pid"], ev["tid"]), ev["ts"]):
                errors.append(f"flow {fid}: '{ev['ph']}' at {ev['ts']} is inside no slice of its track")
    return errors


def load_trace(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def slices_of(doc, name=None, cat=None) -> list:
    """The complete events of a trace dict, optionally of one name and category."""
    return [e for e in doc["traceEvents"] if e.get("ph") == "X" and (name is None or e["name"] == name)
            and (cat is None or e.get("cat") == cat)]


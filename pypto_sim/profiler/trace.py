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

AI-core kernels: pipe tracks per unit and PTO pipe ("AIC PIPE_MTE2"), unit tracks ("AIC (block
0)") instead of warp tracks, ``unit`` in the args instead of warp and lanes; flows of cat
"flag" (one per flag handoff: set_flag -> the operation its wait_flag held, or the wait_flag
when it held none), "cross_core" (one per cross-core signal: set -> wait), "syncall" (one
per participant of a SYNCALL round: from the last to arrive to it) and "dependency"
(tile data waits under sync="auto" only); "C" counter events of GM / L2 / HBM bytes per cycle
(memory_counters.py), per core and in a "chip memory" process; ``otherData`` has no
``block`` (an AI core's block is its units, not a number of lanes).

Time: by default 1 trace microsecond = 1 cycle (``time_unit="cycle"``), so the viewer's
numbers read as cycles; ``time_unit="us"`` converts cycles at the machine's clock. Which one
is stated in ``otherData.time_unit`` and in each process's labels.

Writing: ``write_trace`` streams the file, one event per line, CHUNK records at a time,
rendered from the record columns by numpy (rowtext.py: rows of one width, padded with
spaces where JSON allows them), so no list of events exists at any time and memory stays
flat for any launch; ``build_trace`` is the same text parsed (for small launches and tests).
The tracks (rows of a pipe or warp, tids) are laid out in tracks.py.
"""
from __future__ import annotations

import bisect
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..arguments import whole_number
from ..errors import ArgumentError
from ..timing.records import CAUSE, STALL_CAUSES
from ..output_files import output_path, write_file
from .rowtext import Rows
from .tracks import AICORE_UNITS, TID_STRIDE, layout
from .aicore_bubbles import UNITS, flag_handoffs, pipe_name
from ..isa.syncall_modes import KINDS as SYNCALL_KINDS
from .intervals import lane_ranges
from .memory_counters import memory_counters

PHASES = {"X", "B", "E", "i", "I", "M", "s", "t", "f", "C", "b", "e", "n"}
METADATA = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
            "thread_sort_index": "sort_index", "process_labels": "labels"}
_QUANTA_SHIFT = 12    # time_unit="us": times are multiples of 1/4096 us
CHUNK = 8192          # rows rendered at a time: bounds the writer's memory, not its output


TIME_UNITS = ("cycle", "us")


def check_trace_args(prof, time_unit, warps, flows, counters, bucket_cycles, call="trace"):
    """The trace's arguments checked (ArgumentError naming the argument, its value and what
    is allowed) and the profile's records asked for (ProfileError when it kept none), before
    anything is written; returns bucket_cycles as an int or None."""
    if not isinstance(time_unit, str) or time_unit not in TIME_UNITS:
        raise ArgumentError(f"{call}: time_unit must be 'cycle' or 'us', not {time_unit!r}",
                            hint="'cycle': 1 trace microsecond = 1 cycle; 'us': real time at the "
                                 "machine's clock")
    for name, value in (("warps", warps), ("flows", flows), ("counters", counters)):
        if not isinstance(value, (bool, np.bool_)):
            raise ArgumentError(f"{call}: {name} must be True or False, not {value!r}",
                                hint=f"{name}=False leaves them out of the trace")
    if bucket_cycles is not None:
        bucket_cycles = whole_number(bucket_cycles, f"{call}: bucket_cycles", least=1,
                                     hint="give the width of a counter bucket in cycles (1 or "
                                          "more), or None for the kernel in at most 512 buckets")
    prof.records          # ProfileError (how to get them) when the profile kept no timeline
    return bucket_cycles


def _times(prof, time_unit):
    """(function: cycles -> exact numerators, shift): a time is numerator / 2**shift."""
    if time_unit == "cycle":
        return (lambda cycles: np.asarray(cycles, np.int64)), 0
    # microseconds in steps of 1/4096 us (0.24 ns, under a cycle at up to 4 GHz): such
    # numbers are exact in binary, so ts + dur of one slice never passes the ts of the next
    # on its track, also after Perfetto's conversion to whole nanoseconds
    per_us = prof.machine.clock_ghz * 1e3
    return (lambda cycles: np.round(np.asarray(cycles, np.int64) * float(1 << _QUANTA_SHIFT)
                                    / per_us).astype(np.int64)), _QUANTA_SHIFT


@dataclass
class Arrows:
    """The flow arrows of a trace, one per entry: from record ``src`` to record ``dst``, at
    times ``s_num`` / ``f_num`` (numerator / 2**(shift + 1): the middle of each slice), named
    ``names[name]`` in category ``cats[cat]``."""

    src: np.ndarray
    dst: np.ndarray
    s_num: np.ndarray
    f_num: np.ndarray
    name: np.ndarray
    cat: np.ndarray
    names: list
    cats: list

    def __len__(self):
        return len(self.src)


FLOW_CATS = ("dependency", "flag", "cross_core", "syncall")


def _dependency_flows(prof):
    """(waiter records, waited-for records, names) of the dependency arrows: for a lane
    kernel every recorded wait (operands, tiles, stages, wait_all); for an AI-core kernel the
    data waits of tile operations only (sync="auto"), since its flags have their own arrows
    and its scalar unit's operands are no pipe's business."""
    rec = prof.records
    producer = prof.producers()
    i = np.nonzero(producer >= 0)[0]
    if getattr(prof.program, "aicore", False):
        i = i[np.isin(rec.cause[i], (CAUSE["tile_raw"], CAUSE["tile_war"]))]
    return i, producer[i], rec.cause[i].astype(np.int64)


def _handoff_flows(prof):
    """(set records, target records, name index, names, cat) of the flag handoffs of an
    AI-core kernel (aicore_bubbles.flag_handoffs): an arrow from each set_flag to the
    operation its wait_flag held (to the wait_flag when it held none), and from each
    cross_core_set_flag to the cross_core_wait_flag that took its signal."""
    hand = flag_handoffs(prof)
    rec, aux = prof.records, [ins.aux for ins in prof.program.instrs]
    names, index = [], {}
    src, dst, name, cat = (np.zeros(len(hand), np.int64) for _ in range(4))
    for n, (kind, s, w, held, _fire) in enumerate(hand):
        pc = int(rec.pc[s])
        if kind == "flag":
            a, b, ev = aux[pc][:3]
            label = f"set_flag(PIPE_{pipe_name(a)}, PIPE_{pipe_name(b)}, {ev})"
        else:
            label = (f"cross_core_set_flag({aux[pc][0]}) {UNITS[int(rec.warp[s])]} -> "
                     f"{UNITS[int(rec.warp[w])]}")
        src[n], dst[n] = s, held if held >= 0 else w
        name[n] = index.setdefault(label, len(index))
        cat[n] = FLOW_CATS.index(kind)
    names[:] = list(index)
    return src, dst, name, names, cat


def _syncall_flows(prof):
    """(last arrival records, released records, name index, names, cat) of the SYNCALL rounds of
    an AI-core kernel: an arrow from the SYNCALL of each round's last participant to arrive
    (prof.syncall_last) to every other participant's SYNCALL of that round."""
    rec = prof.records
    names = [f"pto.syncall('{kind}')" for kind in SYNCALL_KINDS]
    sync = np.nonzero(np.asarray(prof.pc_name)[rec.pc] == "SYNCALL")[0]
    kind_of = np.array([prof.program.instrs[int(pc)].aux[0] for pc in rec.pc[sync]], np.int64)
    src, dst, name = [], [], []
    for kind, rounds in enumerate(getattr(prof, "syncall_last", None) or []):
        seen: dict = {}            # (block, unit) -> its SYNCALLs of the kind so far: round k is its k-th
        by_round: dict = {}
        for k in sync[kind_of == kind].tolist():
            unit = (int(rec.block[k]), int(rec.warp[k]))
            by_round.setdefault(seen.get(unit, 0), []).append((unit, k))
            seen[unit] = seen.get(unit, 0) + 1
        for rnd, ((block, unit, _pc), _cycle) in enumerate(rounds):
            members = by_round.get(rnd, [])
            last = [k for who, k in members if who == (block, unit)]
            for who, k in members:
                if last and who != (block, unit):
                    src.append(last[0])
                    dst.append(k)
                    name.append(kind)
    n = len(src)
    return (np.array(src, np.int64), np.array(dst, np.int64), np.array(name, np.int64), names,
            np.full(n, FLOW_CATS.index("syncall"), np.int64))


def _flows(prof, at) -> Arrows:
    """The arrows of the trace, dependencies first, then (AI-core kernels) flag handoffs;
    arrows from or to a slice of no duration, or going back in time, are left out."""
    rec = prof.records
    i, j, cause = _dependency_flows(prof)
    src, dst = [j], [i]
    name, cat = [cause], [np.zeros(len(i), np.int64)]
    names = list(STALL_CAUSES)
    if getattr(prof.program, "aicore", False):
        for s, d, n, more_names, c in (_handoff_flows(prof), _syncall_flows(prof)):
            src.append(s)
            dst.append(d)
            name.append(n + len(names))
            cat.append(c)
            names += more_names
    src, dst, name, cat = (np.concatenate(x) for x in (src, dst, name, cat))
    keep = (rec.complete[src] > rec.issue[src]) & (rec.complete[dst] > rec.issue[dst])
    s_num = at(rec.issue[src]) + at(rec.complete[src])
    f_num = at(rec.issue[dst]) + at(rec.complete[dst])
    # a dependency arrow needs its waiter later than what it waited for (as it always had);
    # a handoff may end in the very cycle its set_flag was dispatched
    keep &= (s_num < f_num) | ((cat > 0) & (s_num == f_num))
    return Arrows(src[keep], dst[keep], s_num[keep], f_num[keep], name[keep], cat[keep], names,
                  list(FLOW_CATS))


def _ranges(n):
    return ((a, min(a + CHUNK, n)) for a in range(0, n, CHUNK))


class _SliceText:
    """The per-pc and per-record texts of the complete events that do not vary row by row."""

    def __init__(self, prof):
        src, lines, names = prof.program.source_lines, prof.pc_line, prof.pc_name
        self.names = list(names)
        self.pc_args = [f'"pc":{p},"line":{json.dumps(lines[p])},'
                        f'"source":{json.dumps(src.get(lines[p], "").strip())}'
                        for p in range(len(names))]
        self.prof = prof

    def stall(self, cause, cause_pc):
        """Fragments ',"stall":...,"waited_for":...' and each record's index into them."""
        width = len(self.names) + 1
        pairs, inv = np.unique(cause.astype(np.int64) * width + cause_pc + 1, return_inverse=True)
        frags = []
        for key in pairs.tolist():
            c, cp = divmod(key, width)
            text = f',"stall":"{STALL_CAUSES[c]}"'
            if cp > 0:
                waited = f"{self.names[cp - 1]} at line {self.prof.pc_line[cp - 1]}"
                text += f',"waited_for":{json.dumps(waited)}'
            frags.append(text)
        return frags, inv.reshape(-1)

    def lanes(self, mask, warp):
        """The active lanes of each record as text, and each record's index into them."""
        width = int(warp.max(initial=0)) + 1
        pairs, inv = np.unique((mask.astype(np.int64) & 0xFFFFFFFF) * width + warp, return_inverse=True)
        texts = [lane_ranges(*divmod(key, width)) for key in pairs.tolist()]
        return texts, inv.reshape(-1)


def _track_rows(tracks, a, b) -> tuple:
    """The thread_name and thread_sort_index metadata events of tracks a..b-1."""
    pid, tid = tracks.pid[a:b], tracks.tid[a:b]
    names = Rows(b - a).text(',{"ph":"M","name":"thread_name","pid":').number(pid) \
        .text(',"tid":').number(tid).text(',"args":{"name":') \
        .string(tracks.names[a:b], np.arange(b - a)).text("}}").array()
    order = Rows(b - a).text(',{"ph":"M","name":"thread_sort_index","pid":').number(pid) \
        .text(',"tid":').number(tid).text(',"args":{"sort_index":') \
        .number(tid - pid * TID_STRIDE).text("}}").array()
    return names, order


def _slice_rows(prof, text, tracks, a, b, at, shift, warp_copy) -> np.ndarray:
    """The complete events of records a..b-1, on their pipe tracks (or their warp tracks)."""
    rec = prof.records
    sl = slice(a, b)
    pc, issue, complete = rec.pc[sl], rec.issue[sl], rec.complete[sl]
    stall, cause, nbytes = rec.stall[sl], rec.cause[sl], rec.bytes[sl]
    track = (tracks.warp_track if warp_copy else tracks.pipe_track)[sl]
    ts = at(issue)
    has_stall = (stall != 0) | (cause != 0)
    stall_frags, stall_index = text.stall(cause, rec.cause_pc[sl])
    rows = Rows(b - a).text(',{"ph":"X","ts":').dyadic(ts, shift) \
        .text(',"dur":').dyadic(at(complete) - ts, shift) \
        .text(',"pid":').number(tracks.pid[track]).text(',"tid":').number(tracks.tid[track]) \
        .text(',"name":').string(text.names, pc)
    aicore = bool(getattr(prof.program, "aicore", False))
    if warp_copy:
        rows.text(',"cat":"unit"' if aicore else ',"cat":"warp"')
    else:
        rows.text(',"cat":').string(prof.pipe_names, prof.record_pipes[sl])
    rows.text(',"args":{').raw(text.pc_args, pc).text(',"block":').number(rec.block[sl])
    if aicore:              # a unit of an AI core, not a warp of lanes
        rows.text(',"unit":').string(AICORE_UNITS, rec.warp[sl])
    else:
        lanes, lanes_index = text.lanes(rec.mask[sl], rec.warp[sl])
        rows.text(',"warp":').number(rec.warp[sl]).text(',"lanes":').string(lanes, lanes_index)
    rows.text(',"issue_cycle":').number(issue).text(',"complete_cycle":').number(complete) \
        .text(',"stall_cycles":', show=has_stall).number(stall, show=has_stall) \
        .raw(stall_frags, stall_index, show=has_stall) \
        .text(',"bytes":', show=nbytes != 0).number(nbytes, show=nbytes != 0).text("}}")
    return rows.array()


def _flow_rows(tracks, arrows, first_id, a, b, shift, phase) -> np.ndarray:
    """The 's' (phase "s") or 'f' events of arrows a..b-1."""
    at_rec = (arrows.src if phase == "s" else arrows.dst)[a:b]
    num = (arrows.s_num if phase == "s" else arrows.f_num)[a:b]
    track = tracks.pipe_track[at_rec]
    rows = Rows(b - a).text(',{"ph":"s","id":' if phase == "s" else ',{"ph":"f","bp":"e","id":') \
        .number(np.arange(first_id + a, first_id + b)) \
        .text(',"cat":').string(arrows.cats, arrows.cat[a:b]) \
        .text(',"name":').string(arrows.names, arrows.name[a:b]) \
        .text(',"ts":').dyadic(num, shift + 1) \
        .text(',"pid":').number(tracks.pid[track]).text(',"tid":').number(tracks.tid[track]) \
        .text("}")
    return rows.array()


def _counter_events(prof, at, shift, chip_pid, bucket_cycles):
    """The "C" events of the memory counters (memory_counters.py), as JSON lines: one per
    bucket and counter (bounded by the bucket count, not by the records), and one at the end
    of the last bucket that brings each series back to zero."""
    lines = []
    for counter in memory_counters(prof, bucket_cycles):
        pid = chip_pid if counter.core is None else counter.core + 1
        ts = at(np.append(counter.starts, counter.starts[-1] + counter.width)) / float(1 << shift)
        series = list(counter.series)
        values = np.stack([np.append(counter.series[k], 0.0) for k in series], 1)
        head = f'{{"ph":"C","name":{json.dumps(counter.name)},"pid":{pid},"ts":'
        for t, row in zip(ts.tolist(), values.tolist()):
            args = ",".join(f'"{k}":{v!r}' for k, v in zip(series, row))
            lines.append(f'{head}{t!r},"args":{{{args}}}}}')
    return lines


def write_trace(prof, out, time_unit="cycle", warps=True, flows=True, counters=True,
                bucket_cycles=None) -> int:
    """Write the trace as JSON to the binary stream ``out``, chunk by chunk as it is produced
    (no list of events is ever built); return the number of flow arrows. AI-core kernels:
    ``counters`` adds the GM / L2 / HBM bytes-per-cycle counter tracks, in buckets of
    ``bucket_cycles`` (default: the kernel's cycles in at most 512 buckets)."""
    bucket_cycles = check_trace_args(prof, time_unit, warps, flows, counters, bucket_cycles)
    at, shift = _times(prof, time_unit)
    rec = prof.records
    unit_text = ("1 trace microsecond = 1 cycle" if time_unit == "cycle" else
                 f"microseconds at the machine clock of {prof.machine.clock_ghz} GHz")
    arrows = _flows(prof, at) if flows and len(rec) else None
    n_flows = len(arrows) if arrows is not None else 0
    other = {"generator": "pypto_sim", "kernel": prof.kernel_name,
             "machine": prof.machine.name, "grid": list(prof.grid),
             "block": list(prof.block), "total_cycles": prof.total_cycles,
             "clock_ghz": prof.machine.clock_ghz, "time_unit": unit_text, "flows": n_flows}
    if getattr(prof.program, "aicore", False):
        del other["block"]        # an AI core's block is its units, not lanes (docs/aicore.md)
    out.write(json.dumps({"displayTimeUnit": "ms" if time_unit == "cycle" else "ns",
                          "otherData": other}, separators=(",", ":"))[:-1].encode())
    out.write(b',"traceEvents":[\n')
    cores = sorted(set(rec.core.tolist()))
    processes = []
    for c in cores:
        pid = c + 1
        processes += [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"core {c}"}},
                      {"ph": "M", "name": "process_sort_index", "pid": pid,
                       "args": {"sort_index": c}},
                      {"ph": "M", "name": "process_labels", "pid": pid,
                       "args": {"labels": f"{prof.kernel_name}; {unit_text}"}}]
    chip_pid = prof.machine.cores + 1
    counter_lines = (_counter_events(prof, at, shift, chip_pid, bucket_cycles)
                     if counters and len(rec) and getattr(prof.program, "aicore", False) else [])
    if any(f'"pid":{chip_pid},' in line for line in counter_lines):
        processes += [{"ph": "M", "name": "process_name", "pid": chip_pid,
                       "args": {"name": "chip memory (L2, HBM)"}},
                      {"ph": "M", "name": "process_sort_index", "pid": chip_pid,
                       "args": {"sort_index": chip_pid}}]
    out.write(",\n".join([json.dumps(p, separators=(",", ":")) for p in processes]
                         + counter_lines).encode())
    out.write(b"\n")
    if len(rec):
        tracks = layout(prof, warps=warps)
        for a, b in _ranges(len(tracks.tid)):
            for rows in _track_rows(tracks, a, b):
                out.write(rows.data)
        text = _SliceText(prof)
        for a, b in _ranges(len(rec)):
            out.write(_slice_rows(prof, text, tracks, a, b, at, shift, False).data)
            if warps:
                out.write(_slice_rows(prof, text, tracks, a, b, at, shift, True).data)
        for a, b in _ranges(n_flows):
            for phase in ("s", "f"):
                out.write(_flow_rows(tracks, arrows, 1, a, b, shift, phase).data)
    out.write(b"]}\n")
    return n_flows


def build_trace(prof, time_unit="cycle", warps=True, flows=True, counters=True,
                bucket_cycles=None) -> dict:
    """The trace as a dict (what ``save_trace`` writes, read back)."""
    buf = io.BytesIO()
    write_trace(prof, buf, time_unit=time_unit, warps=warps, flows=flows, counters=counters,
                bucket_cycles=bucket_cycles)
    return json.loads(buf.getvalue())


def save_trace(prof, path, time_unit="cycle", warps=True, flows=True, counters=True,
               bucket_cycles=None) -> Path:
    """Write the trace of ``prof`` as Chrome trace event JSON to ``path`` (streamed: memory
    stays bounded by a chunk of events, whatever the launch's size); return the path. The
    arguments, the path and the profile are checked before anything is touched, and the file
    is written beside the target and then moved onto it (pypto_sim/output_files.py): a failure leaves a file
    already at ``path`` as it was."""
    bucket_cycles = check_trace_args(prof, time_unit, warps, flows, counters, bucket_cycles,
                                     call="save_trace")
    path = output_path(path, "save_trace", example="trace.json")

    def write(f):
        write_trace(prof, f, time_unit=time_unit, warps=warps, flows=flows, counters=counters,
                    bucket_cycles=bucket_cycles)

    return write_file(path, write, "save_trace", binary=True)


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
        if ph == "C":
            used_procs.add(ev["pid"])
            values = ev.get("args")
            if not number(ev, "ts") or not isinstance(values, dict) or not values or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()):
                errors.append(f"event {k} (C): needs a non-negative ts and numeric args")
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


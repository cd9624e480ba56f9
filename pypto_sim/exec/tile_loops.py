"""The vector tile kernels' float loops, generated per opcode from the ISA table's ``float``
expressions (part of the generated ALU module, exec/alu_source.py).

tile_elementwise, _expand_op (exec/compiled/tiles.py) and _fold (exec/compiled/reductions.py)
compute every element as ``round_to(dt, alu_float(op, a, b, c, dt))``: the opcode is decided per element through the
table's chain of expressions and the dtype per element in round_to. The functions generated
here do the same arithmetic with the decisions taken once per tile: one loop per opcode with
its expression inlined, and for float32 the rounding inlined (``np.float64(np.float32(x))``,
which is round_to's float32 case); other dtypes still round through round_to. They return
False for an opcode the table gives no float expression (the generic loop then runs, as
before). A fold takes its lines side by side (element j of every line, then j + 1): each
line is still folded in its own order, and the lines' chains of dependent roundings overlap.
int32 tiles keep the generic loops (integer semantics, wrapping).
"""
from __future__ import annotations

ELEMENTWISE_FAMILIES = ("tile_alu",)
FOLD_FAMILIES = ("tile_reduce", "tile_col_reduce")
EXPAND_FAMILIES = ("tile_expand_op", "tile_col_expand_op")

_HEAD = '\n\n@njit(cache=True, error_model="numpy")\n'

_ELEMENTWISE = """    if op == {opcode}:  # {name}
        if dt == DT_FLOAT32:
            # slices: indices numba knows are not negative, so the loop vectorises
            a_, c_ = l1[a0:a0 + count], l1[d0:d0 + count]
            b_ = l1[b0:b0 + count] if b0 >= 0 and not use_scalar else a_
            fixed_ = scalar if use_scalar else 0.0
            tile_ = b0 >= 0 and not use_scalar
            for e_ in range(count):
                a = a_[e_]
                b = b_[e_] if tile_ else fixed_
                c = c_[e_]
                out[e_] = np.float64(np.float32({expr}))
        else:
            for e_ in range(count):
                a = l1[a0 + e_]
                b = scalar if use_scalar else (l1[b0 + e_] if b0 >= 0 else 0.0)
                c = l1[d0 + e_]
                out[e_] = round_to(dt, {expr})
        return True
"""

_FOLD = """    if op == {opcode}:  # {name}
        for i_ in range(n_out):
            out[i_] = init if n_in == 0 else l1[src + i_ * step_out]
        c = 0.0
        if dt == DT_FLOAT32:
            for j_ in range(1, n_in):
                for i_ in range(n_out):
                    a = out[i_]
                    b = l1[src + j_ * step_in + i_ * step_out]
                    if not (a != a and b != b):     # two NaNs: the partial result's stays
                        out[i_] = np.float64(np.float32({expr}))
        else:
            for j_ in range(1, n_in):
                for i_ in range(n_out):
                    a = out[i_]
                    b = l1[src + j_ * step_in + i_ * step_out]
                    if not (a != a and b != b):     # two NaNs: the partial result's stays
                        out[i_] = round_to(dt, {expr})
        for i_ in range(n_out):
            out[i_] = round_to(dt, out[i_])
        return True
"""

_EXPAND = """    if op == {opcode}:  # {name}
        c = 0.0
        if dt == DT_FLOAT32:
            for r_ in range(rows):
                row_ = l1[a0 + r_ * apitch:a0 + r_ * apitch + cols]
                vec_ = l1[v0:v0 + cols] if per_col else l1[v0 + r_:v0 + r_ + 1]
                dst_ = out[r_ * cols:(r_ + 1) * cols]
                for c_ in range(cols):
                    a = row_[c_]
                    b = vec_[c_] if per_col else vec_[0]
                    dst_[c_] = np.float64(np.float32({expr}))
        else:
            for r_ in range(rows):
                for c_ in range(cols):
                    a = l1[a0 + r_ * apitch + c_]
                    b = l1[v0 + c_] if per_col else l1[v0 + r_]
                    out[r_ * cols + c_] = round_to(dt, {expr})
        return True
"""


# an expand op whose expression is exp(...) in float32: exp_near (exec/compiled/scalars.py) in a
# loop without calls over each row's slice (whose indices numba knows are not negative, so
# the loop vectorises), and libm's exp, the expression itself, where exp_near cannot vouch
# for the float32 result (exact_f32_of_exp's rule)
_EXPAND_EXP = """    if op == {opcode}:  # {name}
        c = 0.0
        if dt == DT_FLOAT32:
            flag = np.empty(rows * cols, np.int8)
            unsure = 0
            for r_ in range(rows):
                row_ = l1[a0 + r_ * apitch:a0 + r_ * apitch + cols]
                vec_ = l1[v0:v0 + cols] if per_col else l1[v0 + r_:v0 + r_ + 1]
                dst_ = out[r_ * cols:(r_ + 1) * cols]
                mark_ = flag[r_ * cols:(r_ + 1) * cols]
                if per_col:
                    for c_ in range(cols):
                        a = row_[c_]
                        b = vec_[c_]
                        x_ = np.float64({inner})
                        y_, f_ = exp_f32_near(x_)
                        dst_[c_] = y_
                        mark_[c_] = f_
                        unsure |= f_
                else:
                    b = vec_[0]
                    for c_ in range(cols):
                        a = row_[c_]
                        x_ = np.float64({inner})
                        y_, f_ = exp_f32_near(x_)
                        dst_[c_] = y_
                        mark_[c_] = f_
                        unsure |= f_
            if unsure:
                for e_ in range(rows * cols):
                    if flag[e_]:
                        r_, c_ = e_ // cols, e_ % cols
                        a = l1[a0 + r_ * apitch + c_]
                        b = l1[v0 + c_] if per_col else l1[v0 + r_]
                        out[e_] = np.float64(np.float32({expr}))
        else:
            for r_ in range(rows):
                for c_ in range(cols):
                    a = l1[a0 + r_ * apitch + c_]
                    b = l1[v0 + c_] if per_col else l1[v0 + r_]
                    out[r_ * cols + c_] = round_to(dt, {expr})
        return True
"""


def _exp_inner(expr: str):
    """The argument of an expression that is exp(...) and nothing else, or None."""
    if not (expr.startswith("np.exp(") and expr.endswith(")")):
        return None
    inner, depth = expr[len("np.exp("):-1], 0
    for ch in inner:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return None              # np.exp(a) + np.exp(b): the first call closes early
    return inner


def _branches(isa, families, template) -> list:
    out = []
    for s in isa.specs:
        if s.family not in families or not s.float_expr:
            continue
        inner = _exp_inner(s.float_expr) if template is _EXPAND else None
        chosen = _EXPAND_EXP if inner is not None else template
        out.append(chosen.format(opcode=s.opcode, name=s.name, expr=f"np.float64({s.float_expr})",
                                 inner=inner))
    return out


def tile_loops_source(isa) -> str:
    """elementwise_float, fold_float and expand_float for the table's opcodes."""
    out = [_HEAD, "def elementwise_float(op, l1, d0, a0, b0, scalar, use_scalar, count, dt, out):\n",
           '    """tile_elementwise\'s float results in out (False: no loop for op)."""\n']
    out += _branches(isa, ELEMENTWISE_FAMILIES, _ELEMENTWISE)
    out.append("    return False\n")
    out += [_HEAD, "def fold_float(op, l1, src, rows, cols, pitch, init, dt, per_col, out):\n",
            '    """_fold\'s float results in out, src\'s rows pitch words apart (False: no loop for op)."""\n',
            "    n_out, n_in = (cols, rows) if per_col else (rows, cols)\n",
            "    step_out, step_in = (1, pitch) if per_col else (pitch, 1)\n"]
    out += _branches(isa, FOLD_FAMILIES, _FOLD)
    out.append("    return False\n")
    out += [_HEAD, "def expand_float(op, l1, a0, v0, rows, cols, apitch, dt, per_col, out):\n",
            '    """_expand_op\'s float results in out (False: no loop for op)."""\n']
    out += _branches(isa, EXPAND_FAMILIES, _EXPAND)
    out.append("    return False\n")
    return "".join(out)

"""Random kernel generators that several test files run: RandomKernel (int32 control flow whose
source is plain Python, with the fake `pto` that runs it per lane) and float_kernel (float
lane math, divergent ifs, loops, L1 round trips)."""
import random

class RandomKernel:
    """A random int32 kernel: nested if/elif/else, for-range (1-3 arguments, negative steps,
    per-lane and uniform bounds), while, per-lane break/continue/return, and/or (guarding
    loads that would fault), ternaries, pto.select, min/max/abs, helpers with early returns
    from loops, helpers calling helpers. Every value stays small, so Python ints and int32
    agree. Its source is plain Python: the reference runs it per lane with a fake `pto`."""

    OPS = ["+", "-", "*", "//", "%", "min", "max", "&", "^", "ifexp", "helper", "or", "and",
           "neg", "abs", "select", "shl"]

    def __init__(self, seed):
        import random
        self.r = random.Random(seed)
        self.slot = self.loop_id = 0
        self.helpers = []
        self.lane, self.uni = "i", "n"

    def var(self, scope=()):
        params = ("a", "b") if self.lane == "a" else ()        # helpers assign their parameters too
        return self.r.choice(["v0", "v1", "v2", "v3", *params, *scope])

    def atom(self, scope):
        r = self.r.random()
        if r < 0.78:
            return (self.var(scope) if r < 0.45 else self.lane if r < 0.6 else self.uni if r < 0.7
                    else f"pto.load(a + ({self.var(scope)}) % 16)" if self.lane == "i"
                    else str(self.r.randint(-5, 9)))
        return str(self.r.randint(-5, 9))

    def expr(self, scope, depth=0):
        if depth > 1 or self.r.random() < 0.3:
            return self.atom(scope)
        a, b = self.expr(scope, depth + 1), self.expr(scope, depth + 1)
        op = self.r.choice(self.OPS)
        return {"min": f"min({a}, {b})", "max": f"max({a}, {b})", "neg": f"(-{a})", "abs": f"abs({a})",
                "//": f"({a} // {self.r.randint(1, 7)})", "%": f"({a} % {self.r.randint(1, 7)})",
                "ifexp": f"({a} if {self.cond(scope, depth + 1)} else {b})",
                "select": f"pto.select({self.cond(scope, depth + 1)}, {a}, {b})",
                "helper": f"{self.r.choice(self.helpers)}({a}, {b})" if self.helpers else f"({a} + {b})",
                "shl": f"({a} << {self.r.randint(0, 3)})"}.get(op, f"({a} {op} {b})")

    def cond(self, scope, depth=0):
        c = f"{self.expr(scope, depth + 1)} {self.r.choice(['<', '<=', '>', '>=', '==', '!='])} " \
            f"{self.expr(scope, depth + 1)}"
        r, x = self.r.random(), self.var(scope)
        if r < 0.15:
            return f"{c} and {self.expr(scope, depth + 1)} % 3 != 0"
        if r < 0.3:
            return f"{c} or {self.atom(scope)} > 2"
        if r < 0.35:
            return f"not ({c})"
        if r < 0.45 and self.lane == "i":
            return f"0 <= {x} < 16 and pto.load(a + {x}) > {self.r.randint(-3, 3)}"
        if r < 0.5 and self.lane == "i":
            return f"i >= 16 or pto.load(a + i) < {self.r.randint(-3, 3)}"
        return c

    def assign(self, ind, scope):
        return [f"{ind}{self.var()} = ({self.expr(scope)}) % 97"]

    def store(self, ind, scope, value=None):
        if self.lane != "i":                      # helpers have no output: assign instead
            return self.assign(ind, scope)
        self.slot += 1
        return [f"{ind}o[i * S + {self.slot}] = {value or self.expr(scope)}"]

    def block(self, ind, depth, scope, in_loop):
        return [line for _ in range(self.r.randint(1, 3))
                for line in self.stmt(ind, depth, scope, in_loop)]

    def stmt(self, ind, depth, scope, in_loop):
        r = self.r.random() * (0.4 if depth >= 3 else 1)
        inner = ind + "    "
        if r < 0.25:
            return self.assign(ind, scope)
        if r < 0.4:
            return self.store(ind, scope)
        if r < 0.55:
            lines = [f"{ind}if {self.cond(scope)}:", *self.block(inner, depth + 1, scope, in_loop)]
            k = self.r.random()
            if k < 0.3:
                lines += [f"{ind}elif {self.cond(scope)}:", *self.block(inner, depth + 1, scope, in_loop)]
            if k < 0.6:
                lines += [f"{ind}else:", *self.block(inner, depth + 1, scope, in_loop)]
            return lines
        if r < 0.65 and in_loop:
            return [f"{ind}if {self.cond(scope)}:", f"{inner}{self.r.choice(['break', 'continue'])}"]
        if r < 0.7:
            if self.lane != "i":
                return [f"{ind}if {self.cond(scope)}:", f"{inner}return ({self.expr(scope)}) % 97"]
            return [f"{ind}if {self.cond(scope)}:", *self.store(inner, scope), f"{inner}return"]
        self.loop_id += 1
        if r < 0.85:
            k, lo, hi = f"k{self.loop_id}", f"({self.atom(scope)}) % 4", f"({self.expr(scope)}) % 6"
            rng = self.r.choice([f"range({hi})", f"range({lo}, {hi})",
                                 f"range({lo}, {hi}, {self.r.randint(1, 3)})",
                                 f"range({hi}, {lo} - 2, -{self.r.randint(1, 2)})"])
            lines = [f"{ind}{k} = 0", f"{ind}for {k} in {rng}:",
                     *self.block(inner, depth + 1, scope + (k,), True)]
            return lines + (self.store(ind, scope, k) if self.r.random() < 0.5 and self.lane == "i" else [])
        w = f"w{self.loop_id}"
        return [f"{ind}{w} = 0", f"{ind}while {w} < ({self.expr(scope)}) % 5:", f"{inner}{w} += 1",
                *self.block(inner, depth + 1, scope + (w,), True)]

    def source(self):
        parts = []
        for h in range(self.r.randint(0, 2)):
            self.lane, self.uni = "a", "b"
            parts.append("\n".join(["@pto.kernel", f"def h{h}(a, b):", "    v0 = a", "    v1 = b",
                                    "    v2 = a - b", "    v3 = 1", *self.block("    ", 1, (), False),
                                    f"    return ({self.expr(())}) % 97"]))
            self.helpers.append(f"h{h}")
        self.lane, self.uni = "i", "n"
        lines = ["@pto.kernel", "def kern(o, a, n):", "    i = pto.get_global_id()", "    v0 = i % 5",
                 "    v1 = n + 1", "    v2 = 3", "    v3 = n * 2 - i", *self.block("    ", 0, (), False)]
        for _ in range(4):
            lines += self.stmt("    ", 0, (), False)
        lines += self.store("    ", (), "v0 + v1 * 100 + v2 * 10000 + v3 * 1000000")
        parts.append("\n".join(lines))
        return f"S = {self.slot + 1}\n" + "\n\n".join(parts) + "\n"


class FakePtr:
    """What a kernel pointer means in plain Python: an array and an offset."""

    def __init__(self, arr, off=0):
        self.arr, self.off = arr, off

    def __add__(self, k):
        return FakePtr(self.arr, self.off + k)

    __radd__ = __add__

    def __setitem__(self, k, v):
        assert 0 <= self.off + k < len(self.arr)
        self.arr[self.off + k] = v


class FakePto:
    """Just enough of `pto` to run a RandomKernel's source as Python, one lane at a time."""
    lane = 0
    kernel = staticmethod(lambda fn: fn)
    select = staticmethod(lambda c, x, y: x if c else y)

    @classmethod
    def get_global_id(cls, dim=0):
        return cls.lane

    @staticmethod
    def load(p):
        assert 0 <= p.off < len(p.arr), "the reference never reads out of bounds"
        return int(p.arr[p.off])


FLOAT_UNARY = ["pto.exp({})", "pto.log(abs({}) + 1.0)", "pto.sqrt(abs({}))", "pto.rsqrt(abs({}) + 0.5)",
               "abs({})", "-({})", "pto.cast(pto.cast({}, pto.int32), pto.float32)"]
FLOAT_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / ({} + 3.5))", "pto.min({}, {})",
                "pto.max({}, {})", "pto.fma(None, {}, {}, 0.25)", "({} // 1.5 + {})", "({} % 2.5 + {})"]


def float_kernel(seed, dtype_name="float32"):
    """A random float32 / float16 / float64 kernel: lane math, divergent ifs, loops, L1 round
    trips."""
    r = random.Random(seed)
    values = ["x", "y", "z"]

    def expr(depth=0):
        if depth > 2 or r.random() < 0.3:
            return r.choice(values + [repr(round(r.uniform(-3, 3), 3))])
        if r.random() < 0.35:
            return r.choice(FLOAT_UNARY).format(expr(depth + 1))
        return r.choice(FLOAT_BINARY).format(expr(depth + 1), expr(depth + 1))

    body = ["    i = pto.get_global_id()", "    lid = pto.get_local_id()",
            "    x = pto.load(a + i)", "    y = pto.load(b + i)", "    z = x * 0.5",
            "    buf = pto.alloc_local(64, DT)"]
    for _ in range(r.randint(3, 7)):
        kind = r.random()
        target = r.choice(values)
        if kind < 0.4:
            body.append(f"    {target} = pto.cast({expr()}, DT)")
        elif kind < 0.7:
            body.append(f"    if {r.choice(values)} > {round(r.uniform(-1, 1), 2)}:")
            body.append(f"        {target} = pto.cast({expr()}, DT)")
            body.append("    else:")
            body.append(f"        {target} = pto.select(i % 3 == 0, pto.cast({expr()}, DT), {target})")
        elif kind < 0.85:
            body.append(f"    for k in range(i % {r.randint(1, 4)}):")
            body.append(f"        {target} = pto.cast({target} * 0.5 + pto.cast(k, pto.float32), DT)")
        else:
            body.append(f"    pto.store(buf + lid, {target})")
            body.append("    pto.barrier()")
            body.append(f"    {target} = pto.load(buf + (lid ^ 1)) + {target}")
    body.append("    pto.store(o + i, x + y + z)")
    body.insert(4, "    z = pto.cast(x * 0.5, DT)")
    body.pop(5)
    return (f"DT = pto.{dtype_name}\n@pto.kernel\ndef kern(a, b, o):\n" + "\n".join(body)
            + "\n")

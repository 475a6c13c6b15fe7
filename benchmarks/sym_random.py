"""Random expression pairs for the comparison of yobx's symbolic algebra with
SymPy (compare_sym.py --random). Built the way tests/sym/test_sym_properties.cpp
builds its expressions: random trees over backed sizes s0..s3 (>= 2) and one
unbacked size u0 (>= 0), and pairs of five kinds:

  neg_num       class 1: a numerator below the divisor, with a negative constant
                (Mod(s1 - 1, s1) is s1 - 1, (q*s1 - 1)//s1 is q - 1);
  multi_div     class 2: a divisor of more than one term ((A*D)//D is A,
                Mod(A*D + R, D) is Mod(R, D), Mod(Mod(R, j*D), D) is
                Mod(R, D), (D*R)//(k*D) is R//k);
  lattice       class 3: Max/Min laws (absorption, common summand, positive
                common factor, -Max(-a, -b) == Min(a, b), Min + Max == a + b);
  div_identity  class 4: k*(x//k) + Mod(x, k) == x and its forms,
                ((s**2)//c)//s == s//c, (p//a + c)//k == (p + c*a)//(a*k);
  perturbed     one side of a pair of the classes above changed (mostly unequal);
  unrelated     two random expressions.

A pair of the four classes is sometimes put in a context (the same summand,
factor or Max on both sides). Every pair is `left ; right` in the printed
syntax of torch and yobx (`//`, Mod, Max, Min).
"""
import random

BACKED = ["s0", "s1", "s2", "s3"]
UNBACKED = ["u0"]
CLASSES = ["neg_num", "multi_div", "lattice", "div_identity"]


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def pick(self, xs):
        return self.rng.choice(xs)

    def const(self, lo=-3, hi=9):
        return self.rng.randint(lo, hi)

    def sym(self):
        return self.pick(UNBACKED) if self.rng.random() < 0.1 else self.pick(BACKED)

    def leaf(self):
        if self.rng.random() < 0.7:
            return self.sym()
        return str(self.const())

    def divisor(self):
        r = self.rng.random()
        if r < 0.5:
            return str(self.rng.randint(1, 8))
        if r < 0.75:
            return self.pick(BACKED)
        return self.multi()

    def multi(self):
        """A divisor of more than one term, at least 1 for sizes >= 2."""
        a, b = self.rng.sample(BACKED, 2)
        return self.pick([f"{a} + {self.rng.randint(1, 3)}", f"{a} - 1", f"{a} + {b}", f"2*{a} - 1", f"{a}*{b} + 1"])

    def expr(self, depth=3):
        if depth == 0 or self.rng.random() < 0.25:
            return self.leaf()
        op = self.pick(["+", "-", "*", "//", "Mod", "Max", "Min", "neg", "+", "*"])
        a = self.expr(depth - 1)
        if op == "neg":
            return f"-({a})"
        if op in ("//", "Mod"):
            d = self.divisor()
            return f"({a})//({d})" if op == "//" else f"Mod({a}, {d})"
        b = self.expr(depth - 1)
        if op in ("Max", "Min"):
            return f"{op}({a}, {b})"
        return f"({a}) {op} ({b})"

    def poly(self):
        """A polynomial of sizes (sometimes with an atom) for quotients."""
        parts = []
        for _ in range(self.rng.randint(1, 2)):
            f = self.pick([self.sym(), f"{self.rng.randint(1, 4)}*{self.sym()}", f"{self.sym()}*{self.sym()}", str(self.const(1, 9))])
            parts.append(f)
        if self.rng.random() < 0.2:
            parts.append(self.expr(1))
        return " + ".join(f"({p})" for p in parts)

    def plain(self):
        """A polynomial of sizes without // and Mod."""
        return " + ".join(
            f"({self.pick([self.sym(), f'{self.rng.randint(-4, 4)}*{self.sym()}', f'{self.sym()}*{self.sym()}', str(self.const())])})"
            for _ in range(self.rng.randint(1, 3)))

    # ---------------------------------------------------------------- classes

    def neg_num(self):
        s = self.pick(BACKED)
        q, x = self.poly(), self.expr(2)
        k = self.rng.randint(2, 8)
        c = self.rng.randint(0, k)
        a = self.sym()
        return self.pick([
            (f"Mod({s} - 1, {s})", f"{s} - 1"),
            (f"({s} - 1)//{s}", "0"),
            (f"({s} - 2)//{s}", "0"),
            (f"Mod({s} - 2, {s})", f"{s} - 2"),
            (f"(({q})*{s} + {s} - 1)//{s}", f"{q}"),
            (f"Mod(({q})*{s} - 1, {s})", f"{s} - 1"),
            (f"(({q})*{s} - 1)//{s}", f"{q} - 1"),
            (f"({x}) + Mod({s} - 1, {s})", f"({x}) + {s} - 1"),
            (f"{s} - Mod({s} - 1, {s}) + {s} - 1", s),
            (f"{k}*(({a} + {s} + {k - 1}*Mod(-1, {s}) + {c})//{k}) - {k}*Mod(-1, {s})", f"{k}*(({a} + {c + 1})//{k})"),
        ])

    def multi_div(self):
        d, a, r = self.multi(), self.poly(), self.expr(2)
        k = self.rng.randint(2, 16)
        j = self.pick([str(self.rng.randint(2, 5)), self.pick(BACKED)])
        return self.pick([
            (f"(({a})*({d}))//({d})", a),
            (f"({k}*({d}))//({d})", str(k)),
            (f"Mod(({a})*({d}) + ({r}), {d})", f"Mod({r}, {d})"),
            (f"Mod({k}*({d}), {d})", "0"),
            (f"(({a})*({d}) + ({r}))//({d})", f"({a}) + ({r})//({d})"),
            (f"Mod(Mod({r}, {j}*({d})), {d})", f"Mod({r}, {d})"),
            (f"(({d})*({r}))//({k}*({d}))", f"({r})//{k}"),
        ])

    def lattice(self):
        x, y, z, t = self.expr(2), self.expr(2), self.expr(1), self.expr(2)
        k = self.rng.randint(2, 8)
        c = self.const(1, 9)
        return self.pick([
            (f"Min({x}, Max({y}, {x}))", x),
            (f"Max({x}, Min({y}, {x}))", x),
            (f"Min({z}, Min({x}, {y}, Max({x}, {c})))", f"Min({z}, Min({x}, {y}))"),
            (f"Max(({t}) + ({x}), ({t}) + ({y}))", f"({t}) + Max({x}, {y})"),
            (f"Min(({t}) + ({x}), ({y}) + ({t}))", f"Min({x}, {y}) + ({t})"),
            (f"Max({k}*({x}), {k}*({y}))", f"{k}*Max({x}, {y})"),
            (f"Min({k}*({x}), {k}*({y}))", f"{k}*Min({x}, {y})"),
            (f"-Max(-({x}), -({y}))", f"Min({x}, {y})"),
            (f"-Min(-({x}), -({y}))", f"Max({x}, {y})"),
            (f"Min({x}, {y}) + Max({x}, {y})", f"({x}) + ({y})"),
        ])

    def div_identity(self):
        x = self.expr(2)
        k = self.pick([str(self.rng.randint(2, 8)), self.pick(BACKED), self.multi()])
        s = self.pick(BACKED)
        c = self.rng.randint(2, 8)
        p, q, a = self.plain(), self.plain(), self.rng.randint(2, 8)
        return self.pick([
            (f"({k})*(({x})//({k})) + Mod({x}, {k})", x),
            (f"Mod({x}, {k}) + ({k})*(({x})//({k}))", x),
            (f"({x}) - Mod({x}, {k})", f"({k})*(({x})//({k}))"),
            (f"({x}) - ({k})*(({x})//({k}))", f"Mod({x}, {k})"),
            (f"(({s}**2)//{c})//{s}", f"{s}//{c}"),
            (f"((({x})*{s})//{c})//{s}", f"({x})//{c}"),
            (f"(({p})//{a} + {q})//{c}", f"({p} + ({q})*{a})//{a * c}"),
        ])

    def context(self, pair):
        a, b = pair
        r = self.rng.random()
        if r < 0.5:
            return pair
        t = self.expr(2)
        if r < 0.7:
            return f"({a}) + ({t})", f"({t}) + ({b})"
        if r < 0.85:
            s = self.sym()
            return f"{s}*({a})", f"({b})*{s}"
        return f"Max({a}, {t})", f"Max({t}, {b})"

    def perturb(self, pair):
        a, b = pair
        r = self.rng.random()
        if r < 0.5:
            return a, f"({b}) + 1"
        if r < 0.8:
            return a, f"({b}) + ({self.sym()}) - ({self.sym()})"
        return a, f"{self.pick(BACKED)}*({b})"

    def pair(self):
        kind = self.pick(CLASSES * 2 + ["perturbed", "unrelated"])
        if kind == "unrelated":
            return kind, (self.expr(3), self.expr(3))
        if kind == "perturbed":
            return kind, self.perturb(getattr(self, self.pick(CLASSES))())
        return kind, self.context(getattr(self, kind)())


def pairs(n, seed):
    g = Gen(seed)
    return [g.pair() for _ in range(n)]


if __name__ == "__main__":
    import sys
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    for kind, (a, b) in pairs(n, seed):
        print(f"{a} ; {b}  # {kind}")

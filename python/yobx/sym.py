"""yobx's symbolic dims: the canonical form of the expressions yobx writes.

An expression is read from the text yobx prints (and torch prints: ``s0 + 2*s1``,
``(h + 7)//8``, ``Max(a, b)``, ``Mod(n, 3)``) into a canonical form in which equal
expressions print the same::

    from yobx import sym
    e = sym.parse("(h + 7)//8")
    str(e)                                  # '(h + 7)//8'
    e.evaluate({"h": 224})                  # 28
    e.subs({"h": "8*k"})                    # Expr('k')
    sym.parse("2*(x + 1) - 2") == sym.parse("2*x")     # True: one canonical form
    sym.equal("2*(x//2) + x%2", "x")        # True: proven for every size x
    sym.simplify("Max(n, 1)", {"n": (1, None)})        # Expr('n')

Symbols are sizes (integers >= 0) unless ``ranges`` says otherwise: a dict of
name -> (low, high), ``None`` for no bound. Errors (a text that does not parse, a
division by zero, a symbol without a value) are ``ValueError`` with yobx's message.
"""
from . import _yobx

__all__ = ["Expr", "parse", "simplify", "equal", "decide"]


class Expr:
    """An expression over integer symbols in yobx's canonical form.

    Compares and hashes by that form (``parse("a + b") == parse("b + a")``),
    prints as yobx prints (``str``), and combines with ``+ - * // %`` and
    ``Max``/``Min`` (``Expr.max``, ``Expr.min``) with other expressions, their
    text or ints.
    """

    __slots__ = ("_text",)

    def __init__(self, text):
        if isinstance(text, Expr):
            text = text._text
        elif isinstance(text, int) and not isinstance(text, bool):
            text = str(text)
        elif not isinstance(text, str):
            raise TypeError(f"an expression is read from a str or an int, not {type(text).__name__}")
        self._text = _yobx.sym_canonical(_utf8(text, "an expression"))

    @classmethod
    def _of(cls, canonical):
        e = cls.__new__(cls)
        e._text = canonical
        return e

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"Expr({self._text!r})"

    def __eq__(self, other):
        if isinstance(other, (str, int)) and not isinstance(other, bool):
            other = Expr(other)
        return isinstance(other, Expr) and self._text == other._text

    def __hash__(self):
        return hash(self._text)

    @property
    def free_symbols(self):
        """The names of its symbols, in natural order (``s2`` before ``s10``)."""
        return list(_yobx.sym_free_symbols(self._text))

    def is_constant(self):
        return not self.free_symbols

    def __int__(self):
        if not self.is_constant():
            raise ValueError(f"{self._text} is not a constant (its symbols: {', '.join(self.free_symbols)})")
        return int(self._text)

    def subs(self, values):
        """Replaces symbols by expressions (Expr, text or int): ``{"h": "8*k"}``."""
        return Expr._of(_yobx.sym_subs(self._text, {_symbol(k, "subs"): str(Expr(v)) for k, v in values.items()}))

    def evaluate(self, values):
        """Its value for integer values of all its symbols: ``{"h": 224}`` -> 28."""
        for name, v in values.items():
            _symbol(name, "evaluate")
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"evaluate: the value of {name} must be an integer, got {v!r}")
        return _yobx.sym_evaluate(self._text, values)

    def _binary(self, op, other, reverse=False):
        other = Expr(other)
        a, b = (other, self) if reverse else (self, other)
        return Expr._of(_yobx.sym_binary(op, a._text, b._text))

    def __add__(self, other):
        return self._binary("+", other)

    def __radd__(self, other):
        return self._binary("+", other, True)

    def __sub__(self, other):
        return self._binary("-", other)

    def __rsub__(self, other):
        return self._binary("-", other, True)

    def __mul__(self, other):
        return self._binary("*", other)

    def __rmul__(self, other):
        return self._binary("*", other, True)

    def __floordiv__(self, other):
        return self._binary("//", other)

    def __rfloordiv__(self, other):
        return self._binary("//", other, True)

    def __mod__(self, other):
        return self._binary("%", other)

    def __rmod__(self, other):
        return self._binary("%", other, True)

    def max(self, other):
        """``Max(self, other)``."""
        return self._binary("max", other)

    def min(self, other):
        """``Min(self, other)``."""
        return self._binary("min", other)


def _utf8(text, what):
    """`text`, checked to be text UTF-8 can encode (no lone surrogate): what the C++ side reads."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"{what} {text!r} is not UTF-8 text (a lone surrogate at {e.start})") from None
    return text


def _symbol(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what}: a symbol's name is a str, not {type(name).__name__}")
    return _utf8(name, f"{what}: the symbol")


def parse(text):
    """The canonical form of an expression's text: ``parse("(h + 7)//8")``."""
    return Expr(text)


def _ranges(ranges):
    if ranges is None:
        return {}
    out = {}
    for name, r in ranges.items():
        _symbol(name, "ranges")
        try:
            low, high = r
        except (TypeError, ValueError):
            raise ValueError(f"the range of '{name}' must be a pair (low, high), None for no bound; got {r!r}") from None
        for b in (low, high):
            if b is not None and (isinstance(b, bool) or not isinstance(b, int)):
                raise ValueError(f"the range of '{name}': a bound must be an integer or None, got {b!r}")
        out[name] = (low, high)
    return out


def simplify(expr, ranges=None):
    """The expression simplified with what the ranges prove (``Max(n, 1)`` is ``n``
    when ``n >= 1``); symbols without a range are sizes (``>= 0``)."""
    return Expr._of(_yobx.sym_simplify(str(Expr(expr)), _ranges(ranges)))


def decide(a, op, b, ranges=None):
    """``a op b`` decided over every value of the symbols in their ranges: True when
    it is proven, False when its negation is proven, None when neither can be.
    ``op`` is ``==``, ``!=``, ``<``, ``<=``, ``>`` or ``>=``."""
    return _yobx.sym_decide(str(Expr(a)), op, str(Expr(b)), _ranges(ranges))


def equal(a, b, ranges=None):
    """True when ``a == b`` is proven, False when ``a != b`` is proven, None when
    neither: ``equal("2*(x//2) + x%2", "x")`` is True."""
    return decide(a, "==", b, ranges)

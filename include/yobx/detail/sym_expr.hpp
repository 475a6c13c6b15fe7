// yobx/detail/sym_expr.hpp — the canonical form behind SymInt and SymBool.
//
// An integer expression is a polynomial with int64 coefficients over *atoms*:
// symbols, FloorDiv, Mod, Max and Min (whose arguments are canonical
// polynomials in turn). Every constructor returns the canonical form, so two
// equal expressions are the same structure and hash the same. The arithmetic
// is checked: an overflow throws `overflow`, a zero divisor `zero_division`;
// the public layer turns both into messages naming the expression.
//
// The form is built in steps, one header each, read in this order (each opens
// with the laws it applies; docs/symbolic.md's table of laws points to them):
//   detail/sym/core.hpp      representation, checked arithmetic, order
//   detail/sym/build.hpp     sums and products
//   detail/sym/division.hpp  exact and floor division, Mod
//   detail/sym/extremum.hpp  the Max/Min lattice
//   detail/sym/settle.hpp    the sum-level laws and their settle loop
//   detail/sym/walk.hpp      rebuild, evaluate, symbols
//   detail/sym/print.hpp     the printed form
//   detail/sym/cond.hpp      conditions
// The steps call forward (a sum settles through laws defined later), so they
// are one unit: include this header, not a step alone.
#pragma once

#include <yobx/detail/sym/cond.hpp>

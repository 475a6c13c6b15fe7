// yobx/sym.hpp — symbolic dimensions: SymInt, SymBool, parse_sym, ShapeEnv.
//
// SymInt/SymBool (yobx/sym/symint.hpp) are canonical symbolic integers and
// conditions; parse_sym (yobx/sym/parse.hpp) reads their printed form back;
// ShapeEnv (yobx/sym/shape_env.hpp) holds hints, ranges and constraints and
// decides guards, strictly or in draft mode with a report.
#pragma once

#include <yobx/sym/abbreviate.hpp>
#include <yobx/sym/parse.hpp>
#include <yobx/sym/shape_env.hpp>
#include <yobx/sym/symint.hpp>

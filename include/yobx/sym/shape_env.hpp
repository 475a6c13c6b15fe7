// yobx/sym/shape_env.hpp — ShapeEnv: symbols with hints and ranges, checks,
// guards, draft report.
//
// The class, its guards and its draft report are in sym/shape_env/env.hpp; its
// laws, declared there, are defined one concern a header:
//   sym/shape_env/simplify.hpp  what ranges, replacements and divisibility rewrite
//   sym/shape_env/bounds.hpp    the range of an expression
//   sym/shape_env/decide.hpp    deciding a condition
//   sym/shape_env/facts.hpp     what check() records
#pragma once

#include <yobx/sym/shape_env/bounds.hpp>
#include <yobx/sym/shape_env/decide.hpp>
#include <yobx/sym/shape_env/env.hpp>
#include <yobx/sym/shape_env/facts.hpp>
#include <yobx/sym/shape_env/simplify.hpp>

// Shared by the InputObserver tests (one file per phase): the names they use
// and a forward on Values.
#pragma once

#include "error_of.hpp"
#include "support.hpp"

#include <yobx/observer.hpp>

#include <doctest/doctest.h>

using test::error_of;
using test::KVCache;
using test::tensor;
using yobx::DenseTensor;
using yobx::DType;
using T = DenseTensor;
using V = yobx::Value<T>;
using Obs = yobx::InputObserver<T>;
using yobx::kw_only;
using yobx::param;
using yobx::Signature;
using yobx::var_args;
using yobx::var_kwargs;

namespace test {

// A forward on Values: returns its first tensor argument.
inline V first_tensor(yobx::Args<T> args, yobx::Kwargs<T> kwargs) {
    for (const auto& a : args)
        if (a.is_tensor()) return a;
    for (const auto& kv : kwargs)
        if (kv.second.is_tensor()) return kv.second;
    return V();
}

inline const Signature xy{param("x"), param("y", yobx::none)};

}  // namespace test

using test::first_tensor;
using test::xy;

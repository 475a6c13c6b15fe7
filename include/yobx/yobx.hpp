// yobx/yobx.hpp — the umbrella header: every core part of yobx.
//
// Core headers need only the standard library and Boost headers. The LibTorch
// adapter (yobx/adapters/libtorch.hpp) is never included from here.
#pragma once

#include <yobx/error.hpp>
#include <yobx/observer.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/patches.hpp>
#include <yobx/pytree.hpp>
#include <yobx/shape_inference.hpp>
#include <yobx/sym.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>
#include <yobx/value.hpp>

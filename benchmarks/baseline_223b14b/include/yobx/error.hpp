// yobx/error.hpp — the exceptions every part of yobx throws.
//
// All errors derive from yobx::error (a std::runtime_error). The subclasses
// mirror the Python exception the seeds name, so a caller can tell them apart:
// RuntimeError -> runtime_error, ValueError -> value_error,
// NotImplementedError -> not_implemented_error, TypeError -> type_error.
#pragma once

#include <stdexcept>
#include <string>

namespace yobx {

/// Base of every exception thrown by yobx.
///   try { ... } catch (const yobx::error& e) { std::cerr << e.what(); }
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Python's RuntimeError: the inputs are well-formed but the operation cannot proceed.
class runtime_error : public error {
public:
    using error::error;
};

/// Python's ValueError: an argument has the right type but a wrong value.
class value_error : public error {
public:
    using error::error;
};

/// Python's NotImplementedError: a case the library knowingly does not handle.
class not_implemented_error : public error {
public:
    using error::error;
};

/// Python's TypeError: a value has the wrong kind (a list where a tensor was expected...).
class type_error : public error {
public:
    using error::error;
};

}  // namespace yobx

// error_of(f): the message of the exception of type E that f throws, or "no
// error", so a test compares the whole text: CHECK(error_of<value_error>(f) == "...").
#pragma once

#include <yobx/error.hpp>

#include <string>

namespace test {

template <class E = yobx::error, class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace test

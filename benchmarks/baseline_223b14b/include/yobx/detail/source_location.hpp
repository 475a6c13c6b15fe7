// yobx/detail/source_location.hpp — yobx::source_location: std::source_location
// where the standard library provides it, else the same interface built on the
// compiler builtins (clang 14 with libstdc++ 12 has no std::source_location).
#pragma once

#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace yobx {

#if defined(__cpp_lib_source_location)
using source_location = std::source_location;
#else
/// The subset of std::source_location yobx uses.
class source_location {
public:
    static constexpr source_location current(const char* file = __builtin_FILE(), const char* function = __builtin_FUNCTION(),
                                             std::uint_least32_t line = __builtin_LINE()) noexcept {
        source_location l;
        l.file_ = file;
        l.function_ = function;
        l.line_ = line;
        return l;
    }
    constexpr const char* file_name() const noexcept { return file_; }
    constexpr const char* function_name() const noexcept { return function_; }
    constexpr std::uint_least32_t line() const noexcept { return line_; }
    constexpr std::uint_least32_t column() const noexcept { return 0; }

private:
    const char* file_ = "";
    const char* function_ = "";
    std::uint_least32_t line_ = 0;
};
#endif

}  // namespace yobx

// libFuzzer target: parse_sym and parse_sym_bool must either return a value or
// throw yobx::value_error, never crash or invoke UB. What they return must print
// and parse back to an identical value with the same hash and text, and
// evaluating it must give a number or a value_error (division by zero, overflow).
#include <yobx/sym.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

template <class S, class Parse>
void round_trip(std::string_view text, Parse parse) {
    S value;
    try {
        value = parse(text);
    } catch (const yobx::value_error&) {
        return;
    }
    const std::string printed = value.to_string();
    const S again = parse(printed);
    if (!again.identical(value) || again.hash() != value.hash() || again.to_string() != printed) std::abort();
    try {
        yobx::SymbolValues values;
        for (const auto& name : value.free_symbols()) values.emplace(name, static_cast<std::int64_t>(name.size()) - 3);
        (void)value.evaluate_with(values);
    } catch (const yobx::value_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] & 1)
        round_trip<yobx::SymBool>(text, [](std::string_view t) { return yobx::parse_sym_bool(t); });
    else
        round_trip<yobx::SymInt>(text, [](std::string_view t) { return yobx::parse_sym(t); });
    return 0;
}

// libFuzzer target: TreeSpec::from_json must either return a spec or throw
// yobx::value_error, never crash or invoke UB; a spec it returns must survive
// to_json -> from_json unchanged.
#include <yobx/treespec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    yobx::TreeSpec spec;
    try {
        spec = yobx::TreeSpec::from_json(text);
    } catch (const yobx::value_error&) {
        return 0;
    }
    const auto again = yobx::TreeSpec::from_json(spec.to_json());
    if (!(again == spec) || again.hash() != spec.hash() || again.to_string() != spec.to_string()) std::abort();
    return 0;
}

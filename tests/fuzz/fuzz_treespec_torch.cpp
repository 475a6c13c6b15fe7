// libFuzzer target: treespec_loads (torch's pytree JSON) must either return a spec or throw
// yobx::value_error, never crash or invoke UB; a spec it returns must survive
// treespec_dumps -> treespec_loads unchanged, and its text must be stable.
#include <yobx/treespec_torch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    yobx::TreeSpec spec;
    try {
        spec = yobx::treespec_loads(text);
    } catch (const yobx::value_error&) {
        return 0;
    }
    const std::string dumped = yobx::treespec_dumps(spec);
    const yobx::TreeSpec again = yobx::treespec_loads(dumped);
    if (!(again == spec) || yobx::treespec_dumps(again) != dumped) std::abort();
    return 0;
}

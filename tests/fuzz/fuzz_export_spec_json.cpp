// libFuzzer target: ExportSpec::from_json must either return a spec or throw
// yobx::value_error, never crash or invoke UB; a spec it returns must survive
// to_json -> from_json unchanged, and print all its forms.
#include <yobx/observer/export_spec.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    yobx::ExportSpec spec;
    try {
        spec = yobx::ExportSpec::from_json(text);
    } catch (const yobx::value_error&) {
        return 0;
    }
    const auto again = yobx::ExportSpec::from_json(spec.to_json());
    if (!(again == spec) || again.to_json() != spec.to_json()) std::abort();
    (void)spec.report();
    (void)spec.to_python();
    (void)spec.tensorrt_profile();
    (void)spec.onnx_dims();
    return 0;
}

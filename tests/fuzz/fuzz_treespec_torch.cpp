// libFuzzer target: treespec_loads (torch's pytree JSON) must either return a spec or throw
// yobx::value_error, never crash or invoke UB; a spec it returns must survive
// treespec_dumps -> treespec_loads unchanged, and its text must be stable. The same text
// read as a package's yobx.inputs metadata (ProgramInputs): from_json and a check of a call
// shaped after it (symbols and expressions of sizes 0 to 3) return or throw value_error.
#include <yobx/dense_tensor.hpp>
#include <yobx/program.hpp>
#include <yobx/treespec_torch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

void check_program_inputs(std::string_view text) {
    try {
        const yobx::ProgramInputs inputs = yobx::ProgramInputs::from_json(text);
        std::vector<yobx::DenseTensor> flat;
        std::size_t k = text.size();
        for (const auto& in : inputs.inputs()) {
            if (in.dims.size() > 6) return;
            std::vector<std::int64_t> shape;
            for (const auto& d : in.dims) {
                if (d && *d > 4) return;  // small tensors only
                shape.push_back(d ? *d : static_cast<std::int64_t>(k++ % 4));
            }
            flat.push_back(yobx::DenseTensor::zeros(shape, in.dtype == "int64" ? yobx::DType::int64 : yobx::DType::float32));
        }
        inputs.check(flat, {}, "'fuzz.pt2'");
    } catch (const yobx::value_error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_program_inputs(text);
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

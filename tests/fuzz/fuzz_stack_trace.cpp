// libFuzzer target: the stack-trace reader and the report's path rule on
// generated torch.fx traces (fuzz/stack_trace_check.hpp).
#include "stack_trace_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_stack_trace(data, size);
    return 0;
}

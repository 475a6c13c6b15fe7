// libFuzzer target: generated shape-inference graphs (fuzz/shape_graph_check.hpp)
// fail only with yobx errors and agree with their concrete run at the hints.
#include "shape_graph_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_shape_graph(data, size);
    return 0;
}

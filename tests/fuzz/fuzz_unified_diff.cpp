// libFuzzer target: unified_diff of generated text pairs (fuzz/diff_check.hpp)
// applies strictly and gives the second text; empty exactly for equal texts.
#include "diff_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_unified_diff(data, size);
    return 0;
}

// libFuzzer target: the symbolic algebra's laws on generated expressions, against
// a naive evaluator (fuzz/sym_laws_check.hpp): values kept, print-parse identical,
// every proof of the ShapeEnv true at every assignment in range.
#include "sym_laws_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_sym_laws(data, size);
    return 0;
}

// libFuzzer target: generated call sequences through the InputObserver and
// every inference on them (fuzz/observer_check.hpp).
#include "observer_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_observer(data, size);
    return 0;
}

// fuzz-link: -DONNX_ML=1 -DONNX_NAMESPACE=onnx -lonnx -lonnx_proto -lprotobuf
// libFuzzer target: serialized ONNX models through infer_shapes (fuzz/onnx_model_check.hpp),
// with a custom mutator that changes the parsed ModelProto field by field, so that the
// inputs stay models (libprotobuf-mutator is not in Debian).
#include "onnx_model_check.hpp"

#include <cstring>
#include <random>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzzgen::check_onnx_bytes(data, size);
    return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed) {
    std::mt19937 rng(seed);
    ::onnx::ModelProto m;
    if (!m.ParseFromArray(data, static_cast<int>(size))) {
        if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);  // bytes, now and then
        m = fuzzgen::base_model(rng());
    }
    std::vector<std::uint8_t> choices(32);
    for (auto& b : choices) b = static_cast<std::uint8_t>(rng());
    fuzzgen::Bytes in(choices.data(), choices.size());
    fuzzgen::mutate_model(m, in);
    std::string out;
    if (!m.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
    std::memcpy(data, out.data(), out.size());
    return out.size();
}

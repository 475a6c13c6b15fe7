// Structured inputs built from a byte string, for the libFuzzer targets and
// for their replays in the test suite (which feed them bytes from a seeded
// generator): each fuzz_<name>.cpp and test_generated_inputs.cpp call the
// same check, and a check reports a defect by throwing std::logic_error
// (libFuzzer then stops on the uncaught exception, doctest names it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fuzzgen {

/// Reads choices from a byte string; past its end every choice is the first.
class Bytes {
public:
    Bytes(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

    bool empty() const noexcept { return size_ == 0; }
    std::uint8_t byte() noexcept {
        if (size_ == 0) return 0;
        --size_;
        return *data_++;
    }
    /// A number in [0, n) (0 when n is 0).
    std::size_t below(std::size_t n) noexcept {
        if (n <= 1) return 0;
        std::size_t v = byte();
        if (n > 256) v = v << 8 | byte();
        return v % n;
    }
    bool coin() noexcept { return byte() & 1; }
    template <class T, std::size_t N>
    const T& pick(const T (&items)[N]) noexcept {
        return items[below(N)];
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
};

/// `n` bytes from a generator seeded with `seed`, for the replays.
inline std::vector<std::uint8_t> random_bytes(std::uint64_t seed, std::size_t n) {
    std::mt19937_64 rng(seed);
    std::vector<std::uint8_t> out(n);
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
    return out;
}

[[noreturn]] inline void defect(const std::string& what) { throw std::logic_error(what); }

}  // namespace fuzzgen

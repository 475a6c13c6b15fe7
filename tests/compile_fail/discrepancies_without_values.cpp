// check_discrepancies compares elements, so the tensor type's traits must give
// them (to_doubles); without it the compile error says so.
#include <yobx/observer.hpp>

#include <cstdint>
#include <string>
#include <vector>

struct Shapes {
    std::vector<std::int64_t> shape;
};

template <>
struct yobx::tensor_traits<Shapes> {
    static std::vector<std::int64_t> shape(const Shapes& t) { return t.shape; }
    static std::string dtype(const Shapes&) { return "float32"; }
    static Shapes clone(const Shapes& t) { return t; }
    static Shapes empty(const std::vector<std::int64_t>& s, const Shapes&) { return {s}; }
    static Shapes zeros(const std::vector<std::int64_t>& s, const Shapes&) { return {s}; }
};

int main() {
    yobx::InputObserver<Shapes> observer;
    auto f = observer.wrap([](const Shapes& x) { return x; }, yobx::Signature{yobx::param("x")});
    f(Shapes{{2}});
    return static_cast<int>(observer.check_discrepancies([](const yobx::Value<Shapes>& a) { return a; }).size());
}

// The scope InputObserver::observe returns, discarded: the slot is restored at once and nothing
// is recorded.
#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <functional>

int main() {
    yobx::InputObserver<yobx::DenseTensor> observer;
    std::function<yobx::DenseTensor(const yobx::DenseTensor&)> forward = [](const yobx::DenseTensor& x) { return x; };
    observer.observe(forward, yobx::Signature{yobx::param("x")});
    yobx::ObservationScope([] {});
}

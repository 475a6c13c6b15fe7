// A PatchGuard made as a temporary undoes its patches at the end of the statement: a compiler
// must warn (built with -Werror, this fails to compile).
#include <yobx/patches.hpp>

int main() {
    yobx::PatchGuard(yobx::PatchDetails{});
}

// The guard apply_patches_for_model returns, discarded: the shipped patches are undone at once.
#include <yobx/patches.hpp>

int main() {
    yobx::apply_patches_for_model();
}

// The package runner with a LibTorch older than 2.6 (Debian 12's 1.13): a clear #error, not a
// missing-header error from deep inside.
#include <yobx/adapters/aoti.hpp>

int main() {}

// Includes every core yobx header and uses nothing: the object file must hold
// no yobx code (ctest headers.unused_include_emits_nothing). A header that
// registers something at start-up, or a table that points at inline functions
// from a dynamic initializer, would emit them, and everything they call, in
// every file that includes it.
#include <yobx/yobx.hpp>

int unused_include_anchor() { return 0; }

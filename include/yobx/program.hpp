// yobx/program.hpp — an exported program's side of a call: its layout and its inputs' contract.
//
// flatten_call and arrange_call (yobx/program/call.hpp) lay a call out as the program's in_spec
// says (read by treespec_loads, yobx/treespec_torch.hpp); ProgramInputs
// (yobx/program/inputs.hpp) refuses a call that breaks what the program says of its inputs
// before it runs. AOTInductor's PackageRunner (yobx/adapters/aoti.hpp) uses both.
#pragma once

#include <yobx/program/call.hpp>
#include <yobx/program/inputs.hpp>

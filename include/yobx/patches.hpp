// yobx/patches.hpp — reversible patches with diffs and reports.
//
// PatchInfo (one replacement, its sources and diff), PatchDetails (an ordered
// collection, reports over a traced graph), PatchGuard (RAII application),
// the shipped patches of the shape rules and apply_patches_for_model. The
// source capture macro YOBX_PATCH_SOURCE is in <yobx/patch_source.hpp>.
#pragma once

#include <yobx/patch_source.hpp>
#include <yobx/patches/details.hpp>
#include <yobx/patches/guard.hpp>
#include <yobx/patches/patch_info.hpp>
#include <yobx/patches/shipped.hpp>

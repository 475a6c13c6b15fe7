// yobx/patches/shipped.hpp — the patches yobx ships for its own shape rules,
// and apply_patches_for_model, which applies them for the life of a scope.
//
// torch.export fails on `x[a, b] + y[c, b]` when nothing proves a == c or
// that one of them is 1: its broadcasting helpers guard on the sizes. The
// seed's patches replace those guards with sym_max. yobx's strict rules behave
// like torch's; these patches swap the `shape_hooks` entries for rules that
// answer Max(a, c) instead (the guard is the only change).
#pragma once

#include <yobx/patch_source.hpp>
#include <yobx/patches/details.hpp>
#include <yobx/patches/guard.hpp>
#include <yobx/patches/patch_info.hpp>
#include <yobx/shape/rules.hpp>

#include <iostream>
#include <ostream>
#include <span>
#include <string_view>

namespace yobx {

namespace patches {

/// The `broadcast_shapes` hook of the patches: a strict broadcast becomes a
/// sym_max one, so two unrelated dimensions broadcast to Max(a, c) instead of
/// asking the ShapeEnv for a guard it cannot decide.
YOBX_DETAIL_PATCH_SOURCE_DEFERRED(patched_broadcast_shapes,
template <class = void>
Shape patched_broadcast_shapes(ShapeEnv& env, std::span<const Shape> shapes, BroadcastPolicy policy,
                               std::string_view op, source_location where) {
    if (policy == BroadcastPolicy::strict) policy = BroadcastPolicy::sym_max;
    return shape::default_broadcast_shapes(env, shapes, policy, op, where);
}) YOBX_PATCH_SOURCE_END

/// The `infer_size` hook of the patches (Expand, MatMul's batch dimensions):
/// the same change as patched_broadcast_shapes, for two shapes.
YOBX_DETAIL_PATCH_SOURCE_DEFERRED(patched_infer_size,
template <class = void>
Shape patched_infer_size(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy, std::string_view op,
                         source_location where) {
    if (policy == BroadcastPolicy::strict) policy = BroadcastPolicy::sym_max;
    return shape::default_infer_size(env, a, b, policy, op, where);
}) YOBX_PATCH_SOURCE_END

}  // namespace patches

/// The sources of the default shape hooks and of the shipped patches, registered on
/// the first find_source of a pointer of their type (found by argument-dependent
/// lookup: see register_deferred_sources in patch_source.hpp). Templates, as the
/// rules are: a file that includes this header and uses nothing compiles none of them.
template <class = void>
void register_deferred_sources(BroadcastShapesFn) {
    static const bool once = detail::SourceRegistry::instance().add(&shape::default_broadcast_shapes<>,
                                                                    &shape::default_broadcast_shapes_source) &&
                             detail::SourceRegistry::instance().add(&patches::patched_broadcast_shapes<>,
                                                                    &patches::patched_broadcast_shapes_source);
    (void)once;
}
template <class = void>
void register_deferred_sources(InferSizeFn) {
    static const bool once =
        detail::SourceRegistry::instance().add(&shape::default_infer_size<>, &shape::default_infer_size_source) &&
        detail::SourceRegistry::instance().add(&patches::patched_infer_size<>, &patches::patched_infer_size_source);
    (void)once;
}

/// The patches yobx ships, family "yobx": patched_broadcast_shapes and
/// patched_infer_size on `shape_hooks`. Each call returns new patches; their
/// diffs are against the default rules.
template <class = void>
PatchDetails shipped_patches() {
    PatchInfo broadcast = PatchInfo::make(&patches::patched_broadcast_shapes<>, shape_hooks.broadcast_shapes,
                                          {.original = "default_broadcast_shapes", .family = "yobx"});
    broadcast.set_original_source(shape::default_broadcast_shapes_source());
    PatchInfo infer_size =
        PatchInfo::make(&patches::patched_infer_size<>, shape_hooks.infer_size, {.original = "default_infer_size", .family = "yobx"});
    infer_size.set_original_source(shape::default_infer_size_source());
    return {broadcast, infer_size};
}

/// What apply_patches_for_model applies.
struct PatchOptions {
    /// The shipped patches (shipped_patches()).
    bool patch_yobx = true;
    /// The caller's own patches, applied after the shipped ones.
    PatchDetails patches{};
    /// Prints each patch as it is applied and undone, to `log` (std::cout when null).
    bool verbose = false;
    std::ostream* log = nullptr;
};

/// Applies the shipped patches and the caller's for the life of the returned
/// guard; `guard.details()` lists them. The seed's
/// `with apply_patches_for_model(...) as details:`.
///   {
///       auto guard = yobx::apply_patches_for_model({.verbose = true});
///       si.add(x, y);  // [Max(a, c), b]
///   }
template <class = void>
[[nodiscard]] PatchGuard apply_patches_for_model(const PatchOptions& options = {}) {
    PatchDetails all;
    if (options.patch_yobx) all.extend(shipped_patches());
    all.extend(options.patches);
    std::ostream* log = options.verbose ? (options.log ? options.log : &std::cout) : nullptr;
    return PatchGuard(all, log);
}

}  // namespace yobx

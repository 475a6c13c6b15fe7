// yobx/adapters/libtorch/kernel_patch.hpp — a dispatcher kernel override as a PatchInfo.
//
// kernel_patch registers a kernel for an operator and a dispatch key while the patch is applied
// (a PatchGuard scopes it, PatchDetails reports it); override_kernel is its RAII form. The
// dispatcher's warning that a kernel is overridden is filtered, being the point.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/error.hpp>
#include <yobx/patches.hpp>

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <torch/library.h>
#include <torch/version.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace yobx {

namespace libtorch {

namespace detail {

// LibTorch 2.x moved the warning handler to c10::WarningUtils, and its process() takes the Warning.
#if TORCH_VERSION_MAJOR >= 2
using WarningHandlerGuard = c10::WarningUtils::WarningHandlerGuard;
inline c10::WarningHandler* current_warning_handler() { return c10::WarningUtils::get_warning_handler(); }
#else
using WarningHandlerGuard = c10::Warning::WarningHandlerGuard;
inline c10::WarningHandler* current_warning_handler() { return c10::Warning::get_warning_handler(); }
#endif

// Whether a dispatcher message is its override warning: "Overriding a previously registered kernel"
// at the start (LibTorch 1.x), or after 2.x's warn-once preamble ("Warning only once for all
// operators,  other operators may also be overridden.\n  Overriding ...").
inline bool is_override_warning(std::string_view msg) {
    constexpr std::string_view text = "Overriding a previously registered kernel";
    const auto at = msg.find(text);
    return at == 0 || (at != std::string_view::npos && msg.starts_with("Warning only once for all operators"));
}

// Drops the dispatcher's override warning (the override is the point of a kernel patch) and
// forwards the others.
class OverrideWarningFilter : public c10::WarningHandler {
public:
    explicit OverrideWarningFilter(c10::WarningHandler* next) : next_(next) {}
#if TORCH_VERSION_MAJOR >= 2
    void process(const c10::Warning& warning) override {
        if (is_override_warning(warning.msg())) return;
        next_->process(warning);
    }
#else
    void process(const c10::SourceLocation& where, const std::string& msg, const bool verbatim) override {
        if (is_override_warning(msg)) return;
        next_->process(where, msg, verbatim);
    }
#endif

private:
    c10::WarningHandler* next_;
};

}  // namespace detail

/// A patch that overrides the kernel of an aten (or other) operator for one
/// dispatch key: apply() registers `kernel` through the dispatcher, undo()
/// ends the registration and the previous kernel is back. It is a PatchInfo,
/// so a PatchGuard scopes it and PatchDetails reports it.
///   yobx::PatchDetails details;
///   details.append(yobx::libtorch::kernel_patch("aten::relu", c10::DispatchKey::CPU, &leaky_relu_kernel));
///   { yobx::PatchGuard guard(details); ... at::relu(x) calls leaky_relu_kernel ... }
/// `op` is "namespace::name" or "namespace::name.overload"; the kernel's C++
/// signature must match the operator's schema (type_error otherwise). The
/// patch's name is `name`, or the kernel's YOBX_PATCH_SOURCE name, or
/// "<op>[<dispatch key>]"; its family is "libtorch". The dispatcher's own
/// messages about the registration name `where`, the caller by default.
template <class Kernel>
PatchInfo kernel_patch(const std::string& op, c10::DispatchKey key, Kernel kernel, std::string name = {},
                       source_location where = source_location::current()) {
    const auto colons = op.find("::");
    if (colons == std::string::npos || colons == 0 || colons + 2 == op.size())
        throw value_error("kernel_patch: '" + op + "' is not an operator name (namespace::name[.overload])");
    const std::string ns = op.substr(0, colons);
    const std::string rest = op.substr(colons + 2);
    const auto dot = rest.find('.');
    const c10::OperatorName opname(op.substr(0, colons + 2 + std::min(dot, rest.size())),
                                   dot == std::string::npos ? "" : rest.substr(dot + 1));
    if (!c10::Dispatcher::singleton().findSchema(opname))
        throw value_error("kernel_patch: no operator '" + op + "' is registered with the dispatcher");
    const std::string target = op + "[" + c10::toString(key) + "]";
    std::optional<SourceText> source = yobx::detail::source_of_value(kernel);
    if (name.empty()) name = source ? std::string(source->name) : target;
    auto library = std::make_shared<std::optional<torch::Library>>();
    PatchInfo p(
        std::move(name), target, "libtorch",
        [library, ns, rest, key, kernel, op, where] {
            detail::OverrideWarningFilter filter(detail::current_warning_handler());
            detail::WarningHandlerGuard guard(&filter);
            try {
                library->emplace(torch::Library::IMPL, ns, key, where.file_name(), where.line());
                (*library)->impl(rest.c_str(), kernel);
            } catch (const c10::Error& e) {
                library->reset();  // no registration stays behind
                throw type_error("kernel_patch(" + op + "): the dispatcher refused the kernel: " +
                                 e.what_without_backtrace());
            }
        },
        [library] { library->reset(); });
    if (source) p.set_patch_source(*source);
    return p;
}

/// The RAII form for one kernel: the override holds until the guard ends.
///   { auto guard = yobx::libtorch::override_kernel("aten::relu", c10::DispatchKey::CPU, &my_relu); ... }
template <class Kernel>
[[nodiscard]] PatchGuard override_kernel(const std::string& op, c10::DispatchKey key, Kernel kernel, std::string name = {},
                                         source_location where = source_location::current()) {
    return PatchGuard(PatchDetails{kernel_patch(op, key, std::move(kernel), std::move(name), where)});
}

}  // namespace libtorch

}  // namespace yobx

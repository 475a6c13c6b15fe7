// yobx/onnx/ops.hpp — the registry of every operator rule yobx has, by family.
//
// Each family lives in its own header under yobx/onnx/ops/, as ONNX groups its
// schemas under onnx/defs/<family>; this header only puts them together. The
// walk (yobx/adapters/onnx/shapes.hpp) looks rules up here and knows no operator: the
// control-flow rules (ops/control_flow.hpp) get their subgraphs walked through
// NodeContext::subgraph.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/ops/attention.hpp>
#include <yobx/onnx/ops/control_flow.hpp>
#include <yobx/onnx/ops/elementwise.hpp>
#include <yobx/onnx/ops/generator.hpp>
#include <yobx/onnx/ops/indexing.hpp>
#include <yobx/onnx/ops/math.hpp>
#include <yobx/onnx/ops/microsoft.hpp>
#include <yobx/onnx/ops/nn.hpp>
#include <yobx/onnx/ops/quantization.hpp>
#include <yobx/onnx/ops/reshaping.hpp>
#include <yobx/onnx/ops/spatial.hpp>

namespace yobx::onnx {

/// Every rule, built once.
///   const Rule rule = default_registry().find("", "Conv", 17);
inline const OpRegistry& default_registry() {
    static const OpRegistry registry = [] {
        OpRegistry r;
        ops::register_elementwise(r);
        ops::register_reshaping(r);
        ops::register_indexing(r);
        ops::register_spatial(r);
        ops::register_math(r);
        ops::register_nn(r);
        ops::register_attention(r);
        ops::register_generator(r);
        ops::register_control_flow(r);
        ops::register_quantization(r);
        ops::microsoft::register_microsoft(r);
        return r;
    }();
    return registry;
}

/// The operator table of docs/onnx.md, in Markdown: each domain's operators with the
/// opsets from which a rule of their own applies.
inline std::string operator_table() {
    std::map<std::string, std::vector<std::string>> by_domain;
    for (const auto& [key, entries] : default_registry().table()) {
        const auto sep = key.find("::");
        std::string versions;
        for (const auto& e : entries) versions += (versions.empty() ? "" : ", ") + std::to_string(e.since);
        by_domain[key.substr(0, sep)].push_back(key.substr(sep + 2) + " (" + versions + ")");
    }
    std::string s = "| domain | operators (the opsets from which each rule applies) |\n|---|---|\n";
    for (const auto& [domain, ops] : by_domain) {
        s += "| " + (domain.empty() ? std::string("ai.onnx") : domain) + " (" + std::to_string(ops.size()) + ") | ";
        for (std::size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : "") + ops[i];
        s += " |\n";
    }
    return s;
}

}  // namespace yobx::onnx

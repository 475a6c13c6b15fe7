// yobx/adapters/onnx/detail/graph_order.hpp — the order the walk runs a graph's nodes in.
//
// topological_order: each node after the nodes producing its inputs (the model's own order when
// it already is one, found in one pass), a cycle or an input produced by nothing an error naming
// the node; a node's inputs include the outer values its subgraphs read.
#pragma once

#include <yobx/adapters/onnx/detail/light_model.hpp>
#include <yobx/adapters/onnx/detail/protobuf.hpp>
#include <yobx/error.hpp>

#include <array>
#include <cstddef>
#include <memory_resource>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

/// A node as errors name it: 'conv1' (Conv), or its first output when it has no name.
template <class Node>
inline std::string describe(const Node& n) {
    std::string out = "'";
    out += n.name().empty() ? (n.output_size() ? std::string_view(n.output(0)) : std::string_view("?")) : std::string_view(n.name());
    out += "' (";
    if (!n.domain().empty()) (out += n.domain()) += ".";
    return (out += n.op_type()) += ")";
}

inline void collect_outer(const ::onnx::GraphProto& g, std::vector<std::string_view>& v);

/// A node's inputs and the outer values its subgraphs read, into `v` (views of the graph's names).
inline void node_inputs(const ::onnx::NodeProto& n, std::vector<std::string_view>& v) {
    v.assign(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute())
        if (a.type() == ::onnx::AttributeProto::GRAPH) collect_outer(a.g(), v);
}
inline void node_inputs(const LightNode& n, std::vector<std::string_view>& v) {  // (no subgraph)
    v.assign(n.input().begin(), n.input().end());
}
inline void collect_outer(const ::onnx::GraphProto& g, std::vector<std::string_view>& v) {
    std::set<std::string_view> local;
    for (const auto& i : g.input()) local.insert(i.name());
    for (const auto& i : g.initializer()) local.insert(i.name());
    for (const auto& n : g.node())
        for (const auto& o : n.output()) local.insert(o);
    std::vector<std::string_view> inner;
    for (const auto& n : g.node()) {
        node_inputs(n, inner);
        for (const auto i : inner)
            if (!i.empty() && !local.count(i)) v.push_back(i);
    }
}

/// Node indices in an order where each input is produced before it is used; a cycle is an error.
/// The names are views of the graph's strings, which the walk does not change;
/// `defined_outside(name)`: whether a value is the graph's input or initializer, or an outer scope's.
template <class Graph, class DefinedOutside>
std::vector<int> topological_order(const Graph& g, const DefinedOutside& defined_outside) {
    const auto n_nodes = static_cast<std::size_t>(g.node_size());
    // the map's nodes from one growing buffer (a small graph's on the stack), freed at once
    std::array<std::byte, 4096> first_buffer;
    std::pmr::monotonic_buffer_resource memory(first_buffer.data(), first_buffer.size());
    std::pmr::unordered_map<std::string_view, int> producer(&memory);
    producer.reserve(2 * n_nodes);
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& o : g.node(i).output())
            if (!o.empty()) producer[o] = i;
    // Exported models list their nodes in order: one pass proves it and the order is theirs
    // (what the search below would give, its errors included, which it alone reports).
    std::vector<int> order(n_nodes);
    std::vector<std::string_view> deps;
    bool sorted = true;
    for (int i = 0; i < g.node_size() && sorted; ++i) {
        order[static_cast<std::size_t>(i)] = i;
        node_inputs(g.node(i), deps);
        for (const std::string_view name : deps) {
            if (name.empty()) continue;
            // most inputs are an earlier node's output: one lookup
            if (const auto it = producer.find(name); it != producer.end() && it->second < i) continue;
            if (defined_outside(name)) continue;
            sorted = false;
            break;
        }
    }
    if (sorted) return order;
    order.clear();
    std::vector<std::vector<std::string_view>> inputs(n_nodes);
    std::vector<char> listed(n_nodes, 0);
    std::vector<int> state(n_nodes, 0);
    // iterative depth-first search, so that a long chain does not exhaust the stack
    for (int start = 0; start < g.node_size(); ++start) {
        if (state[static_cast<std::size_t>(start)] != 0) continue;
        std::vector<std::pair<int, int>> stack{{start, 0}};
        state[static_cast<std::size_t>(start)] = 1;
        while (!stack.empty()) {
            auto& [n, k] = stack.back();
            auto& d = inputs[static_cast<std::size_t>(n)];
            if (!listed[static_cast<std::size_t>(n)]) {
                node_inputs(g.node(n), d);
                listed[static_cast<std::size_t>(n)] = 1;
            }
            if (k < static_cast<int>(d.size())) {
                const std::string_view name = d[static_cast<std::size_t>(k++)];
                if (name.empty() || defined_outside(name)) continue;
                const auto it = producer.find(name);
                if (it == producer.end())
                    throw value_error("node " + describe(g.node(n)) + ": input '" + std::string(name) +
                                      "' is produced by no node, initializer or graph input");
                auto& st = state[static_cast<std::size_t>(it->second)];
                if (st == 1)
                    throw value_error("the graph is not a DAG: node " + describe(g.node(it->second)) + " depends on itself through '" +
                                      std::string(name) + "'");
                if (st == 0) {
                    st = 1;
                    stack.emplace_back(it->second, 0);
                }
                continue;
            }
            state[static_cast<std::size_t>(n)] = 2;
            order.push_back(n);
            stack.pop_back();
        }
    }
    return order;
}

}  // namespace yobx::onnx::detail

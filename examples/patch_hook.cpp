// Patching a hook of the user's own code for one scope, then asking which
// nodes of a traced graph the patch created. The model's activation is a
// std::function; tracing it needs a leaky relu instead of the relu, the way
// torch.export needs the patched broadcasting rules.
#include <yobx/patches.hpp>

#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

// A graph in torch.fx's shape: each node has a name and a `meta` map whose
// "stack_trace" says where the node was created.
struct Node {
    std::string name;
    std::map<std::string, std::string> meta;
};
struct Graph {
    std::vector<Node> nodes;
};

Graph graph;

// Records an operation of the model with the line that called it.
double op(const std::string& name, double value, yobx::source_location where = yobx::source_location::current()) {
    const std::string frame = "File \"" + std::string(where.file_name()) + "\", line " + std::to_string(where.line()) + ", in " + name;
    graph.nodes.push_back({name + "_" + std::to_string(graph.nodes.size()), {{"stack_trace", frame}}});
    return value;
}

// The user's code: the activation hook and what it holds by default.
YOBX_PATCH_SOURCE(relu,
double relu(double x) {
    return x > 0 ? x : 0.0;
}) YOBX_PATCH_SOURCE_END

std::function<double(double)> activation = relu;

double forward(double x) { return activation(op("mul", 2 * x)); }

// The patch: negative inputs keep a slope.
YOBX_PATCH_SOURCE(leaky_relu,
double leaky_relu(double x) {
    if (x > 0) return x;
    return op("leaky", 0.01 * x);
}) YOBX_PATCH_SOURCE_END

int main() {
    // The name and both sources come from YOBX_PATCH_SOURCE.
    yobx::PatchInfo patch = yobx::PatchInfo::make(&leaky_relu, activation, {.original = "relu", .family = "user"});

    std::cout << "before: forward(-1) = " << forward(-1) << "\n";
    yobx::PatchDetails details;
    {
        auto guard = yobx::apply_patches_for_model({.patch_yobx = false, .patches = {patch}, .verbose = true});
        details = guard.details();
        std::cout << "patched: forward(-1) = " << forward(-1) << "\n";
    }
    std::cout << "after: forward(-1) = " << forward(-1) << "\n\n";

    std::cout << details.make_report(graph);
}

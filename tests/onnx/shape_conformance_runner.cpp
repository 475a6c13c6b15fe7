// Runs yobx's ShapeInference on graphs written by tests/onnx/conformance.py and
// prints every value's dimensions, for the comparison with ONNX's own shape
// inference. Input (stdin), one statement per line, graphs one after another:
//
//   graph <id>
//   symbol <name> <value at assignment 0> <value at assignment 1> ...
//   input <name> float32 <dim>...        a dim is a constant or a symbol
//   const <name> <values>...             a 1-D int64 constant
//   scalar <name> <value>                a 0-D int64 constant
//   node <Op> <output> <input>... [key=value]...
//   end
//
// Each graph runs once per assignment and broadcast policy, in a draft ShapeEnv
// whose hints are the assignment, then once per assignment on constant dims
// (policy "concrete"). Output, tab-separated:
//
//   run <id> <assignment> <policy>
//   value <name> <dim>...      dim = <value at the assignment or ?>|<D: only input symbols, F: a fresh one>|<expression>
//   error <name> <message>     the node that stopped the run
//   done
#include <yobx/shape_inference.hpp>

#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace yobx;

struct Node {
    std::string op, output;
    std::vector<std::string> inputs;
    std::map<std::string, std::string> attrs;
};

struct Graph {
    std::string id;
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> symbols;
    std::vector<std::pair<std::string, std::vector<std::string>>> inputs;
    std::vector<std::tuple<std::string, std::vector<std::int64_t>, bool>> consts;  // name, values, scalar
    std::vector<Node> nodes;
};

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

std::vector<std::int64_t> ints(const std::vector<std::string>& w, std::size_t from) {
    std::vector<std::int64_t> out;
    for (std::size_t i = from; i < w.size(); ++i) out.push_back(std::stoll(w[i]));
    return out;
}

std::vector<std::int64_t> int_list(const std::string& s) {
    std::vector<std::int64_t> out;
    std::istringstream in(s);
    for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
    return out;
}

std::optional<Graph> read_graph(std::istream& in) {
    std::string line;
    std::optional<Graph> g;
    while (std::getline(in, line)) {
        const auto w = words(line);
        if (w.empty()) continue;
        if (w[0] == "graph") {
            g.emplace();
            g->id = w.at(1);
        } else if (!g) {
            throw std::runtime_error("expected `graph`, got: " + line);
        } else if (w[0] == "symbol") {
            g->symbols.emplace_back(w.at(1), ints(w, 2));
        } else if (w[0] == "input") {
            g->inputs.emplace_back(w.at(1), std::vector<std::string>(w.begin() + 3, w.end()));
        } else if (w[0] == "const" || w[0] == "scalar") {
            g->consts.emplace_back(w.at(1), ints(w, 2), w[0] == "scalar");
        } else if (w[0] == "node") {
            Node n{w.at(1), w.at(2), {}, {}};
            for (std::size_t i = 3; i < w.size(); ++i) {
                const auto eq = w[i].find('=');
                if (eq == std::string::npos)
                    n.inputs.push_back(w[i]);
                else
                    n.attrs[w[i].substr(0, eq)] = w[i].substr(eq + 1);
            }
            g->nodes.push_back(std::move(n));
        } else if (w[0] == "end") {
            return g;
        } else {
            throw std::runtime_error("unknown statement: " + line);
        }
    }
    if (g) throw std::runtime_error("graph " + g->id + " has no `end`");
    return std::nullopt;
}

DType dtype_named(const std::string& s) {
    if (s == "int64") return DType::int64;
    if (s == "int32") return DType::int32;
    if (s == "float32") return DType::float32;
    throw std::runtime_error("unknown dtype " + s);
}

class Run {
public:
    Run(const Graph& g, std::size_t assignment, std::optional<BroadcastPolicy> policy)
        : g_(g), env_(ShapeEnvMode::draft), si_(env_, policy.value_or(BroadcastPolicy::strict)) {
        std::map<std::string, SymInt> dims;
        for (const auto& [name, values] : g.symbols) {
            const std::int64_t v = values.at(assignment);
            dims.emplace(name, policy ? env_.create_symbol(name, v, ValueRange::at_least(1)) : SymInt(v));
            inputs_.insert(name);
        }
        for (const auto& [name, spec] : g.inputs) {
            Shape shape;
            for (const auto& d : spec) shape.push_back(dims.contains(d) ? dims.at(d) : SymInt(std::stoll(d)));
            values_.emplace(name, SymTensor(std::move(shape), DType::float32));
        }
        for (const auto& [name, values, scalar] : g.consts) {
            if (scalar) {
                values_.emplace(name, SymTensor::scalar(values.at(0)));
            } else {
                values_.emplace(name, SymTensor::from_values(std::vector<SymInt>(values.begin(), values.end())));
                consts_.emplace(name, values);
            }
        }
    }

    void run(std::ostream& out) {
        for (const Node& n : g_.nodes) {
            try {
                values_.insert_or_assign(n.output, apply(n));
            } catch (const std::exception& e) {
                std::string msg = e.what();
                for (char& c : msg)
                    if (c == '\t' || c == '\n') c = ' ';
                out << "error\t" << n.output << '\t' << msg << '\n';
                return;
            }
            print(out, n.output, values_.at(n.output));
        }
    }

private:
    const Graph& g_;
    ShapeEnv env_;
    ShapeInference si_;
    std::map<std::string, SymTensor> values_;
    std::map<std::string, std::vector<std::int64_t>> consts_;
    std::set<std::string> inputs_;

    const SymTensor& in(const Node& n, std::size_t i) const { return values_.at(n.inputs.at(i)); }
    std::optional<std::vector<std::int64_t>> const_input(const Node& n, std::size_t i) const {
        if (i >= n.inputs.size()) return std::nullopt;
        return consts_.at(n.inputs[i]);
    }
    std::int64_t attr(const Node& n, const std::string& key, std::int64_t fallback) const {
        const auto it = n.attrs.find(key);
        return it == n.attrs.end() ? fallback : std::stoll(it->second);
    }

    SymTensor apply(const Node& n) {
        const std::string& op = n.op;
        if (op == "Add") return si_.add(in(n, 0), in(n, 1));
        if (op == "Sub") return si_.sub(in(n, 0), in(n, 1));
        if (op == "Mul") return si_.mul(in(n, 0), in(n, 1));
        if (op == "Div") return si_.div(in(n, 0), in(n, 1));
        if (op == "Relu") return si_.unary(in(n, 0));
        if (op == "Identity") return si_.identity(in(n, 0));
        if (op == "Cast") return si_.cast(in(n, 0), dtype_named(n.attrs.at("to")));
        if (op == "Concat") {
            std::vector<SymTensor> inputs;
            for (std::size_t i = 0; i < n.inputs.size(); ++i) inputs.push_back(in(n, i));
            return si_.concat(inputs, attr(n, "axis", 0));
        }
        if (op == "Gather") return si_.gather(in(n, 0), in(n, 1), attr(n, "axis", 0));
        if (op == "Reshape") return si_.reshape(in(n, 0), in(n, 1), attr(n, "allowzero", 0) != 0);
        if (op == "Slice") return si_.slice(in(n, 0), in(n, 1), in(n, 2), const_input(n, 3), const_input(n, 4));
        if (op == "Squeeze") return si_.squeeze(in(n, 0), const_input(n, 1));
        if (op == "Unsqueeze") return si_.unsqueeze(in(n, 0), *const_input(n, 1));
        if (op == "Transpose") {
            const auto it = n.attrs.find("perm");
            return si_.transpose(in(n, 0), it == n.attrs.end() ? std::nullopt : std::optional(int_list(it->second)));
        }
        if (op == "MatMul") return si_.matmul(in(n, 0), in(n, 1));
        if (op == "Expand") return si_.expand(in(n, 0), in(n, 1));
        if (op == "Shape") return si_.shape(in(n, 0), attr(n, "start", 0), attr(n, "end", std::numeric_limits<std::int64_t>::max()));
        if (op == "Size") return si_.size(in(n, 0));
        if (op == "NonZero") return si_.nonzero(in(n, 0));
        throw std::runtime_error("the runner does not know the op " + op);
    }

    void print(std::ostream& out, const std::string& name, const SymTensor& t) const {
        out << "value\t" << name;
        for (const SymInt& d : t.shape()) {
            bool determined = true;
            for (const auto& s : d.free_symbols()) determined = determined && inputs_.contains(s);
            std::optional<std::int64_t> v;
            try {
                v = env_.size_hint(d);
            } catch (const value_error&) {
            }
            out << '\t' << (v ? std::to_string(*v) : "?") << '|' << (determined ? 'D' : 'F') << '|' << d.to_string();
        }
        out << '\n';
    }
};

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    try {
        while (const auto g = read_graph(std::cin)) {
            const std::size_t assignments = g->symbols.empty() ? 1 : g->symbols.front().second.size();
            for (std::size_t k = 0; k < assignments; ++k) {
                for (const auto policy : {BroadcastPolicy::strict, BroadcastPolicy::sym_max, BroadcastPolicy::new_symbol}) {
                    std::cout << "run\t" << g->id << '\t' << k << '\t' << to_string(policy) << '\n';
                    Run(*g, k, policy).run(std::cout);
                    std::cout << "done\n";
                }
                std::cout << "run\t" << g->id << '\t' << k << "\tconcrete\n";
                Run(*g, k, std::nullopt).run(std::cout);
                std::cout << "done\n";
            }
        }
    } catch (const std::exception& e) {
        std::cerr << "shape_conformance_runner: " << e.what() << '\n';
        return 2;
    }
}

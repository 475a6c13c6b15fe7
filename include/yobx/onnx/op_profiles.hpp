// yobx/onnx/op_profiles.hpp — custom operators' profiles: a walk through operators yobx has no rule for.
//
// OpProfiles read draft export's op_profiles (JSON): per operator, the input ranks and dtypes
// a profile matches and its outputs' ranks, dtypes and dims (expressions over iK_J, input K's
// axis J), which the walk applies to a node of that operator.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/elem_type.hpp>
#include <yobx/onnx/node_context.hpp>
#include <yobx/sym.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace yobx::onnx {

/// One profile of a custom operator: the inputs it matches (rank, dtype) and what its outputs are.
struct OpProfile {
    struct Input {
        std::int64_t rank = 0;
        int elem_type = elem::undefined;
    };
    struct Output {
        std::int64_t rank = 0;
        int elem_type = elem::undefined;
        std::vector<std::string> dims;  ///< expressions over iK_J (input K's axis J); empty: fresh symbols
    };
    std::vector<Input> inputs;
    std::vector<Output> outputs;

    /// The node's outputs as the profile gives them: its dims over the inputs' axes, else fresh symbols.
    void apply(NodeContext& ctx) const {
        for (std::size_t k = 0; k < outputs.size() && k < ctx.output_count(); ++k) {
            const auto& o = outputs[k];
            Shape s;
            for (std::int64_t j = 0; j < o.rank; ++j) {
                if (o.dims.empty()) {
                    s.push_back(ctx.fresh("an output of a custom operator whose profile gives no dims"));
                    continue;
                }
                SymInt e = parse_sym(o.dims[static_cast<std::size_t>(j)]);
                std::map<std::string, SymInt, std::less<>> subs;
                for (const auto& name : e.free_symbols()) {
                    std::size_t in = 0, ax = 0;
                    if (std::sscanf(name.c_str(), "i%zu_%zu", &in, &ax) == 2 && ctx.input(in) && ctx.input(in)->shape &&
                        ax < ctx.input(in)->shape->size())
                        subs.emplace(name, ctx.input(in)->shape->at(ax));
                    else
                        ctx.fail("op profile dim '" + o.dims[static_cast<std::size_t>(j)] + "': '" + name + "' names no input axis");
                }
                s.push_back(ctx.simplify(e.subs(subs)));
            }
            ctx.set_output(k, o.elem_type, std::move(s));
        }
    }
};

/// draft export's op_profiles: `{"mydomain.MyOp": [{"inputs": [{"rank": 3, "dtype": "float32"}],
/// "outputs": [{"rank": 3, "dtype": "float32", "dims": ["i0_0", "i0_1", "2*i0_2"]}]}]}`.
class OpProfiles {
public:
    /// Reads the JSON; a value_error names the path of what is wrong.
    static OpProfiles from_json(std::string_view text) {
        using yobx::detail::json::Node;
        const yobx::detail::json::Reader rd("op profiles");
        const Node root = yobx::detail::json::Parser(text, "op profiles").parse();
        if (root.kind != Node::Kind::object) rd.fail("$", "expected an object of operator names");
        OpProfiles out;
        for (std::size_t i = 0; i < root.keys.size(); ++i) {
            const std::string path = "$['" + root.keys[i] + "']";
            const Node& list = root.array[i];
            if (list.kind != Node::Kind::array) rd.fail(path, "expected an array of profiles");
            auto& profiles = out.profiles_[root.keys[i]];
            for (std::size_t j = 0; j < list.array.size(); ++j) profiles.push_back(read_profile(rd, list.array[j], path + "[" + std::to_string(j) + "]"));
        }
        return out;
    }
    /// The first profile of `domain.op_type` whose inputs have these ranks and types, or nullptr.
    const OpProfile* match(std::string_view domain, std::string_view op_type, const std::vector<const TensorInfo*>& inputs) const {
        const auto it = profiles_.find((domain.empty() ? std::string() : std::string(domain) + ".") + std::string(op_type));
        if (it == profiles_.end()) return nullptr;
        for (const auto& p : it->second) {
            if (p.inputs.size() != inputs.size()) continue;
            bool ok = true;
            for (std::size_t i = 0; i < inputs.size() && ok; ++i)
                ok = inputs[i] && inputs[i]->rank() == p.inputs[i].rank && inputs[i]->elem_type == p.inputs[i].elem_type;
            if (ok) return &p;
        }
        return nullptr;
    }
    bool empty() const noexcept { return profiles_.empty(); }

private:
    using Node = yobx::detail::json::Node;
    using Reader = yobx::detail::json::Reader;

    // {"inputs": [tensor...], "outputs": [tensor...]}
    static OpProfile read_profile(const Reader& rd, const Node& prof, const std::string& at) {
        if (prof.kind != Node::Kind::object) rd.fail(at, "expected an object");
        OpProfile profile;
        each_tensor(rd, prof, at, "inputs", [&](const Node&, std::int64_t rank, int type, const std::string&) { profile.inputs.push_back({rank, type}); });
        each_tensor(rd, prof, at, "outputs", [&](const Node& t, std::int64_t rank, int type, const std::string& tat) {
            profile.outputs.push_back({rank, type, output_dims(rd, t, rank, tat)});
        });
        return profile;
    }

    // add(tensor, its rank, its element type, its path) for each {"rank": R, "dtype": "float32", ...} of prof[key]
    template <class Add>
    static void each_tensor(const Reader& rd, const Node& prof, const std::string& at, std::string_view key, Add add) {
        const Node* l = prof.find(key);
        if (l == nullptr || l->kind != Node::Kind::array) rd.fail(at, "'" + std::string(key) + "' must be an array");
        for (std::size_t k = 0; k < l->array.size(); ++k) {
            const std::string tat = at + "." + std::string(key) + "[" + std::to_string(k) + "]";
            const Node& t = l->array[k];
            const Node* rank = t.find("rank");
            const Node* dtype = t.find("dtype");
            if (rank == nullptr || rank->kind != Node::Kind::integer || rank->integer < 0 || rank->integer > 64)
                rd.fail(tat, "'rank' must be an integer in [0, 64]");
            if (dtype == nullptr || dtype->kind != Node::Kind::string || elem_type_of(dtype->string) == elem::undefined)
                rd.fail(tat, "'dtype' must name a dtype (float32, int64, ...)");
            add(t, rank->integer, elem_type_of(dtype->string), tat);
        }
    }

    // an output's "dims": `rank` expressions parse_sym reads, or none (fresh symbols)
    static std::vector<std::string> output_dims(const Reader& rd, const Node& t, std::int64_t rank, const std::string& at) {
        std::vector<std::string> out;
        const Node* dims = t.find("dims");
        if (dims == nullptr) return out;
        if (dims->kind != Node::Kind::array || static_cast<std::int64_t>(dims->array.size()) != rank)
            rd.fail(at, "'dims' must be an array of " + std::to_string(rank) + " strings");
        for (const auto& d : dims->array) {
            if (d.kind != Node::Kind::string) rd.fail(at, "'dims' must hold strings");
            try {
                (void)parse_sym(d.string);
            } catch (const yobx::error& e) {
                rd.fail(at, e.what());
            }
            out.push_back(d.string);
        }
        return out;
    }

    std::map<std::string, std::vector<OpProfile>, std::less<>> profiles_;
};

}  // namespace yobx::onnx

// yobx/program/detail/inputs_json.hpp — reading a program's yobx.inputs metadata.
//
// The JSON yobx-export writes: a list of inputs, or {"inputs": [...], "ranges": {...},
// "labels": {...}, "constraints": [...], "observed": {...}}. Each part is read by a step of
// its own; a value_error names the entry and what is wrong.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/program/detail/inputs_data.hpp>
#include <yobx/sym/parse.hpp>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace yobx::detail::program {

using JsonNode = yobx::detail::json::Node;

/// "labels": {"s0": "batch_size", ...}.
inline void read_labels(const JsonNode& labels, InputsData& out) {
    if (labels.kind != JsonNode::Kind::object) throw value_error("ProgramInputs: \"labels\" must be an object");
    for (std::size_t i = 0; i < labels.keys.size(); ++i) {
        if (labels.array[i].kind != JsonNode::Kind::string || !is_symbol(labels.keys[i]))
            throw value_error("ProgramInputs: the label of " + labels.keys[i] + ": expected a symbol and a string");
        out.labels[labels.keys[i]] = labels.array[i].string;
    }
}

/// "constraints": ["Eq(Mod(s1, 8), 0)", ...]; one yobx cannot read is kept with the reason.
inline void read_constraints(const JsonNode& constraints, InputsData& out) {
    if (constraints.kind != JsonNode::Kind::array) throw value_error("ProgramInputs: \"constraints\" must be a list");
    for (const JsonNode& c : constraints.array) {
        if (c.kind != JsonNode::Kind::string)
            throw value_error("ProgramInputs: a constraint is a string, got " + std::string(yobx::detail::json::kind_name(c.kind)));
        Constraint constraint{c.string, std::nullopt, {}};
        try {
            constraint.rule = parse_sym_bool(c.string);
        } catch (const error& e) {
            constraint.reason = std::string("yobx does not read it: ") + e.what();
        }
        out.constraints.push_back(std::move(constraint));
    }
}

/// "observed": {"batch_size": {"min": 2, "max": 8, "tied": true}, ...}.
inline void read_observed(const JsonNode& observed, InputsData& out) {
    if (observed.kind != JsonNode::Kind::object) throw value_error("ProgramInputs: \"observed\" must be an object");
    for (std::size_t i = 0; i < observed.keys.size(); ++i) {
        const JsonNode& o = observed.array[i];
        const JsonNode* lo = o.kind == JsonNode::Kind::object ? o.find("min") : nullptr;
        const JsonNode* hi = o.kind == JsonNode::Kind::object ? o.find("max") : nullptr;
        const JsonNode* tied = o.kind == JsonNode::Kind::object ? o.find("tied") : nullptr;
        if (!lo || !hi || !tied || lo->kind != JsonNode::Kind::integer || hi->kind != JsonNode::Kind::integer ||
            tied->kind != JsonNode::Kind::boolean || lo->integer < 0 || hi->integer < lo->integer)
            throw value_error("ProgramInputs: observed " + observed.keys[i] +
                              ": expected {\"min\": a size, \"max\": a size at least min, \"tied\": a boolean}");
        out.observed[observed.keys[i]] = Observed{lo->integer, hi->integer, tied->boolean};
    }
}

/// "ranges": {"s0": [2, null], ...}, by symbol or expression.
inline void read_ranges(const JsonNode& ranges, InputsData& out) {
    if (ranges.kind != JsonNode::Kind::object) throw value_error("ProgramInputs: \"ranges\" must be an object");
    for (std::size_t i = 0; i < ranges.keys.size(); ++i) {
        const JsonNode& r = ranges.array[i];
        const std::string at = "ProgramInputs: range of " + ranges.keys[i];
        if (r.kind != JsonNode::Kind::array || r.array.size() != 2 || r.array[0].kind != JsonNode::Kind::integer ||
            (r.array[1].kind != JsonNode::Kind::integer && r.array[1].kind != JsonNode::Kind::null))
            throw value_error(at + ": expected [min, max or null]");
        Range range{r.array[0].integer, std::nullopt};
        if (r.array[1].kind == JsonNode::Kind::integer) range.max = r.array[1].integer;
        out.ranges.emplace_back(ranges.keys[i], range);
    }
}

/// Input `i`: {"dtype": "int64", "shape": ["s0", 3, "s1 + s11"], "strides": [...]}; a dimension
/// written as an expression is parsed into out.expressions.
inline Input read_input(const JsonNode& n, std::size_t i, InputsData& out) {
    const std::string at = "ProgramInputs: input " + std::to_string(i);
    const JsonNode* dtype = n.kind == JsonNode::Kind::object ? n.find("dtype") : nullptr;
    const JsonNode* shape = n.kind == JsonNode::Kind::object ? n.find("shape") : nullptr;
    if (!dtype || dtype->kind != JsonNode::Kind::string || !shape || shape->kind != JsonNode::Kind::array)
        throw value_error(at + ": expected {\"dtype\": a string, \"shape\": a list}");
    Input in{dtype->string, {}, {}, {}};
    for (const JsonNode& d : shape->array) {
        if (d.kind == JsonNode::Kind::integer && d.integer >= 0) {
            in.dims.emplace_back(d.integer);
            in.text.push_back(std::to_string(d.integer));
        } else if (d.kind == JsonNode::Kind::string && !d.string.empty()) {
            if (!is_symbol(d.string)) {
                try {
                    out.expressions.try_emplace(d.string, parse_sym(d.string));
                } catch (const error& e) {
                    throw value_error(at + ": the dimension '" + d.string + "' is not an expression yobx reads: " + e.what());
                }
            }
            in.dims.emplace_back(std::nullopt);
            in.text.push_back(d.string);
        } else {
            throw value_error(at + ": a dimension is a non-negative integer, a symbol or an expression, got " +
                              std::string(yobx::detail::json::kind_name(d.kind)));
        }
    }
    if (const JsonNode* strides = n.find("strides")) {
        if (strides->kind != JsonNode::Kind::array || strides->array.size() != in.dims.size())
            throw value_error(at + ": \"strides\" must be a list of one stride per dimension");
        for (const JsonNode& d : strides->array) {
            if (d.kind == JsonNode::Kind::integer && d.integer >= 0) {
                in.strides.emplace_back(d.integer);
                continue;
            }
            if (d.kind != JsonNode::Kind::string)
                throw value_error(at + ": a stride is a non-negative integer or an expression, got " +
                                  std::string(yobx::detail::json::kind_name(d.kind)));
            try {
                in.strides.push_back(parse_sym(d.string));
            } catch (const error& e) {
                throw value_error(at + ": the stride '" + d.string + "' is not an expression yobx reads: " + e.what());
            }
        }
    }
    return in;
}

/// A constraint over a symbol no input's dimension gives cannot be checked before the run:
/// its rule is dropped, with the reason.
inline void drop_unbound_constraints(InputsData& out) {
    std::set<std::string, std::less<>> given;
    for (const Input& in : out.inputs)
        for (const std::string& d : in.text) {
            if (is_symbol(d)) given.insert(d);
            else if (const auto e = out.expressions.find(d); e != out.expressions.end())
                for (auto& name : e->second.free_symbols()) given.insert(name);
        }
    for (Constraint& c : out.constraints) {
        if (!c.rule) continue;
        for (const auto& name : c.rule->free_symbols())
            if (!given.count(name)) {
                c.reason = "its symbol " + name + " is no input's dimension";
                c.rule.reset();
                break;
            }
    }
}

/// The whole metadata.
inline InputsData parse_inputs(std::string_view json) {
    const JsonNode doc = yobx::detail::json::Parser(json, "ProgramInputs").parse();
    const JsonNode* list = &doc;
    InputsData out;
    if (doc.kind == JsonNode::Kind::object) {
        list = doc.find("inputs");
        if (!list) throw value_error("ProgramInputs: expected a list of inputs or {\"inputs\": [...], \"ranges\": {...}}");
        if (const JsonNode* labels = doc.find("labels")) read_labels(*labels, out);
        if (const JsonNode* constraints = doc.find("constraints")) read_constraints(*constraints, out);
        if (const JsonNode* observed = doc.find("observed")) read_observed(*observed, out);
        if (const JsonNode* ranges = doc.find("ranges")) read_ranges(*ranges, out);
    }
    if (list->kind != JsonNode::Kind::array)
        throw value_error("ProgramInputs: expected a list of inputs, got " + std::string(yobx::detail::json::kind_name(list->kind)));
    for (std::size_t i = 0; i < list->array.size(); ++i) out.inputs.push_back(read_input(list->array[i], i, out));
    drop_unbound_constraints(out);
    return out;
}

}  // namespace yobx::detail::program

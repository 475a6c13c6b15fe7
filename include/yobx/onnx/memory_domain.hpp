// yobx/onnx/memory_domain.hpp — the sizes a model runs at, as facts the memory planning uses:
// each input dim at least its minimum (1 unless the user says otherwise), every other symbol (a
// data-dependent size) at least 0, every dim of every value at least 0, every requirement the
// shape walk recorded (a convolution's output is not empty).
//
// A ShapeEnv holds them (env()): ranges narrowed by the dims and requirements of one symbol
// (`(h - 7)//2 + 1 >= 0` gives h >= 5), the others kept as constraints. Sizes are checked
// against all of them (outside()), so a step that can only be the largest where some value
// would have a negative dim is not a candidate for the peak.
//
//   MemoryDomain d;
//   d.input_dims = {"h"};
//   d.dims = {floordiv(h - 7, 2) + 1};
//   d.minimum = {{"h", 224}};        // the user's: images of at least 224 pixels
//   d.env({"h"}).range("h");         // [224, oo]
//   d.outside({{"h", 3}});           // "h=3 is below its minimum 224"
#pragma once

#include <yobx/error.hpp>
#include <yobx/sym.hpp>
#include <yobx/sym/abbreviate.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// The error for a size `name` of `what` ("size", "minimum") that is none of `symbols`:
/// "memory: size 'hieght' names no dim of the model (its symbols: batch, height, width)".
inline value_error names_no_dim(std::string_view what, std::string_view name, const std::set<std::string, std::less<>>& symbols) {
    std::string all;
    for (const auto& s : symbols) all += (all.empty() ? "" : ", ") + s;
    return value_error("memory: " + std::string(what) + " '" + std::string(name) + "' names no dim of the model (its symbols: " +
                       (all.empty() ? "none" : all) + ")");
}

/// The sizes a model runs at.
struct MemoryDomain {
    /// The smallest size of a symbol the user gave (`--min`); a symbol not named: 1 for an input
    /// dim, 0 for any other.
    std::map<std::string, std::int64_t, std::less<>> minimum;
    std::set<std::string, std::less<>> input_dims;  ///< the symbols of the graph inputs' dims
    std::vector<SymInt> dims;                       ///< the symbolic dims of the values: each >= 0
    /// What the shape walk took as given, each with the node it comes from.
    std::vector<std::pair<SymBool, std::string>> requirements;

    std::int64_t minimum_of(const std::string& s) const {
        if (const auto it = minimum.find(s); it != minimum.end()) return it->second;
        return input_dims.count(s) ? 1 : 0;
    }

    /// A ShapeEnv over `symbols` and those of the dims and requirements: each at least its minimum,
    /// narrowed by the dims of one symbol and by the requirements. A value_error when no size is
    /// left (a requirement `h <= 64` under a minimum of 224).
    ShapeEnv env(const std::vector<std::string>& symbols) const {
        ShapeEnv e;
        const auto add = [&](const std::string& s) {
            if (!e.has_symbol(s)) e.create_symbol(s, std::nullopt, ValueRange::at_least(minimum_of(s)));
        };
        for (const auto& s : symbols) add(s);
        for (const auto& [name, v] : minimum) add(name);
        for (const auto& d : dims)
            for (const auto& s : d.free_symbols()) add(s);
        for (const auto& [r, node] : requirements)
            for (const auto& s : r.free_symbols()) add(s);
        const auto holds = [&](const SymBool& c, const std::string& what) {
            try {
                if (!e.statically_known_true(c)) e.check(c);
            } catch (const yobx::error& err) {
                throw value_error("memory: no size in the domain: " + what + " cannot hold (" + abbreviated(err.what()) + ")");
            }
        };
        for (const auto& d : dims)
            if (d.free_symbols().size() == 1) holds(d >= 0, "dim " + abbreviated(d.to_string()) + " >= 0");
        for (const auto& [r, node] : requirements) holds(r, "the requirement " + abbreviated(r.to_string()) + " of '" + node + "'");
        return e;
    }

    /// What `env` does not prove: the dims and requirements a size is checked against.
    struct Open {
        std::vector<const SymInt*> dims;
        std::vector<const std::pair<SymBool, std::string>*> requirements;
        std::vector<std::vector<std::string>> dim_symbols, requirement_symbols;  ///< each one's free symbols
        void add(const SymInt* d) {
            dims.push_back(d);
            dim_symbols.push_back(d->free_symbols());
        }
        void add(const std::pair<SymBool, std::string>* r) {
            requirements.push_back(r);
            requirement_symbols.push_back(r->first.free_symbols());
        }
    };
    Open open_in(const ShapeEnv& e) const {
        Open o;
        for (const auto& d : dims)
            if (!e.statically_known_true(d >= 0)) o.add(&d);
        for (const auto& r : requirements)
            if (!e.statically_known_true(r.first)) o.add(&r);
        return o;
    }

    /// "n=8 is below its minimum 64" for the first size below its symbol's minimum, else "".
    std::string below_minimum(const SymbolValues& sizes) const {
        for (const auto& [s, v] : sizes)
            if (v < minimum_of(s)) return s + "=" + std::to_string(v) + " is below its minimum " + std::to_string(minimum_of(s));
        return {};
    }

    /// Why `sizes` are not in the domain, or "" when they are: a size below its minimum, a dim
    /// that is negative there, a requirement that fails. Dims and requirements with a symbol
    /// `sizes` leaves out are not checked.
    std::string outside(const SymbolValues& sizes) const {
        Open all;
        for (const auto& d : dims) all.add(&d);
        for (const auto& r : requirements) all.add(&r);
        return outside(sizes, all);
    }
    std::string outside(const SymbolValues& sizes, const Open& open) const {
        if (const std::string why = below_minimum(sizes); !why.empty()) return why;
        const auto covered = [&](const std::vector<std::string>& symbols) {
            for (const auto& s : symbols)
                if (!sizes.count(s)) return false;
            return true;
        };
        for (std::size_t i = 0; i < open.dims.size(); ++i) {
            const SymInt* d = open.dims[i];
            if (!covered(open.dim_symbols[i])) continue;
            std::int64_t v = 0;
            try {
                v = d->evaluate_with(sizes);
            } catch (const yobx::error&) {  // a division by 0, an overflow: not a size the model runs at
                return "dim " + abbreviated(d->to_string()) + " is not defined there";
            }
            if (v < 0) return "dim " + abbreviated(d->to_string()) + " is " + std::to_string(v);
        }
        for (std::size_t i = 0; i < open.requirements.size(); ++i) {
            const auto* r = open.requirements[i];
            if (!covered(open.requirement_symbols[i])) continue;
            bool ok = false;
            try {
                ok = r->first.evaluate_with(sizes);
            } catch (const yobx::error&) {
            }
            if (!ok) return "the requirement " + abbreviated(r->first.to_string()) + " of '" + r->second + "' fails";
        }
        return {};
    }
};

}  // namespace yobx::onnx

// yobx/onnx/memory_steps.hpp — a graph's step sums as parts live over ranges of steps, and
// their values at sizes, all steps in one pass over the parts (memory_peak.hpp evaluates them
// at every size it tries).
//
//   StepParts parts{{n * 4, n * n}, {{0, 1}, {1, 2}}};  // 4n live at steps 0-1, n*n at 1-2
//   detail::StepValues values({n * 4, n * 4 + n * n, n * n}, &parts);
//   values.at({{"n", 3}});                               // {12, 21, 9}
#pragma once

#include <yobx/error.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// A step's sum as the parts live at it: part k, of `terms[k]` bytes, is live at the steps
/// `live[k].first` to `live[k].second` (a value from its producer to its last consumer). The
/// sums at a size are then the parts' bytes added over their steps, and a change of one symbol
/// evaluates only the parts that hold it.
struct StepParts {
    std::vector<SymInt> terms;
    std::vector<std::pair<std::size_t, std::size_t>> live;
};

namespace detail {

/// The step sums at sizes, from their parts: nullopt where a part is not defined there (a
/// division by 0, an overflow).
class StepValues {
public:
    StepValues(const std::vector<SymInt>& sums, const StepParts* parts) : n_(sums.size()) {
        if (parts) {
            terms_ = &parts->terms;
            live_ = parts->live;
        } else {
            terms_ = &sums;
            for (std::size_t i = 0; i < n_; ++i) live_.emplace_back(i, i);
        }
        for (const auto& t : *terms_) symbols_.push_back(t.free_symbols());
    }

    std::size_t size() const { return terms_->size(); }

    std::vector<std::optional<std::int64_t>> at(const SymbolValues& sizes) const {
        std::vector<std::int64_t> diff(n_ + 1, 0);
        std::vector<int> undefined(n_ + 1, 0);
        for (std::size_t k = 0; k < terms_->size(); ++k) add(k, sizes, diff, undefined, 1);
        return settle(diff, undefined);
    }

    /// The sums at `sizes`, which differ from `base_sizes` (whose sums are `base`) in `symbol` only.
    std::vector<std::optional<std::int64_t>> changed(const std::vector<std::optional<std::int64_t>>& base, const SymbolValues& base_sizes,
                                                     const SymbolValues& sizes, const std::string& symbol) const {
        std::vector<std::int64_t> diff(n_ + 1, 0);
        std::vector<int> undefined(n_ + 1, 0);
        for (std::size_t k = 0; k < terms_->size(); ++k)
            if (std::binary_search(symbols_[k].begin(), symbols_[k].end(), symbol, yobx::detail::sym::NameLess{})) {
                add(k, base_sizes, diff, undefined, -1);
                add(k, sizes, diff, undefined, 1);
            }
        auto d = settle(diff, undefined);
        std::vector<std::optional<std::int64_t>> out(n_);
        for (std::size_t i = 0; i < n_; ++i) {
            std::int64_t v = 0;
            if (base[i] && d[i] && !__builtin_add_overflow(*base[i], *d[i], &v)) out[i] = v;
        }
        return out;
    }

private:
    std::size_t n_;
    const std::vector<SymInt>* terms_ = nullptr;
    std::vector<std::pair<std::size_t, std::size_t>> live_;
    std::vector<std::vector<std::string>> symbols_;

    void add(std::size_t k, const SymbolValues& sizes, std::vector<std::int64_t>& diff, std::vector<int>& undefined, int sign) const {
        const auto [from, to] = live_[k];
        std::int64_t v = 0;
        bool ok = true;
        try {
            v = (*terms_)[k].evaluate_with(sizes);
        } catch (const yobx::error&) {
            ok = false;
        }
        if (!ok || __builtin_mul_overflow(v, sign, &v) || __builtin_add_overflow(diff[from], v, &diff[from]) ||
            __builtin_sub_overflow(diff[to + 1], v, &diff[to + 1])) {
            undefined[from] += 1;
            undefined[to + 1] -= 1;
        }
    }

    std::vector<std::optional<std::int64_t>> settle(const std::vector<std::int64_t>& diff, const std::vector<int>& undefined) const {
        std::vector<std::optional<std::int64_t>> out(n_);
        std::int64_t run = 0;
        int bad = 0;
        bool overflowed = false;
        for (std::size_t i = 0; i < n_; ++i) {
            bad += undefined[i];
            overflowed = overflowed || __builtin_add_overflow(run, diff[i], &run);
            if (!bad && !overflowed) out[i] = run;
        }
        return out;
    }
};

}  // namespace detail

}  // namespace yobx::onnx

// yobx/observer/fill_check.hpp — fills checked on the model (InputObserverInfo::check_fills).
//
// A call that did not pass an input is replayed, and run by the exported
// program, with a fill. The fill is right when the model gives the same outputs
// with it as without the input: check_fills runs the model on each such call
// twice, as made and filled (on clones: a cache may be mutated), and where the
// outputs differ tries the next candidate (the current fill, zeros, ones). A
// Hugging Face attention_mask absent from a call means "attend everywhere":
// zeros (the automatic fill) mask every position, ones reproduce the call.
// Included by yobx/observer/info.hpp, which declares the class.
#pragma once

#include <yobx/observer/discrepancy.hpp>
#include <yobx/observer/info.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

template <class T>
std::vector<AbsentInput> InputObserverInfo<T>::absent_inputs() {
    align_inputs_none_values();
    std::vector<AbsentInput> out;
    std::map<std::string, std::size_t> at;
    for (std::size_t c = 0; c < inputs_.size(); ++c)
        for (const auto& key : filled_arguments(c)) {
            auto [it, fresh] = at.try_emplace(key, out.size());
            if (fresh) {
                AbsentInput a;
                a.name = key;
                const auto f = fills_.find(key);
                const bool by_value = f == fills_.end() ? inputs_[c].is_filled(key) : f->second.by_value;
                a.fill = by_value ? "value_if_missing" : fill_of(key).to_string();
                a.user = by_value || (f != fills_.end() && f->second.user);
                if (f != fills_.end()) {
                    a.checked = f->second.checked;
                    a.failing = f->second.failing;
                    a.reasons = f->second.reasons;
                    a.tried = f->second.tried;
                }
                out.push_back(std::move(a));
            }
            out[it->second].calls.push_back(c);
        }
    // In the order of the arguments.
    std::vector<AbsentInput> ordered;
    for (const Slot& s : slots_)
        if (const auto it = at.find(s.key); it != at.end()) ordered.push_back(std::move(out[it->second]));
    return ordered;
}

template <class T>
template <class Runner>
std::vector<AbsentInput> InputObserverInfo<T>::check_fills(Runner&& runner, double atol, double rtol) {
    static_assert(TensorWithValues<T>,
                  "InputObserver::check_fills needs tensor_traits<T>::to_doubles(const T&) returning std::vector<double>");
    align_inputs_none_values();
    std::map<std::string, std::vector<std::size_t>> absent;  // key -> calls
    std::set<std::size_t> calls;
    for (std::size_t c = 0; c < inputs_.size(); ++c)
        for (const auto& key : filled_arguments(c)) {
            absent[key].push_back(c);
            calls.insert(c);
        }
    if (calls.empty()) return absent_inputs();
    // The ties of the recorded calls, once for every filled call built below (each candidate fill of
    // each input); given back on any exit.
    const Ties ties = tie_labels();
    ties_cache_ = &ties;
    struct Uncache {
        const Ties*& slot;
        ~Uncache() { slot = nullptr; }
    } uncache{ties_cache_};
    const auto run = [&](const V& arguments) { return tree_leaves<T>(runner(detail::clone_collect<T>(arguments, nullptr))); };
    // The outputs of each call as made (or why the model cannot run it).
    std::map<std::size_t, std::vector<T>> expected;
    std::map<std::size_t, std::string> unusable;
    for (std::size_t c : calls) {
        try {
            expected[c] = run(observed_arguments(c));
        } catch (const std::exception& e) {
            unusable[c] = std::string("the model fails on the call as made: ") + e.what();
        }
    }
    // Why the filled call `c` does not reproduce it, or nothing.
    const auto differs = [&](std::size_t c) -> std::optional<std::string> {
        if (const auto u = unusable.find(c); u != unusable.end()) return "call " + std::to_string(c) + ": " + u->second;
        std::vector<T> got;
        try {
            got = run(infer_arguments(c, {.as_args_kwargs = true}));
        } catch (const std::exception& e) {
            return "call " + std::to_string(c) + ": the model fails on the filled call: " + e.what();
        }
        const std::vector<T>& want = expected.at(c);
        if (got.size() != want.size())
            return "call " + std::to_string(c) + ": " + std::to_string(got.size()) + " outputs filled, " +
                   std::to_string(want.size()) + " as made";
        for (std::size_t k = 0; k < got.size(); ++k) {
            const OutputDiscrepancy o = detail::compare_output(want[k], got[k], atol, rtol);
            if (o.success) continue;
            return "call " + std::to_string(c) + ": output " + std::to_string(k) + " " +
                   (o.error.empty() ? "differs by " + detail::number_text(o.abs) : o.error);
        }
        return std::nullopt;
    };
    // An input value_if_missing supplies (and fill_if_missing does not) keeps that value: checked, not replaced.
    for (const auto& entry : absent) {  // (not a structured binding: clang 14 cannot capture one)
        const std::string& key = entry.first;
        if (!fills_.contains(key) &&
            std::any_of(inputs_.begin(), inputs_.end(), [&](const auto& x) { return x.is_filled(key); }))
            fills_.emplace(key, FillState{.user = true, .by_value = true});
    }
    // Each input in argument order; a second round when a later choice may have changed an earlier result.
    for (int round = 0; round < 2; ++round) {
        bool changed = false, failed = false;
        for (const Slot& s : slots_) {
            const auto a = absent.find(s.key);
            if (a == absent.end()) continue;
            FillState& state = fills_.try_emplace(s.key, FillState{}).first->second;
            const bool user = state.user;
            if (round > 0 && state.failing.empty()) continue;
            std::vector<Fill<T>> candidates{state.fill};
            if (!user)
                for (const auto& f : {Fill<T>::zeros(), Fill<T>::ones()})
                    if (std::none_of(candidates.begin(), candidates.end(), [&](const auto& x) { return x == f; }))
                        candidates.push_back(f);
            // The first candidate that reproduces every call; when none does, the one that reproduces
            // the most (the first on a tie). A call with other absent inputs depends on their fills too.
            const Fill<T> first = state.fill;
            std::optional<FillState> best;
            state.tried.clear();
            std::vector<std::string> tried;
            for (const Fill<T>& f : candidates) {
                if constexpr (!detail::has_full<T>)
                    if (f.kind() == Fill<T>::Kind::ones) continue;
                state.fill = f;
                state.failing.clear();
                state.reasons.clear();
                tried.push_back(state.by_value ? "value_if_missing" : f.to_string());
                for (std::size_t c : a->second)
                    if (auto why = differs(c)) {
                        std::string others;
                        for (const auto& k : filled_arguments(c))
                            if (k != s.key) others += (others.empty() ? "" : ", ") + k;
                        state.failing.push_back(c);
                        state.reasons.push_back(others.empty() ? std::move(*why) : *why + " (with " + others + " filled too)");
                    }
                if (!best || state.failing.size() < best->failing.size()) best = state;
                if (state.failing.empty()) break;
            }
            state = std::move(*best);
            state.tried = std::move(tried);
            failed = failed || !state.failing.empty();
            changed = changed || !(state.fill == first);
            state.checked = true;
        }
        if (!failed || !changed) break;
    }
    std::vector<AbsentInput> report = absent_inputs();
    return report;
}

}  // namespace yobx

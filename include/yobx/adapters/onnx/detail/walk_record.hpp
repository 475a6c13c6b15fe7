// yobx/adapters/onnx/detail/walk_record.hpp — what the walk writes into the ShapeReport, node by node.
//
// The input dims' symbols, the fresh ones with the node and the reason that made them, the
// checks a rule made (facts the walk takes as given from there on) and a draft walk's answers
// (assumptions, counted per node and question). The walk calls it; it calls no rule.
#pragma once

#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/report.hpp>
#include <yobx/sym.hpp>

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace yobx::onnx::detail {

class WalkRecord {
public:
    WalkRecord(ShapeReport& report, ShapeEnv& env) : report_(report), env_(env) {}

    /// The symbols of the model's input dims (a hint names one of them).
    void add_input_symbol(const std::string& name) { input_symbols_.insert(name); }
    const std::set<std::string, std::less<>>& input_symbols() const noexcept { return input_symbols_; }

    /// A new symbol for a dim nobody can know (`where`: the node, `op`: what made it), reported.
    SymInt fresh_symbol(const std::string& where, const std::string& op, const std::string& why) {
        SymInt s = env_.fresh_symbol("unk__", std::nullopt, ValueRange::size());
        fresh_names_.insert(s.to_string());
        report_.fresh_symbols.push_back({s.to_string(), where, op, why});
        return s;
    }
    /// Why a rule made its fresh symbols, for the report of the values that hold them.
    void note_reasons(const std::vector<FreshSymbol>& made) {
        for (const auto& f : made) fresh_reasons_[f.name] = f.why;
    }
    /// Whether the env holds a symbol neither an input's nor one noted fresh: then an output may hold a new one.
    bool new_symbols() const { return env_.symbol_count() > input_symbols_.size() + fresh_names_.size(); }
    /// Symbols first seen in a node's output are fresh: recorded with the node and the reason.
    void note_fresh(const TensorInfo& info, const std::string& where) {
        if (!info.shape) return;
        for (const auto& d : *info.shape)
            for (const auto& s : d.free_symbols()) {
                if (fresh_names_.count(s) || input_symbols_.count(s)) continue;
                fresh_names_.insert(s);
                const auto r = fresh_reasons_.find(s);
                report_.fresh_symbols.push_back({s, where, "", r == fresh_reasons_.end() ? "a broadcast or rule the ShapeEnv could not decide" : r->second});
            }
    }
    /// Whether a dim holds a fresh symbol.
    bool is_fresh(const SymInt& d) const {
        if (fresh_names_.empty() || d.is_constant()) return false;
        for (const auto& s : d.free_symbols())
            if (fresh_names_.count(s)) return true;
        return false;
    }

    /// Where the env's checks and a draft's answers stood before a node ran.
    struct Mark {
        std::vector<std::size_t> issues;  // a draft walk's answers, counted per question
        std::size_t asserts = 0;
        bool draft = false;
    };
    Mark mark(bool draft) const {
        Mark m{{}, env_.runtime_asserts().size(), draft};
        if (draft)
            for (const auto& i : env_.draft_report().issues()) m.issues.push_back(i.count);
        return m;
    }
    /// What the node added since `before`: a draft's answers as assumptions, the checks a rule
    /// made (a convolution's output is at least 1) as facts, each with the node (`where()`, made
    /// only when something is recorded).
    template <class Where>
    void record_checks(const Mark& before, const Where& where) {
        if (before.draft) record_assumptions(before.issues, where);
        if (env_.runtime_asserts().size() != before.asserts) record_facts(before.asserts, where());
    }

private:
    template <class Where>
    void record_assumptions(const std::vector<std::size_t>& before, const Where& where) {
        const auto& issues = env_.draft_report().issues();
        for (std::size_t i = 0; i < issues.size(); ++i) {
            const std::size_t was = i < before.size() ? before[i] : 0;
            if (issues[i].count == was) continue;
            const std::string question = issues[i].requirement.empty() ? issues[i].condition.to_string() : issues[i].requirement;
            const std::string answer = issues[i].requirement.empty() ? (issues[i].answer ? "True" : "False") : issues[i].condition.to_string();
            add_assumption(where(), question, answer, issues[i].count - was);
        }
    }
    void record_facts(std::size_t before, const std::string& where) {
        const auto& asserts = env_.runtime_asserts();
        for (std::size_t i = before; i < asserts.size(); ++i) {
            if (asserts[i].message == "draft assumption") continue;
            if (asserts[i].message.starts_with("auto_merge: ")) {  // taken equal by auto_merge: an assumption
                add_assumption(where, asserts[i].message, asserts[i].condition.to_string(), 1);
                continue;
            }
            report_.facts.push_back({where, asserts[i].condition.to_string(), asserts[i].message});
        }
    }
    void add_assumption(const std::string& where, const std::string& question, const std::string& answer, std::size_t count) {
        for (auto& a : report_.assumptions)
            if (a.node == where && a.question == question) {
                a.count += count;
                return;
            }
        report_.assumptions.push_back({where, question, answer, count});
    }

    ShapeReport& report_;
    ShapeEnv& env_;
    std::set<std::string, std::less<>> input_symbols_;
    std::set<std::string, std::less<>> fresh_names_;
    std::map<std::string, std::string> fresh_reasons_;
};

}  // namespace yobx::onnx::detail

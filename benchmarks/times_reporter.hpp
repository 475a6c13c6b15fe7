// The console reporter of yobx's benchmarks: prints each benchmark as usual
// (no colour codes: the output is pasted into docs), keeps each one's time,
// and at the end hands the times to a function that prints the ratios.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bench {

/// Time per iteration (ns) of each benchmark, by function name.
using Times = std::map<std::string, double>;

class TimesReporter : public benchmark::ConsoleReporter {
public:
    explicit TimesReporter(std::function<void(const Times&)> finalize)
        : ConsoleReporter(OO_Tabular), finalize_(std::move(finalize)) {}
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const auto& r : runs)  // a single run, or the mean of repetitions
            if (r.run_type == Run::RT_Iteration || r.aggregate_name == "mean")
                times_[r.run_name.function_name] = r.GetAdjustedRealTime();
        ConsoleReporter::ReportRuns(runs);
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        finalize_(times_);
    }

private:
    std::function<void(const Times&)> finalize_;
    Times times_;
};

/// main() of a benchmark program whose run ends with `finalize(times)`.
inline int run(int argc, char** argv, std::function<void(const Times&)> finalize) {
    benchmark::Initialize(&argc, argv);
    TimesReporter reporter(std::move(finalize));
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}

}  // namespace bench

// Latency of an AOTInductor package against the TorchScript module it replaces, on
// the calls a C++ program observed, per model, measured in one run and printed as a
// ratio (Debian 13: LibTorch 2.6). The files are those the export tests write:
//   bench_aoti DIR MODEL... [benchmark flags]
//     DIR/MODEL.pt      the TorchScript module (tests/export/script_model.py)
//     DIR/MODEL.pt2     the package (yobx-export --aoti)
//     DIR/MODEL/calls.pt  the observed calls (save_observations)
// After `ctest -R export` in build/ci: bench_aoti build/ci/tests/export resnet18 encoder bert
// One iteration runs every observed call once; both runners take the call as (args, kwargs).
#include "times_reporter.hpp"

#include <yobx/adapters/aoti.hpp>
#include <yobx/adapters/libtorch.hpp>

#include <torch/script.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace {

using V = yobx::Value<at::Tensor>;

// The saved calls, each as (args, kwargs): a saved tuple is positional, a dict by keyword.
std::vector<V> read_calls(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    const V calls = yobx::libtorch::from_ivalue(torch::jit::pickle_load(bytes));
    std::vector<V> out;
    for (const V& c : calls.items())
        out.push_back(c.kind() == V::Kind::dict ? V::tuple({V::tuple({}), c}) : V::tuple({c, V::dict({})}));
    return out;
}

struct Model {
    std::string name;
    torch::jit::Module module;
    std::unique_ptr<yobx::libtorch::PackageRunner> package;
    std::vector<V> calls;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: bench_aoti DIR MODEL... [benchmark flags]\n";
        return 2;
    }
    const std::string dir = argv[1];
    std::vector<std::unique_ptr<Model>> models;
    int rest = 2;
    for (; rest < argc && argv[rest][0] != '-'; ++rest) {
        auto m = std::make_unique<Model>();
        m->name = argv[rest];
        m->module = torch::jit::load(dir + "/" + m->name + ".pt");
        m->module.eval();
        m->package = std::make_unique<yobx::libtorch::PackageRunner>(dir + "/" + m->name + ".pt2",
                                                                     yobx::libtorch::signature_of(m->module, "forward"));
        m->calls = read_calls(dir + "/" + m->name + "/calls.pt");
        models.push_back(std::move(m));
    }
    torch::NoGradGuard no_grad;
    for (const auto& m : models) {
        const auto script = yobx::libtorch::method_runner(m->module);
        benchmark::RegisterBenchmark((m->name + "/torchscript").c_str(), [&m = *m, script](benchmark::State& state) {
            for (auto _ : state)
                for (const V& call : m.calls) benchmark::DoNotOptimize(script(call));
        })->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark((m->name + "/package").c_str(), [&m = *m](benchmark::State& state) {
            for (auto _ : state)
                for (const V& call : m.calls) benchmark::DoNotOptimize((*m.package)(call));
        })->Unit(benchmark::kMillisecond);
    }
    // argv[0] and the benchmark flags after the models
    std::vector<char*> flags{argv[0]};
    for (int i = rest; i < argc; ++i) flags.push_back(argv[i]);
    int n = static_cast<int>(flags.size());
    return bench::run(n, flags.data(), [&](const bench::Times& t) {
        std::printf("\nper model, every observed call once (the package's checks and flattening included):\n");
        for (const auto& m : models) {
            const auto s = t.find(m->name + "/torchscript"), p = t.find(m->name + "/package");
            if (s == t.end() || p == t.end()) continue;
            std::printf("  %-10s %zu calls: TorchScript %.3f ms, package %.3f ms: the package takes %.2fx TorchScript's time\n",
                        m->name.c_str(), m->calls.size(), s->second, p->second, p->second / s->second);  // kMillisecond: in ms
        }
    });
}

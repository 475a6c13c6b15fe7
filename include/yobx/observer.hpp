// yobx/observer.hpp — InputObserver: record real calls of a model, infer the
// export arguments and the dynamic shapes.
//
// The observer wraps a forward function (observer.wrap, or an RAII scope that
// swaps a std::function or function-pointer slot), records up to
// store_n_calls calls (deep copies of inputs and outputs, and latencies), then
// aligns the calls on the one with the most tensors and infers which
// dimensions are dynamic and which arguments to export:
//
//   yobx::InputObserver<T> observer({.value_if_missing = {{"pixel_values", empty_pixels}}});
//   {
//       auto scope = observer.observe(model.forward, signature);
//       generate(model, prompt);                 // prefill + decode steps
//   }
//   observer.infer_dynamic_shapes({.dim_names = true}).to_python();
//   observer.infer_arguments();                 // a dict of Values, absent tensors filled
//
// `template <class = void>` on a plain function or member of observer/ (and
// of the pytree) is there only so that a file that includes this header and
// uses none of it compiles none of it: see yobx/treespec.hpp's note.
#pragma once

#include <yobx/error.hpp>
#include <yobx/observer/candidate.hpp>
#include <yobx/observer/discrepancy.hpp>
#include <yobx/observer/dynamic_shapes.hpp>
#include <yobx/observer/info.hpp>
#include <yobx/observer/options.hpp>
#include <yobx/observer/signature.hpp>
#include <yobx/pytree.hpp>
#include <yobx/tensor.hpp>
#include <yobx/value.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

/// Opt-in: a Boost.Hana struct of optionals passed as the last argument of a typed
/// forward stands for its keyword arguments (an absent optional is an absent keyword).
///   struct ForwardKwargs { BOOST_HANA_DEFINE_STRUCT(ForwardKwargs, (std::optional<T>, attention_mask), ...); };
///   template <> inline constexpr bool yobx::enable_keyword_arguments<ForwardKwargs> = true;
template <class S>
inline constexpr bool enable_keyword_arguments = false;

/// Restores a swapped forward slot when it goes out of scope (see InputObserver::observe).
class [[nodiscard]] ObservationScope {
public:
    [[nodiscard]] explicit ObservationScope(std::function<void()> restore) : restore_(std::move(restore)) {}
    ObservationScope(const ObservationScope&) = delete;
    ObservationScope& operator=(const ObservationScope&) = delete;
    ObservationScope(ObservationScope&& other) noexcept : restore_(std::exchange(other.restore_, nullptr)) {}
    ObservationScope& operator=(ObservationScope&&) = delete;
    ~ObservationScope() {
        if (restore_) restore_();
    }

private:
    std::function<void()> restore_;
};

namespace detail {

// A function pointer cannot carry the recorder, so a scope borrows one of a few
// trampolines per function type, each calling its own std::function.
template <class R, class... A>
struct ThunkPool {
    static constexpr std::size_t size = 8;
    using Fn = R (*)(A...);

    static inline std::mutex mutex;
    static inline std::array<std::function<R(A...)>, size> targets;
    static inline std::array<bool, size> used{};

    template <std::size_t I>
    static R thunk(A... a) {
        return targets[I](std::forward<A>(a)...);
    }
    static constexpr std::array<Fn, size> thunks = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<Fn, size>{&thunk<I>...};
    }(std::make_index_sequence<size>{});

    static std::size_t acquire(std::function<R(A...)> f) {
        std::lock_guard lock(mutex);
        for (std::size_t i = 0; i < size; ++i)
            if (!used[i]) {
                used[i] = true;
                targets[i] = std::move(f);
                return i;
            }
        throw runtime_error("InputObserver::observe: more than " + std::to_string(size) +
                            " function-pointer slots of this type are observed at once");
    }
    static void release(std::size_t i) noexcept {
        std::lock_guard lock(mutex);
        targets[i] = nullptr;
        used[i] = false;
    }
};

template <class T, class A>
Value<T> argument_value(const A& a) {
    if constexpr (std::is_same_v<A, Value<T>>) return a;
    else if constexpr (std::is_same_v<A, std::nullopt_t> || std::is_same_v<A, none_t>) return Value<T>();
    else return to_value<T>(a);
}

}  // namespace detail

/// Records calls of a forward function and infers export arguments and dynamic shapes.
/// T is the user's tensor type (DenseTensor, at::Tensor through the adapter, ...).
/// An InputObserver is a handle: copies, and the wrappers it made, share the recorded calls.
template <class T>
class InputObserver {
    static_assert(check_tensor<T>(), "yobx::InputObserver<T>: T must be a tensor type (see yobx/tensor.hpp)");

public:
    using V = Value<T>;

    struct Options {
        /// Values for arguments absent from some calls, by name or position (only used to infer
        /// shapes and arguments, never passed to the function).
        ValueIfMissing<T> value_if_missing{};
        /// What an absent argument means in a call, by name or position, sized from that call
        /// (Fill<T>::ones(), zeros(), empty(), constant(v), a function, or the seed's
        /// empty_largest_dynamic()): used by infer_arguments(i), the replay and the export
        /// arguments; takes precedence over value_if_missing for the calls that did not pass it.
        FillIfMissing<T> fill_if_missing{};
        /// Where warnings are written as they happen (see warnings()); nullptr: nowhere.
        std::ostream* log = nullptr;
    };

    InputObserver() : InputObserver(Options{}) {}
    explicit InputObserver(Options options) : state_(std::make_shared<State>()), options_(std::move(options)) {
        state_->log = options_.log;
    }

    /// A callable that records (while fewer than store_n_calls calls were recorded by it, on top of
    /// those already stored) and then calls f. f is either a function on Values,
    /// `R f(yobx::Args<T>, yobx::Kwargs<T>)`, or a typed function whose arguments are tensors,
    /// optionals, containers, aggregates or registered classes (see enable_keyword_arguments for a
    /// struct of keyword arguments). Later calls pass straight through.
    ///   auto forward = observer.wrap(model_forward, signature);
    ///   forward(input_ids, attention_mask);
    template <class F>
    auto wrap(F f, Signature signature, std::size_t store_n_calls = 3) {
        Recorder rec = recorder(std::move(signature), store_n_calls);
        if constexpr (std::is_invocable_v<F&, Args<T>, Kwargs<T>>) {
            return [f = std::move(f), rec](Args<T> args, Kwargs<T> kwargs = {}) mutable -> decltype(auto) {
                if (rec.passes_through()) {
                    rec.drop();
                    return std::invoke(f, std::move(args), std::move(kwargs));
                }
                return rec.record(Args<T>(args), Kwargs<T>(kwargs),
                                  [&]() -> decltype(auto) { return std::invoke(f, std::move(args), std::move(kwargs)); });
            };
        } else {
            return [f = std::move(f), rec](auto&&... a) mutable -> decltype(auto) {
                if (rec.passes_through()) {
                    rec.drop();
                    return std::invoke(f, std::forward<decltype(a)>(a)...);
                }
                auto [args, kwargs] = typed_call(a...);
                return rec.record(std::move(args), std::move(kwargs),
                                  [&]() -> decltype(auto) { return std::invoke(f, std::forward<decltype(a)>(a)...); });
            };
        }
    }

    /// Swaps the std::function slot for a recorder until the returned scope ends (also when an
    /// exception leaves the scope):
    ///   { auto scope = observer.observe(model.forward, signature); run(model); }  // model.forward restored
    template <class R, class... A>
    [[nodiscard]] ObservationScope observe(std::function<R(A...)>& slot, Signature signature, std::size_t store_n_calls = 3) {
        if (!slot) throw value_error("InputObserver::observe: the std::function slot is empty");
        std::function<R(A...)> original = slot;
        slot = std::function<R(A...)>(wrap(original, std::move(signature), store_n_calls));
        return ObservationScope([&slot, original = std::move(original)] { slot = original; });
    }

    /// The same for a function-pointer slot (at most 8 slots of one function type at once).
    template <class R, class... A>
    [[nodiscard]] ObservationScope observe(R (*&slot)(A...), Signature signature, std::size_t store_n_calls = 3) {
        using Pool = detail::ThunkPool<R, A...>;
        if (!slot) throw value_error("InputObserver::observe: the function-pointer slot is null");
        R (*original)(A...) = slot;
        const std::size_t i = Pool::acquire(std::function<R(A...)>(wrap(original, std::move(signature), store_n_calls)));
        slot = Pool::thunks[i];
        return ObservationScope([&slot, original, i] {
            slot = original;
            Pool::release(i);
        });
    }

    /// What makes a result unusable, or not what the user wants, as it stands: constants that differ
    /// between calls (said when the later call was recorded), calls made after store_n_calls was
    /// reached (not recorded), a single recorded call (every dimension static), a dynamic dimension
    /// only ever 0 or 1. Each is also written to Options::log when it happens (the last two at
    /// the first inference or warnings() that sees them).
    std::vector<std::string> warnings() {
        std::lock_guard lock(state_->mutex);
        std::vector<std::string> out;
        if (state_->info) out = state_->info->recorded_warnings();
        if (const std::size_t n = state_->dropped.load(std::memory_order_relaxed))
            out.push_back(dropped_warning(n));
        if (state_->info)
            for (auto& w : state_->info->result_warnings()) out.push_back(std::move(w));
        return out;
    }

    /// The number of recorded calls.
    std::size_t num_obs() const {
        std::lock_guard lock(state_->mutex);
        return state_->info ? state_->info->size() : 0;
    }
    bool is_empty() const { return num_obs() == 0; }

    /// The recorded calls, outputs and latencies. Do not call while other threads record.
    const InputObserverInfo<T>& info() const {
        std::lock_guard lock(state_->mutex);
        return checked_info();
    }

    /// Phase 3: the dynamic shapes, as the arguments' structure (print with to_python()).
    ///   observer.infer_dynamic_shapes({.set_batch_dimension_for = {"input_ids"}, .dim_names = true});
    DynamicShapes infer_dynamic_shapes(const DynamicShapesOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        if (options_.log && options.set_batch_dimension_for.empty()) (void)checked_info().result_warnings();  // logged once
        return checked_info().infer_dynamic_shapes(options);
    }

    /// The export readiness report and the specs for other consumers (see ExportSpec):
    ///   auto spec = observer.infer_export_spec({.set_batch_dimension_for = true, .derived_dims = true});
    ///   std::cout << spec.report();
    ExportSpec infer_export_spec(const DynamicShapesOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        return with_dropped(checked_info().infer_export_spec(options));
    }

    /// The same, after check_fills(runner): the report says which fills reproduce the calls.
    ///   auto spec = observer.infer_export_spec(yobx::libtorch::method_runner(module), {.dim_names = true});
    template <class Runner>
        requires std::invocable<Runner&, const V&>
    ExportSpec infer_export_spec(Runner&& runner, const DynamicShapesOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        {
            const Replaying replaying(*state_);
            checked_info().check_fills(std::forward<Runner>(runner));
        }
        return with_dropped(checked_info().infer_export_spec(options));
    }

    /// Runs the model (runner, as check_discrepancies calls it) on each call with an absent input,
    /// as made and with its fill, and keeps for each input the first fill that reproduces every
    /// such call (the current one, zeros, ones; the user's fill is checked, not replaced). From
    /// then on infer_arguments(i), the replay and the export arguments use the chosen fills. The
    /// runner may call the wrapped function: those calls are not recorded (check_discrepancies).
    ///   for (const auto& a : observer.check_fills(runner)) std::cout << a.to_string() << "\n";
    template <class Runner>
    std::vector<AbsentInput> check_fills(Runner&& runner, double atol = 1e-4, double rtol = 0.1) {
        std::lock_guard lock(state_->mutex);
        const Replaying replaying(*state_);
        return checked_info().check_fills(std::forward<Runner>(runner), atol, rtol);
    }

    /// Per input absent from some call: the calls, its fill, and whether check_fills checked it.
    std::vector<AbsentInput> absent_inputs() {
        std::lock_guard lock(state_->mutex);
        return checked_info().absent_inputs();
    }

    /// Phase 4: the export arguments (a tuple, a dict, or (args, kwargs) with as_args_kwargs).
    V infer_arguments(const ArgumentsOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        return checked_info().infer_arguments(options);
    }
    /// From the stored call `index`.
    V infer_arguments(std::size_t index, const ArgumentsOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        return checked_info().infer_arguments(index, options);
    }
    /// From arguments given by the caller: a tuple (positional) or a dict (keywords).
    V infer_arguments(const V& args_or_kwargs, const ArgumentsOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        return checked_info().infer_arguments(args_or_kwargs, options);
    }

    /// Arguments torch.export can trace without specializing a dynamic dimension: a call with every
    /// tensor, each dynamic dimension at least `min_size` (2) and distinct from the others, the
    /// relations found between them kept (`total = past + seq`); resized tensors are zeros.
    ///   auto args = observer.infer_export_arguments({.set_batch_dimension_for = true});
    V infer_export_arguments(const ExportArgumentsOptions& options = {}) {
        std::lock_guard lock(state_->mutex);
        return checked_info().infer_export_arguments(options);
    }

    /// Drops arguments (by name or position) from every recorded call.
    ///   observer.remove_inputs({"pixel_values"});
    void remove_inputs(const std::vector<ArgRef>& inputs) {
        std::lock_guard lock(state_->mutex);
        checked_info().remove_inputs(inputs);
    }

    /// Runs runner on each recorded call, given as the tuple (args, kwargs), and compares what it
    /// returns (any pytree of T) with the recorded outputs. By default the call is replayed as it was
    /// made (an absent argument stays absent: None in args, missing from kwargs); Replay::inferred
    /// gives infer_arguments(i) instead (every tensor, absent ones filled; `filled` names them). A
    /// runner that throws gives success=false and its message in `error`. While the runner runs, the
    /// observer's wrappers record nothing: a runner may be the wrapped function itself, or call it
    /// (a model whose submodule is wrapped), from any thread; those calls are not recorded.
    template <class Runner>
    std::vector<Discrepancy> check_discrepancies(Runner&& runner, double atol = 1e-4, double rtol = 0.1,
                                                 Replay replay = Replay::as_observed) {
        static_assert(TensorWithValues<T>,
                      "InputObserver::check_discrepancies needs tensor_traits<T>::to_doubles(const T&) "
                      "returning std::vector<double>");
        std::lock_guard lock(state_->mutex);
        const Replaying replaying(*state_);
        InputObserverInfo<T>& info = checked_info();
        info.align_inputs_none_values();
        std::vector<Discrepancy> out;
        for (std::size_t i = 0; i < info.size(); ++i) {
            Discrepancy d;
            d.index = i;
            d.duration_recorded = info.latencies()[i];
            const auto& aligned = info.inputs()[i].aligned_flat_list();
            d.n_inputs = aligned.size();
            for (const auto& t : aligned) {
                d.n_none += !t;
                d.n_empty += !t || detail::numel(*t) == 0;
            }
            if (replay == Replay::inferred) d.filled = info.filled_arguments(i);
            const V arguments = replay == Replay::as_observed ? info.observed_arguments(i)
                                                              : info.infer_arguments(i, {.as_args_kwargs = true});
            std::vector<T> got;
            const auto begin = std::chrono::steady_clock::now();
            try {
                got = tree_leaves<T>(runner(arguments));
            } catch (const std::exception& e) {
                d.error = e.what();
            }
            d.duration_runner = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
            const auto& expected = info.flat_outputs()[i];
            if (!d.error.empty()) {
                d.success = false;
            } else if (got.size() != expected.size()) {
                d.success = false;
                d.error = "not the same number of outputs";
            } else {
                d.success = true;
                for (std::size_t k = 0; k < got.size(); ++k) {
                    OutputDiscrepancy o = detail::compare_output(expected[k], got[k], atol, rtol);
                    d.abs = std::max(d.abs, o.abs);
                    d.rel = std::max(d.rel, o.rel);
                    d.success = d.success && o.success;
                    if (d.error.empty() && !o.error.empty()) d.error = o.error;
                    d.outputs.push_back(std::move(o));
                }
            }
            out.push_back(std::move(d));
        }
        return out;
    }

private:
    struct State {
        std::mutex mutex;
        std::atomic<std::size_t> reserved{0};  // recorded calls plus those being recorded
        std::atomic<int> replaying{0};          // runners replaying the calls (Replaying)
        alignas(64) std::atomic<std::size_t> dropped{0};  // calls made after the limit (see Recorder::drop)
        alignas(64) std::ostream* log = nullptr;          // aligned: the counter's cache line is its own
        std::mutex log_mutex;
        std::optional<InputObserverInfo<T>> info;
    };

    // While a runner replays the recorded calls the wrappers record nothing, from any thread.
    struct Replaying {
        State& state;
        explicit Replaying(State& s) : state(s) { state.replaying.fetch_add(1, std::memory_order_relaxed); }
        Replaying(const Replaying&) = delete;
        Replaying& operator=(const Replaying&) = delete;
        ~Replaying() { state.replaying.fetch_sub(1, std::memory_order_relaxed); }
    };

    // What a wrapper shares with the observer: where to store and when to stop.
    struct Recorder {
        std::shared_ptr<State> state;
        InputObserverInfo<T>* info = nullptr;
        std::size_t limit = 0;

        // Full, or a runner replaying the calls (check_discrepancies, check_fills): the call goes
        // straight through, unrecorded (a runner that calls the wrapper, itself or from a submodule,
        // would otherwise wait for the lock its own check holds).
        bool passes_through() const noexcept {
            return state->reserved.load(std::memory_order_relaxed) >= limit || state->replaying.load(std::memory_order_relaxed) > 0;
        }
        // A call not recorded: counted up to drop_cap (a relaxed load and store, not a read-modify-write,
        // on a cache line of its own, to keep the pass-through path as cheap as a direct call:
        // concurrent callers may miss a count; past the cap it is a load only), the first one logged.
        void drop() const {
            if (state->replaying.load(std::memory_order_relaxed) > 0) return;  // a replay, not a lost call
            const std::size_t n = state->dropped.load(std::memory_order_relaxed);
            if (n >= drop_cap) return;
            state->dropped.store(n + 1, std::memory_order_relaxed);
            if (n == 0 && state->log) {
                std::lock_guard lock(state->log_mutex);  // not `mutex`: a runner of check_fills may call us
                *state->log << "yobx::InputObserver warning: " << dropped_warning(1) << '\n';
            }
        }

        template <class Call>
        decltype(auto) record(Args<T> args, Kwargs<T> kwargs, Call&& call) {
            std::size_t n = state->reserved.load(std::memory_order_relaxed);
            do {
                if (n >= limit || state->replaying.load(std::memory_order_relaxed) > 0) {
                    drop();
                    return call();
                }
            } while (!state->reserved.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
            // Reserved: a failure below (a bad call, or the function throwing) gives the place back.
            struct Release {
                State* s;
                bool armed = true;
                ~Release() {
                    if (armed) s->reserved.fetch_sub(1, std::memory_order_relaxed);
                }
            } release{state.get()};
            InputCandidate<T> candidate = info->make_candidate(std::move(args), std::move(kwargs));
            using R = decltype(call());
            const auto begin = std::chrono::steady_clock::now();
            if constexpr (std::is_void_v<R>) {
                call();
                const double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
                store(std::move(candidate), tree_structure<T>(V()), {}, latency);
                release.armed = false;
            } else {
                decltype(auto) result = call();
                const double latency = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
                auto [leaves, spec] = tree_flatten<T>(result);
                for (auto& l : leaves) l = tensor_traits<T>::clone(l);
                store(std::move(candidate), std::move(spec), std::move(leaves), latency);
                release.armed = false;
                if constexpr (std::is_reference_v<R>) return static_cast<R>(result);
                else return result;  // moved, not copied
            }
        }

        void store(InputCandidate<T> c, TreeSpec spec, std::vector<T> outputs, double latency) {
            std::lock_guard lock(state->mutex);
            info->add(std::move(c), std::move(spec), std::move(outputs), latency);
        }
    };

    Recorder recorder(Signature signature, std::size_t store_n_calls) {
        std::lock_guard lock(state_->mutex);
        if (!state_->info) {
            state_->info.emplace(std::move(signature), options_.value_if_missing, options_.fill_if_missing);
            state_->info->set_log(options_.log);
        } else if (!(state_->info->signature() == signature)) {
            throw value_error("InputObserver: this observer already records a function with signature " +
                              state_->info->signature().to_string() + ", not " + signature.to_string());
        }
        return Recorder{state_, &*state_->info, store_n_calls + state_->reserved.load()};
    }

    ExportSpec with_dropped(ExportSpec spec) const {
        if (const std::size_t n = state_->dropped.load(std::memory_order_relaxed)) spec.warnings.push_back(dropped_warning(n));
        return spec;
    }

        static constexpr std::size_t drop_cap = 1000;
    static std::string dropped_warning(std::size_t n) {
        return (n >= drop_cap ? std::to_string(drop_cap) + " or more" : std::to_string(n)) + " call(s) made after store_n_calls calls were recorded were not recorded (give "
               "wrap or observe a larger store_n_calls to record them)";
    }

        InputObserverInfo<T>& checked_info() const {
        if (!state_->info) throw runtime_error("No inputs were captured.");
        return *state_->info;
    }

    // Positional arguments, and keywords from a trailing struct opted in with enable_keyword_arguments.
    template <class... A>
    static std::pair<Args<T>, Kwargs<T>> typed_call(const A&... a) {
        Args<T> args;
        Kwargs<T> kwargs;
        args.reserve(sizeof...(A));
        std::size_t i = 0;
        const auto one = [&]<class X>(const X& x) {
            ++i;
            if constexpr (enable_keyword_arguments<X>) {
                if (i != sizeof...(A))
                    throw type_error("InputObserver: a struct of keyword arguments must be the last argument");
                V fields = detail::argument_value<T>(x);
                for (auto& [k, v] : fields.dict())
                    if (!v.is_none()) kwargs.append_unique(k, std::move(v));
            } else {
                args.push_back(detail::argument_value<T>(x));
            }
        };
        (one(a), ...);
        return {std::move(args), std::move(kwargs)};
    }

    std::shared_ptr<State> state_;
    Options options_;
};

}  // namespace yobx

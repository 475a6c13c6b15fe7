// The Python module's inference calls: one call of infer_shapes_serialized over a Python
// bytes object (Inference), run on the caller's thread or on yobx's own (Worker, Call) while
// Python copies the model, the other half of the call. yobx/onnx/__init__.py decides which
// ("What crosses into C++": from 1,000 nodes or 1 MB, 15 to 27% of the call,
// docs/performance.md); binding.cpp binds both.
#pragma once

#include <yobx/onnx.hpp>

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <unistd.h>

namespace yobx_python {

namespace py = pybind11;

/// The bytes of a Python bytes object, without a copy.
inline std::string_view view_of(const py::bytes& b) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(b.ptr(), &data, &size) != 0) throw py::error_already_set();
    return {data, static_cast<std::size_t>(size)};
}

/// One call of infer_shapes_serialized: the arguments read with the GIL held, run() without
/// it (reading only the bytes of `model`, whose reference it keeps), result() with it.
class Inference {
public:
    Inference(py::bytes model, const std::string& payloads, std::size_t left_from, bool with_report, yobx::onnx::InferenceOptions options)
        : model_(std::move(model)), bytes_(view_of(model_)), mode_(mode_of(payloads)), left_from_(left_from), with_report_(with_report),
          options_(std::move(options)) {}

    /// `leftovers` takes the parsed model and the walk's state, to free after the result is out.
    void run(yobx::onnx::Leftovers& leftovers) noexcept {
        try {
            out_ = yobx::onnx::infer_shapes_serialized(bytes_, options_, mode_, "<bytes>", left_from_, &leftovers);
            if (with_report_) report_ = out_.report.to_json();  // 1.5 ms of a 8,000-node model's call: only when asked
        } catch (...) {
            error_ = std::current_exception();
        }
    }

    py::tuple result() const {
        if (error_) std::rethrow_exception(error_);
        return py::make_tuple(py::bytes(out_.model), out_.left_out, out_.graph_types, with_report_ ? py::object(py::str(report_)) : py::none());
    }

private:
    static yobx::onnx::Payloads mode_of(const std::string& payloads) {
        if (payloads == "left_out") return yobx::onnx::Payloads::left_out;
        if (payloads == "put_back") return yobx::onnx::Payloads::put_back;
        if (payloads == "none") return yobx::onnx::Payloads::none;
        throw yobx::value_error("payloads: 'left_out', 'put_back' or 'none', not '" + payloads + "'");
    }

    py::bytes model_;
    std::string_view bytes_;
    yobx::onnx::Payloads mode_;
    std::size_t left_from_;
    bool with_report_;
    yobx::onnx::InferenceOptions options_;
    yobx::onnx::SerializedShapes out_;
    std::string report_;
    std::exception_ptr error_;
};

/// The thread that runs started inferences, one after another: started at the first and kept
/// (a thread started per call begins with a cold malloc arena: thousands of page faults on a
/// large model). Never destroyed, as the thread waits on it until the process ends; a child
/// process after fork, where the thread does not exist, starts its own.
class Worker {
public:
    /// Called with the GIL held: one caller at a time.
    static Worker& instance() {
        static Worker* worker = nullptr;
        static pid_t owner = 0;
        if (worker == nullptr || owner != ::getpid()) {
            worker = new Worker();  // NOLINT: kept until the process ends
            owner = ::getpid();
        }
        return *worker;
    }

    void submit(std::function<void()> job) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            jobs_.push_back(std::move(job));
        }
        ready_.notify_one();
    }

private:
    Worker() { std::thread([this] { loop(); }).detach(); }

    [[noreturn]] void loop() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                ready_.wait(lock, [this] { return !jobs_.empty(); });
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            job();  // noexcept: Inference::run keeps its errors
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> jobs_;
};

/// An Inference handed to the Worker to run while Python does something else (copies the model);
/// result() (or the destructor) waits for it, the GIL released.
class Call {
public:
    explicit Call(Inference inference) : call_(std::move(inference)) {
        Worker::instance().submit([this] {
            yobx::onnx::Leftovers leftovers;  // freed once the result is out, while Python merges it
            call_.run(leftovers);
            const std::lock_guard<std::mutex> lock(mutex_);  // notified under the lock: the waiter cannot
            done_ = true;                                     // return, and free *this, before it is done
            finished_.notify_all();
        });
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call() { wait(); }

    py::tuple result() {
        wait();
        return call_.result();
    }

private:
    void wait() {
        py::gil_scoped_release unlocked;
        std::unique_lock<std::mutex> lock(mutex_);
        finished_.wait(lock, [this] { return done_; });
    }

    Inference call_;
    std::mutex mutex_;
    std::condition_variable finished_;
    bool done_ = false;  // set under mutex_ when the inference is done
};

}  // namespace yobx_python

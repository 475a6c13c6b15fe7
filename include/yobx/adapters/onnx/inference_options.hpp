// yobx/adapters/onnx/inference_options.hpp — how infer_shapes walks a model: strict, hints, op profiles, the model's directory.
#pragma once

#include <yobx/onnx/op_profiles.hpp>
#include <yobx/onnx/report.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace yobx::onnx {

/// How the walk answers a question the ShapeEnv cannot decide.
struct InferenceOptions {
    /// An undecidable question is an error naming the node (torch.export's strict guards).
    bool strict = false;
    /// Example sizes of input dims by name: the walk becomes a draft walk that takes the
    /// hints' answer and records each assumption (draft export's report).
    using Hints = std::map<std::string, std::int64_t, std::less<>>;
    Hints hints;
    /// Ask ONNX's own inference for the outputs of operators yobx does not cover.
    bool onnx_fallback = true;
    /// onnxruntime's guess_output_rank: an operator neither yobx nor ONNX's inference covers
    /// gives each output of unknown shape the rank (and, if unknown, the type) of its first
    /// input, with fresh dims, instead of no shape.
    bool guess_output_rank = false;
    /// onnxruntime's auto_merge: two dims a broadcast cannot tell apart (neither provably
    /// equal nor 1) are taken equal, keeping the one onnxruntime's tool keeps (an input's
    /// dim before another symbol, a symbol before an expression, the shorter expression),
    /// and the equality is recorded as an assumption, instead of giving a fresh symbol.
    bool auto_merge = false;
    /// Profiles of custom operators, the content of draft export's op_profiles.
    OpProfiles op_profiles;
    /// The model's directory, where external data is looked for (empty: external data is
    /// not read). Only small integer tensors are read from it, and only from regular files
    /// inside it once every `..` and symlink is resolved.
    std::filesystem::path model_dir;
};

}  // namespace yobx::onnx

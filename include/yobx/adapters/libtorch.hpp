// yobx/adapters/libtorch.hpp — yobx for LibTorch: at::Tensor, c10::IValue,
// TorchScript modules, a KV cache and kernel patches.
//
// The umbrella of the LibTorch adapter, whose headers (adapters/libtorch/) are the only yobx
// headers that include LibTorch: at::Tensor a yobx tensor (tensor_traits.hpp), c10::IValue to
// and from Value<at::Tensor> (ivalue.hpp), a torch::jit::Module's methods observed
// (module.hpp), observed values saved for Python (save.hpp), KVCache, the C++ counterpart of
// transformers' DynamicCache (kv_cache.hpp), and a dispatcher kernel override as a PatchInfo
// (kernel_patch.hpp). See docs/libtorch.md.
#pragma once

#include <yobx/adapters/libtorch/ivalue.hpp>
#include <yobx/adapters/libtorch/kernel_patch.hpp>
#include <yobx/adapters/libtorch/kv_cache.hpp>
#include <yobx/adapters/libtorch/module.hpp>
#include <yobx/adapters/libtorch/save.hpp>
#include <yobx/adapters/libtorch/tensor_traits.hpp>

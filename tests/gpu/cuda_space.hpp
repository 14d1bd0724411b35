// A BufferSpace of CUDA device memory for the multi-process checks: place() copies a host vector into a
// device buffer (once per vector until finish()), finish() synchronises the stream and copies every
// placed buffer back. Test code only: it links the CUDA runtime directly.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <stdexcept>
#include <string>

#include "mp/checks.hpp"

namespace hetccl::test {

inline void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

class CudaSpace final : public BufferSpace {
 public:
  CudaSpace() { cudaCheck(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~CudaSpace() override {
    release();
    cudaStreamDestroy(stream_);
  }
  void* place(Bytes& b) override {
    auto it = placed_.find(&b);
    if (it != placed_.end()) return it->second;
    void* d = nullptr;
    cudaCheck(cudaMalloc(&d, b.size() ? b.size() : 1), "cudaMalloc");
    cudaCheck(cudaMemcpy(d, b.data(), b.size(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
    placed_[&b] = d;
    return d;
  }
  void* stream() override { return stream_; }
  void finish() override {
    cudaCheck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    for (auto& [vec, d] : placed_) cudaCheck(cudaMemcpy(vec->data(), d, vec->size(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    release();
  }

 private:
  void release() {
    for (auto& [vec, d] : placed_) cudaFree(d);
    placed_.clear();
  }
  cudaStream_t stream_ = nullptr;
  std::map<Bytes*, void*> placed_;
};

}  // namespace hetccl::test

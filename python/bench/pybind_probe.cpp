// The pybind11 candidate of the Python per-call overhead benchmark (not part of the package): the same
// two calls bound with pybind11, and an all-reduce that parses the DLPack capsule in C++ (what a pybind11
// binding of the full API would do per call). Build: see python/bench/run_overhead.sh.
#include <hetccl/hetccl.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>

namespace py = pybind11;

namespace {
struct DLTensor {
  void* data;
  int32_t device_type, device_id, ndim;
  uint8_t code, bits;
  uint16_t lanes;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};

int getVersion() {
  int v = 0;
  if (hetcclGetVersion(&v)) throw std::runtime_error(hetcclGetLastError(nullptr));
  return v;
}

void allReducePtr(uintptr_t buf, size_t count, int dtype, int op, uintptr_t comm) {
  auto c = reinterpret_cast<hetcclComm_t>(comm);
  if (hetcclAllReduce(reinterpret_cast<void*>(buf), reinterpret_cast<void*>(buf), count,
                      static_cast<hetcclDataType_t>(dtype), static_cast<hetcclRedOp_t>(op), c, nullptr))
    throw std::runtime_error(hetcclGetLastError(c));
}

void allReduceDlpack(py::object obj, uintptr_t comm) {
  py::object dev = obj.attr("__dlpack_device__")();
  py::capsule cap = obj.attr("__dlpack__")();
  auto* t = static_cast<DLTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (!t) throw py::error_already_set();
  size_t count = 1;
  for (int i = 0; i < t->ndim; ++i) count *= t->shape[i];
  if (t->code != 2 || t->bits != 32) throw std::invalid_argument("probe: float32 only");
  auto c = reinterpret_cast<hetcclComm_t>(comm);
  char* p = static_cast<char*>(t->data) + t->byte_offset;
  if (hetcclAllReduce(p, p, count, hetcclFloat32, hetcclSum, c, nullptr)) throw std::runtime_error(hetcclGetLastError(c));
}
}  // namespace

PYBIND11_MODULE(hetccl_pybind_probe, m) {
  m.def("get_version", &getVersion);
  m.def("all_reduce_ptr", &allReducePtr);
  m.def("all_reduce_dlpack", &allReduceDlpack);
}

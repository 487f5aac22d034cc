// A stand-in for the CUDA driver in tests: cuPointerGetAttribute answers "device memory" for the
// address ranges a test marks, and "not CUDA's" (CUDA_ERROR_INVALID_VALUE) for everything else,
// as the real driver does for host memory it never saw. Linked into a test program, it is found
// by the library's dlsym exactly as the real driver would be.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#define SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
std::mutex mu;
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;  // [begin, end)
long long queries = 0;
}  // namespace

SHIM_EXPORT void commsched_shim_mark_device(const void* p, std::size_t bytes) {
  std::lock_guard lock(mu);
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  ranges.emplace_back(b, b + bytes);
}

SHIM_EXPORT void commsched_shim_clear() {
  std::lock_guard lock(mu);
  ranges.clear();
}

SHIM_EXPORT long long commsched_shim_queries() {
  std::lock_guard lock(mu);
  return queries;
}

// CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
SHIM_EXPORT int cuPointerGetAttribute(void* data, int attribute, unsigned long long ptr) {
  std::lock_guard lock(mu);
  ++queries;
  constexpr int kMemoryType = 2, kDevice = 2, kInvalidValue = 1;
  if (attribute != kMemoryType) return kInvalidValue;
  for (const auto& [b, e] : ranges)
    if (ptr >= b && ptr < e) {
      *static_cast<unsigned*>(data) = kDevice;
      return 0;
    }
  return kInvalidValue;
}

#include "core/device_memory.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace commsched::core {
namespace {

// The few entry points used, with the C types of their public headers spelled as plain ones.
// CUDA driver: CUresult cuPointerGetAttribute(void* data, CUpointer_attribute, CUdeviceptr).
using CuPointerGetAttribute = int (*)(void*, int, unsigned long long);
// CUDA runtime: cudaError_t cudaPointerGetAttributes(cudaPointerAttributes*, const void*).
// ROCm: hipError_t hipPointerGetAttributes(hipPointerAttribute_t*, const void*).
// Both structures open with the memory type as an enum (an int).
using PointerGetAttributes = int (*)(void*, const void*);

constexpr int kCuPointerAttributeMemoryType = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr unsigned kCuMemoryTypeHost = 1;          // CU_MEMORYTYPE_HOST; 2 device, 3 array, 4 unified
constexpr int kCudaMemoryTypeHost = 1;             // cudaMemoryTypeHost; 0 unregistered, 2 device, 3 managed

struct Runtimes {
  CuPointerGetAttribute cu = nullptr;
  PointerGetAttributes cudart = nullptr;
  PointerGetAttributes hip = nullptr;
};

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

template <typename Fn>
Fn find(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// A runtime may be loaded after MPI_Init (a program that initialises its GPU later), so
// lookups repeat, at most once a second, until one is found. Atomics, as threads may ask at
// once (MPI_THREAD_MULTIPLE): one of them looks, the others use what was last found.
Runtimes runtimes() {
  static std::atomic<CuPointerGetAttribute> cu{nullptr};
  static std::atomic<PointerGetAttributes> cudart{nullptr}, hip{nullptr};
  static std::atomic<std::int64_t> looked_at_ms{-1};
  Runtimes r{cu.load(std::memory_order_acquire), cudart.load(std::memory_order_acquire),
             hip.load(std::memory_order_acquire)};
  if (r.cu || r.cudart || r.hip) return r;
  const std::int64_t t = now_ms();
  std::int64_t last = looked_at_ms.load(std::memory_order_relaxed);
  if ((last >= 0 && t - last < 1000) || !looked_at_ms.compare_exchange_strong(last, t))
    return r;
  r.cu = find<CuPointerGetAttribute>("cuPointerGetAttribute");
  r.cudart = find<PointerGetAttributes>("cudaPointerGetAttributes");
  r.hip = find<PointerGetAttributes>("hipPointerGetAttributes");
  cu.store(r.cu, std::memory_order_release);
  cudart.store(r.cudart, std::memory_order_release);
  hip.store(r.hip, std::memory_order_release);
  return r;
}

}  // namespace

void look_up_device_runtimes() { (void)runtimes(); }

bool is_device_memory(const void* p) {
  if (!p) return false;
  const Runtimes r = runtimes();
  if (r.cu) {
    unsigned type = 0;
    // An error (host memory CUDA never saw, no context) means CUDA does not own it.
    if (r.cu(&type, kCuPointerAttributeMemoryType,
             static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p))) == 0 &&
        type != 0 && type != kCuMemoryTypeHost)
      return true;
  }
  // Room for any version's attribute structure; the memory type is its first member.
  alignas(16) unsigned char attributes[256];
  if (r.cudart) {
    std::memset(attributes, 0, sizeof attributes);
    int type = 0;
    if (r.cudart(attributes, p) == 0) {
      std::memcpy(&type, attributes, sizeof type);
      if (type > kCudaMemoryTypeHost) return true;
    }
  }
  if (r.hip) {
    std::memset(attributes, 0, sizeof attributes);
    int type = 0;
    // ROCm numbers its memory types differently across versions (host is 0 in some, 1 in
    // others): anything HIP knows as registered memory runs natively, which is always safe.
    if (r.hip(attributes, p) == 0) {
      std::memcpy(&type, attributes, sizeof type);
      if (type != 0) return true;
    }
  }
  return false;
}

}  // namespace commsched::core

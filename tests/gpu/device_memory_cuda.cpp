// core::is_device_memory against the real CUDA driver, on a machine with a GPU: memory from
// cuMemAlloc and cuMemAllocManaged is device memory, pageable and pinned host memory is not,
// and nothing is device memory before the driver is initialised. The driver is opened with
// dlopen, as a CUDA program's would be loaded, so nothing here links CUDA. Exit 77 (skipped)
// where there is no driver or no device.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/device_memory.hpp"

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("  %-58s %s\n", what, ok ? "ok" : "FAILED");
  failures += ok ? 0 : 1;
}

template <typename Fn>
Fn sym(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

int main() {
  using commsched::core::is_device_memory;
  std::vector<char> pageable(4096);
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    std::printf("device_memory_cuda: no CUDA driver (%s): skipped\n", dlerror());
    return 77;
  }
  using CUdeviceptr = unsigned long long;
  auto cu_init = sym<int (*)(unsigned)>(lib, "cuInit");
  auto cu_device_get = sym<int (*)(int*, int)>(lib, "cuDeviceGet");
  auto cu_retain = sym<int (*)(void**, int)>(lib, "cuDevicePrimaryCtxRetain");
  auto cu_set_current = sym<int (*)(void*)>(lib, "cuCtxSetCurrent");
  auto cu_alloc = sym<int (*)(CUdeviceptr*, std::size_t)>(lib, "cuMemAlloc_v2");
  auto cu_alloc_host = sym<int (*)(void**, std::size_t)>(lib, "cuMemAllocHost_v2");
  auto cu_alloc_managed = sym<int (*)(CUdeviceptr*, std::size_t, unsigned)>(lib, "cuMemAllocManaged");
  if (!cu_init || !cu_device_get || !cu_retain || !cu_set_current || !cu_alloc || !cu_alloc_host ||
      !cu_alloc_managed) {
    std::printf("device_memory_cuda: the driver lacks an entry point: skipped\n");
    return 77;
  }
  std::printf("device_memory_cuda:\n");
  expect(!is_device_memory(pageable.data()), "pageable host memory, driver not initialised");
  int device = 0;
  void* ctx = nullptr;
  if (cu_init(0) != 0 || cu_device_get(&device, 0) != 0 || cu_retain(&ctx, device) != 0 ||
      cu_set_current(ctx) != 0) {
    std::printf("device_memory_cuda: no usable GPU: skipped\n");
    return 77;
  }
  CUdeviceptr dev = 0, managed = 0;
  void* pinned = nullptr;
  if (cu_alloc(&dev, 1 << 20) != 0 || cu_alloc_host(&pinned, 1 << 20) != 0 ||
      cu_alloc_managed(&managed, 1 << 20, 1 /* CU_MEM_ATTACH_GLOBAL */) != 0) {
    std::printf("device_memory_cuda: allocation failed\n");
    return 1;
  }
  const auto at = [](CUdeviceptr p, std::size_t off) {
    return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(p + off));
  };
  expect(is_device_memory(at(dev, 0)), "cuMemAlloc: device memory");
  expect(is_device_memory(at(dev, 12345)), "cuMemAlloc, an interior address");
  expect(is_device_memory(at(managed, 0)), "cuMemAllocManaged: runs native too");
  expect(!is_device_memory(pinned), "cuMemAllocHost (pinned host memory): host");
  expect(!is_device_memory(pageable.data()), "pageable host memory, driver initialised");
  int on_stack = 0;
  expect(!is_device_memory(&on_stack), "the stack");
  expect(!is_device_memory(nullptr), "nullptr");
  std::printf("device_memory_cuda: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}

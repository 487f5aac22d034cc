// core::is_device_memory against the CUDA driver stand-in (device_shim.cpp), linked in so the
// library's dlsym finds it as it would find the real driver.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "core/device_memory.hpp"

extern "C" void commsched_shim_mark_device(const void* p, std::size_t bytes);
extern "C" void commsched_shim_clear();
extern "C" long long commsched_shim_queries();

namespace {

TEST(DeviceMemory, HostMemoryAndNullAreNotDevice) {
  commsched_shim_clear();
  std::vector<char> host(64);
  EXPECT_FALSE(commsched::core::is_device_memory(host.data()));
  EXPECT_FALSE(commsched::core::is_device_memory(nullptr));
}

TEST(DeviceMemory, MarkedRangeIsDeviceAndItsEdgesAreExact) {
  commsched_shim_clear();
  std::vector<char> buffer(256);
  commsched_shim_mark_device(buffer.data() + 64, 128);
  const long long before = commsched_shim_queries();
  EXPECT_TRUE(commsched::core::is_device_memory(buffer.data() + 64));
  EXPECT_TRUE(commsched::core::is_device_memory(buffer.data() + 191));
  EXPECT_FALSE(commsched::core::is_device_memory(buffer.data() + 63));
  EXPECT_FALSE(commsched::core::is_device_memory(buffer.data() + 192));
  EXPECT_EQ(commsched_shim_queries() - before, 4);  // the driver was really asked
  commsched_shim_clear();
  EXPECT_FALSE(commsched::core::is_device_memory(buffer.data() + 64));
}

}  // namespace

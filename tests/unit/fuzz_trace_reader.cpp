// libFuzzer target for the trace reader: any byte string must give true or false with an
// error, never a crash, a sanitizer report, or an allocation out of proportion to its size.
// Built with clang (-fsanitize=fuzzer,address,undefined) by tests/unit/CMakeLists.txt.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "trace/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  for (int mode = 0; mode < 4; ++mode) {
    commsched::trace::ReadOptions o;
    o.accept_partial = (mode & 1) != 0;
    // Without checksums the fuzzer reaches the record decoders with arbitrary payloads.
    o.verify_checksums = (mode & 2) == 0;
    commsched::trace::Trace t;
    std::string error;
    const bool ok = commsched::trace::parse(bytes, t, error, o);
    if (!ok && error.empty()) __builtin_trap();  // a failure must say why
  }
  return 0;
}

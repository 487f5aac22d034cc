#pragma once
/// GPU memory the library must not touch. A CUDA- or ROCm-aware MPI accepts device pointers in
/// MPI_Alltoallv; the library's executor packs and copies bytes on the CPU, so such a call must
/// run natively. The runtimes are looked up in the process with dlsym (never a link
/// dependency): a program that loaded none of them pays one failed lookup a second at most.
namespace commsched::core {

/// Whether `p` lies in memory a CUDA or ROCm runtime already loaded in this process calls
/// device (or managed) memory. False for host memory, nullptr, and when no runtime is loaded.
bool is_device_memory(const void* p);

/// Looks the runtimes up now, where the cost is no call's (MPI_Init): a failed lookup walks
/// every loaded library, 5-20 us in an Open MPI process. is_device_memory's next lookup, if
/// none was found, comes a second later at the earliest.
void look_up_device_runtimes();

}  // namespace commsched::core

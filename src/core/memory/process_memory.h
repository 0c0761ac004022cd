// The process's resident memory, and returning freed memory to the operating system.
//
// Why both: after a model is unloaded its weights are freed, but the allocator keeps the
// pages for reuse (inferd's jemalloc is configured never to decay them, for speed; glibc
// keeps its arenas), so resident memory stays high until the allocator is told to purge.
#ifndef INFERD_CORE_MEMORY_PROCESS_MEMORY_H_
#define INFERD_CORE_MEMORY_PROCESS_MEMORY_H_

#include <cstdint>

namespace inferd {

// Resident set size from /proc/self/statm; 0 when it cannot be read.
uint64_t ResidentBytes();

// Returns freed memory to the kernel: jemalloc's "arena.<all>.purge" when jemalloc is the
// process allocator (found at run time, so the core does not link it), glibc's malloc_trim
// otherwise.
void ReleaseFreedMemory();

}  // namespace inferd

#endif  // INFERD_CORE_MEMORY_PROCESS_MEMORY_H_

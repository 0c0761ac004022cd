// Per-device memory budgets: `--memory-budget cpu=24GiB,cuda:0=60GiB`.
//
// A device without an explicit budget gets a default: 80 % of the machine's memory for
// `cpu`, leaving the 20 % headroom the seed advises for activations, the allocator and
// everything else in the process.
#ifndef INFERD_CORE_MEMORY_MEMORY_BUDGET_H_
#define INFERD_CORE_MEMORY_MEMORY_BUDGET_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inferd {

// "24GiB", "512MiB", "1.5GB", "4096" (bytes). Binary (KiB, MiB, GiB, TiB) and decimal (KB,
// MB, GB, TB) units; B is optional.
absl::StatusOr<uint64_t> ParseByteSize(std::string_view text);

// "1.5 GiB", for messages.
std::string FormatBytes(uint64_t bytes);

// "cpu=24GiB,cuda:0=60GiB" -> {cpu: ..., cuda:0: ...}. Empty text: no explicit budgets.
absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> ParseMemoryBudgets(
    std::string_view text);

// The machine's physical memory (or the cgroup limit when it is lower).
uint64_t MachineMemoryBytes();

// The default budget of a device: 80 % of MachineMemoryBytes() for cpu.
uint64_t DefaultBudgetBytes(std::string_view device);

}  // namespace inferd

#endif  // INFERD_CORE_MEMORY_MEMORY_BUDGET_H_

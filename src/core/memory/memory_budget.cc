#include "core/memory/memory_budget.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <utility>

#include "common/strings.h"

namespace inferd {
namespace {

struct Unit {
  std::string_view name;
  uint64_t factor;
};
constexpr std::array<Unit, 13> kUnits = {{{"KiB", 1ull << 10},
                                          {"MiB", 1ull << 20},
                                          {"GiB", 1ull << 30},
                                          {"TiB", 1ull << 40},
                                          {"KB", 1000ull},
                                          {"MB", 1000ull * 1000},
                                          {"GB", 1000ull * 1000 * 1000},
                                          {"TB", 1000ull * 1000 * 1000 * 1000},
                                          {"Ki", 1ull << 10},
                                          {"Mi", 1ull << 20},
                                          {"Gi", 1ull << 30},
                                          {"Ti", 1ull << 40},
                                          {"B", 1}}};

// The cgroup v2 memory limit, when the process runs under one.
uint64_t CgroupLimitBytes() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() ? value : 0;
}

}  // namespace

absl::StatusOr<uint64_t> ParseByteSize(std::string_view text) {
  const std::string original(text);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  uint64_t factor = 1;
  for (const Unit& unit : kUnits) {
    if (text.size() > unit.name.size() && text.ends_with(unit.name)) {
      factor = unit.factor;
      text.remove_suffix(unit.name.size());
      break;
    }
  }
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        StrCat("'", original, "' is not a size (examples: 24GiB, 512MiB, 1.5GB, 4096)"));
  }
  return static_cast<uint64_t>(value * static_cast<double>(factor));
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < (1u << 10)) return StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> ParseMemoryBudgets(
    std::string_view text) {
  std::map<std::string, uint64_t, std::less<>> budgets;
  for (std::string_view item : SplitSkipEmpty(text, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          StrCat("--memory-budget: '", item, "' must be DEVICE=SIZE, e.g. cpu=24GiB"));
    }
    const std::string device(item.substr(0, eq));
    if (device != "cpu" && !device.starts_with("cuda:")) {
      return absl::InvalidArgumentError(
          StrCat("--memory-budget: '", device, "' is not a device (cpu, cuda:0, cuda:1, ...)"));
    }
    absl::StatusOr<uint64_t> bytes = ParseByteSize(item.substr(eq + 1));
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--memory-budget: ", device, ": ", bytes.status().message()));
    }
    if (!budgets.emplace(device, *bytes).second) {
      return absl::InvalidArgumentError(
          StrCat("--memory-budget: device '", device, "' is given twice"));
    }
  }
  return budgets;
}

uint64_t MachineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  uint64_t bytes = pages > 0 && page_size > 0
                       ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                       : 0;
  const uint64_t cgroup = CgroupLimitBytes();
  if (cgroup > 0 && (bytes == 0 || cgroup < bytes)) bytes = cgroup;
  return bytes;
}

uint64_t DefaultBudgetBytes(std::string_view device) {
  if (device == "cpu") return MachineMemoryBytes() / 10 * 8;
  // GPU memory is not visible to this CPU-only build; without --memory-budget a GPU is not
  // limited by inferd (the engine's own out-of-memory error fails the load).
  return UINT64_MAX;
}

}  // namespace inferd

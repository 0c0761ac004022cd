#include "common/log.h"

#include <spdlog/spdlog.h>

namespace inferd {

void LogInfo(std::string_view message) { spdlog::info("{}", message); }
void LogWarning(std::string_view message) { spdlog::warn("{}", message); }

}  // namespace inferd

// A narrow logging entry point for code that cannot include spdlog: LibTorch's headers ship
// their own copy of fmt, which clashes with the fmt Debian's spdlog is built against.
#ifndef INFERD_COMMON_LOG_H_
#define INFERD_COMMON_LOG_H_

#include <string_view>

namespace inferd {

void LogInfo(std::string_view message);
void LogWarning(std::string_view message);

}  // namespace inferd

#endif  // INFERD_COMMON_LOG_H_

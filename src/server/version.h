#ifndef INFERD_SERVER_VERSION_H_
#define INFERD_SERVER_VERSION_H_

#include <string_view>

namespace inferd {
inline constexpr std::string_view kInferdVersion = "0.1.0";
}  // namespace inferd

#endif  // INFERD_SERVER_VERSION_H_

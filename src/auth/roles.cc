#include "auth/roles.h"

#include "common/strings.h"

namespace inferd {

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kInference:
      return "inference";
    case Access::kMonitoring:
      return "monitoring";
    case Access::kManagement:
      return "management";
  }
  return "unknown";
}

bool RoleSet::Allows(Access access) const {
  switch (access) {
    case Access::kPublic:
      return true;
    case Access::kInference:
      return (bits_ & kInference) != 0;
    case Access::kMonitoring:
      return (bits_ & (kMonitoring | kManagement)) != 0;
    case Access::kManagement:
      return (bits_ & kManagement) != 0;
  }
  return false;
}

std::string RoleSet::ToString() const {
  std::string out;
  auto add = [&](uint8_t bit, std::string_view name) {
    if ((bits_ & bit) == 0) return;
    if (!out.empty()) out += ", ";
    out += name;
  };
  add(kInference, "inference");
  add(kMonitoring, "monitoring");
  add(kManagement, "management");
  return out.empty() ? "none" : out;
}

absl::StatusOr<uint8_t> ParseRole(std::string_view name) {
  if (name == "inference") return RoleSet::kInference;
  if (name == "monitoring") return RoleSet::kMonitoring;
  if (name == "management") return RoleSet::kManagement;
  return absl::InvalidArgumentError(
      StrCat("unknown role '", name, "' (roles: inference, monitoring, management)"));
}

}  // namespace inferd

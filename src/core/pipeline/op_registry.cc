#include "core/pipeline/op_registry.h"

#include <utility>

namespace inferd {

void OpRegistry::Register(std::string name, OpFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

const OpFactory* OpRegistry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

}  // namespace inferd

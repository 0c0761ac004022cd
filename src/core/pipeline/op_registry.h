// The built-in ops a pipeline's `op:` may name, filled by main from each op library
// (RegisterPostOps, RegisterTextOps, RegisterImageOps) before any model loads; read-only
// afterwards, so lookups need no lock.
#ifndef INFERD_CORE_PIPELINE_OP_REGISTRY_H_
#define INFERD_CORE_PIPELINE_OP_REGISTRY_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline/pipeline_op.h"

namespace inferd {

class OpRegistry {
 public:
  // A second registration of a name replaces the first (tests swap in fakes).
  void Register(std::string name, OpFactory factory);
  // nullptr when no op has that name.
  const OpFactory* Find(std::string_view name) const;
  // Sorted, for "is not an op (known: ...)" errors.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, OpFactory, std::less<>> factories_;
};

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_OP_REGISTRY_H_

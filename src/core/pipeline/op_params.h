// What every op factory does with its OpLoadRequest, in one place: read the step's `params:`
// (unknown keys refused by name) and resolve an asset file the params name (a labels file, a
// tokenizer) inside the pipeline's version folder.
#ifndef INFERD_CORE_PIPELINE_OP_PARAMS_H_
#define INFERD_CORE_PIPELINE_OP_PARAMS_H_

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "absl/status/statusor.h"
#include "core/config/config_field_reader.h"
#include "core/pipeline/pipeline_op.h"

namespace inferd {

// The step's params as a mapping (empty when absent); a key outside `allowed` is an error
// naming it ("params.colour: unknown field (known: ...)").
absl::StatusOr<YAML::Node> LoadOpParams(const OpLoadRequest& request, const FieldReader& reader,
                                        const std::set<std::string>& allowed);

// `relative` inside `version_dir` with symlinks and ".." resolved, of at most `max_bytes`:
// an absolute path, one that leaves the folder, a missing file or a larger one is refused
// naming `field`. `example` is a file name the error suggests ("labels.txt").
absl::StatusOr<std::filesystem::path> ResolveOpAsset(const FieldReader& reader,
                                                     const std::string& field,
                                                     const std::filesystem::path& version_dir,
                                                     const std::string& relative,
                                                     uintmax_t max_bytes, std::string_view example);

}  // namespace inferd

#endif  // INFERD_CORE_PIPELINE_OP_PARAMS_H_

// SHA-256 of a file (OpenSSL's EVP interface), for config.yaml's `sha256` integrity check and
// for sharing the weights of identical model files.
#ifndef INFERD_CORE_REPOSITORY_FILE_DIGEST_H_
#define INFERD_CORE_REPOSITORY_FILE_DIGEST_H_

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"

namespace inferd {

// The lowercase hex SHA-256 of the file's bytes. NotFound / Unavailable when it cannot be
// read.
absl::StatusOr<std::string> Sha256OfFile(const std::filesystem::path& path);

}  // namespace inferd

#endif  // INFERD_CORE_REPOSITORY_FILE_DIGEST_H_

// Reads the TLS certificate and key files (--tls-cert-file, --tls-key-file) once, for both
// listeners, and checks that they are PEM and belong together, so that a bad file stops the
// start with a message naming it instead of failing the first handshake.
#ifndef INFERD_SERVER_TLS_FILES_H_
#define INFERD_SERVER_TLS_FILES_H_

#include <string>

#include "absl/status/statusor.h"

namespace inferd {

struct TlsPem {
  std::string cert_chain;
  std::string private_key;
};

absl::StatusOr<TlsPem> ReadTlsFiles(const std::string& cert_path, const std::string& key_path);

}  // namespace inferd

#endif  // INFERD_SERVER_TLS_FILES_H_

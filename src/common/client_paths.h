// Client-facing messages name no server folder: an error that reaches a client (an HTTP
// error body, a gRPC status, a repository index row) says "digits/config.yaml: ..." rather
// than "/srv/models/digits/config.yaml: ...", so a client learns nothing of the server's
// file system. Server logs keep the full paths for the operator.
#ifndef INFERD_COMMON_CLIENT_PATHS_H_
#define INFERD_COMMON_CLIENT_PATHS_H_

#include <string>
#include <string_view>

namespace inferd {

// Registers the model repository: its absolute and canonical forms (a relative form such as
// "models" also occurs in URLs, and names no server folder). Call before serving: readers do
// not lock.
void HideFolderFromClients(const std::string& folder);

// `message` with every registered folder prefix removed ("<root>/m/1" -> "m/1") and a bare
// folder replaced by "the model repository".
std::string WithoutServerPaths(std::string_view message);

}  // namespace inferd

#endif  // INFERD_COMMON_CLIENT_PATHS_H_

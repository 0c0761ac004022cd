// The last few failed requests (time, model, status, message), for the dashboard: operators
// see what is going wrong without searching the logs.
// Thread-safety: all methods are thread-safe.
#ifndef INFERD_OBSERVABILITY_RECENT_ERRORS_H_
#define INFERD_OBSERVABILITY_RECENT_ERRORS_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace inferd {

struct RecentError {
  int64_t time_ms = 0;  // wall clock, milliseconds since the epoch
  std::string request_id;
  std::string request;  // "POST /v2/models/m/infer" (HTTP) or the gRPC method
  std::string model;    // empty when the request never reached a model
  std::string version;  // empty likewise
  unsigned status = 0;  // HTTP status
  std::string message;
};

class RecentErrors {
 public:
  explicit RecentErrors(size_t capacity = 50) : capacity_(capacity) {}
  void Add(RecentError error);
  // Newest first.
  std::vector<RecentError> Snapshot() const;

 private:
  const size_t capacity_;
  mutable Mutex mu_;
  std::deque<RecentError> errors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_RECENT_ERRORS_H_

// The one place a finished request is recorded, whichever frontend answered it: the model's
// request counter and latency histogram, the HTTP status counter, the recent-errors list
// and the access log line. The HTTP session calls it for every reply; the gRPC frontend
// calls Finished the same way (with http_status 0).
// Thread-safety: thread-safe.
#ifndef INFERD_OBSERVABILITY_REQUEST_RECORDER_H_
#define INFERD_OBSERVABILITY_REQUEST_RECORDER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/clock.h"
#include "core/model/served_model.h"
#include "observability/metrics_registry.h"
#include "observability/recent_errors.h"

namespace inferd {

struct FinishedRequest {
  std::string_view request_id;
  std::string_view protocol = "http";  // "http", "grpc"
  std::string_view method;             // "POST", or the gRPC method name
  std::string_view path;               // "/v2/models/m/infer"; empty for gRPC
  // The model version that handled it; null when the request never reached one (unknown
  // model, malformed body, metadata endpoints).
  const ServedModel* model = nullptr;
  absl::StatusCode code = absl::StatusCode::kOk;
  unsigned http_status = 0;  // 0 for gRPC
  Duration latency{0};
  int64_t batch_size = 0;  // rows in the engine call that ran it; 0 when none did
  std::string_view error;  // the error message; empty on success
};

// Renders one access log line (JSON object or plain text), public for its tests.
std::string AccessLogLine(const FinishedRequest& request, bool json);

class RequestRecorder {
 public:
  // Either may be null (no metrics, no error list).
  RequestRecorder(MetricsRegistry* metrics, RecentErrors* errors)
      : metrics_(metrics), errors_(errors) {}

  // An HTTP request was read (counts it in flight until Finished).
  void HttpStarted();
  void Finished(const FinishedRequest& request);

 private:
  MetricsRegistry* const metrics_;
  RecentErrors* const errors_;
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_REQUEST_RECORDER_H_

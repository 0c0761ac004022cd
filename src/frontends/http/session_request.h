// What the HTTP session remembers about the request it is answering, for the access log and
// the metrics: its id, when it arrived, and (filled in by the handlers) the model version it
// reached and the batch it ran in. Accessed only on the session's strand.
#ifndef INFERD_FRONTENDS_HTTP_SESSION_REQUEST_H_
#define INFERD_FRONTENDS_HTTP_SESSION_REQUEST_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "core/model/served_model.h"

namespace inferd {

struct SessionRequest {
  bool active = false;  // a request is being answered
  std::string request_id;
  std::string method;
  std::string path;
  TimePoint received{};
  ModelHandle model;  // the version that handled it; null if it reached none
  int64_t batch_size = 0;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_SESSION_REQUEST_H_

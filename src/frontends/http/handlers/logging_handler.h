// GET /v2/logging and POST /v2/logging: read and change the log settings while the server
// runs (after Triton's logging extension, with inferd's own fields):
//   {"log_level": "trace|debug|info|warn|error|critical|off",
//    "log_format": "plain|json", "access_log": true|false}
// A POST sets the fields it gives and answers the settings now in force.
#ifndef INFERD_FRONTENDS_HTTP_HANDLERS_LOGGING_HANDLER_H_
#define INFERD_FRONTENDS_HTTP_HANDLERS_LOGGING_HANDLER_H_

#include "frontends/http/http_types.h"

namespace inferd {

HttpReply HandleGetLogging();
HttpReply HandleSetLogging(const HttpRequestView& request);

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_HANDLERS_LOGGING_HANDLER_H_

// Log output: a plain human format for the terminal or one JSON object per line for log
// shippers (ELK, Loki), the level, and the access log (one line per request), all
// changeable while the server runs (POST /v2/logging).
//
// The access log is the logger named "access"; in JSON mode its message is itself a JSON
// object whose fields are merged into the line: {"time","level","logger":"access",
// "request_id","model",...}.
// Thread-safety: all functions are thread-safe.
#ifndef INFERD_OBSERVABILITY_LOG_SETUP_H_
#define INFERD_OBSERVABILITY_LOG_SETUP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace inferd {

enum class LogFormat { kPlain, kJson };

absl::StatusOr<LogFormat> ParseLogFormat(std::string_view name);
std::string_view LogFormatName(LogFormat format);

// Sets up the default logger and the access logger (batched: lines are queued and written
// by a background thread, observability/batching_log_sink.h). Call once, before other threads log.
absl::Status ConfigureLogging(LogFormat format, std::string_view level, bool access_log);
// Turns the access log off and writes the lines still queued. Call once at exit, after the
// frontends have stopped.
void ShutdownLogging();
// Access log lines dropped because the queue was full (the writer could not keep up).
uint64_t AccessLogLinesDropped();

// Runtime changes. SetLogLevel takes spdlog's names: trace, debug, info, warn, error,
// critical, off.
absl::Status SetLogLevel(std::string_view level);
absl::Status SetLogFormat(LogFormat format);
void SetAccessLogEnabled(bool enabled);

std::string CurrentLogLevel();
LogFormat CurrentLogFormat();
bool AccessLogEnabled();
spdlog::logger& AccessLogger();

// The JSON line formatter, public for its tests.
class JsonLogFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace inferd

#endif  // INFERD_OBSERVABILITY_LOG_SETUP_H_

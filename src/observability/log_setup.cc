#include "observability/log_setup.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "observability/batching_log_sink.h"

namespace inferd {
namespace {

constexpr char kPlainPattern[] = "%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ %v";
constexpr char kAccessLoggerName[] = "access";

std::atomic<bool> access_log_enabled{true};
std::atomic<LogFormat> log_format{LogFormat::kPlain};
constexpr size_t kAccessQueueLines = 16384;
// How long access lines may wait to be written together (batching_log_sink.h).
constexpr std::chrono::milliseconds kAccessWriteInterval(50);

// The access logger's sink and its writer thread; owned here so that ShutdownLogging can
// drain it.
std::shared_ptr<BatchingLogSink>& AccessSink() {
  static auto* sink = new std::shared_ptr<BatchingLogSink>();
  return *sink;
}

std::unique_ptr<spdlog::formatter> MakeFormatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonLogFormatter>();
  return std::make_unique<spdlog::pattern_formatter>(kPlainPattern);
}

// "2026-11-30T12:00:00.123Z" (UTC, what log shippers parse without configuration).
std::string FormatTime(std::chrono::system_clock::time_point time) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof(text) - n, ".%03dZ", static_cast<int>(ms.count() % 1000));
  return text;
}

}  // namespace

absl::StatusOr<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "plain") return LogFormat::kPlain;
  if (name == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(StrCat("log format '", name, "' is not one of: plain, json"));
}

std::string_view LogFormatName(LogFormat format) {
  return format == LogFormat::kJson ? "json" : "plain";
}

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  const std::string_view logger_name(msg.logger_name.data(), msg.logger_name.size());
  const std::string_view payload(msg.payload.data(), msg.payload.size());
  // The access logger's message is a JSON object already (written with RapidJSON by
  // RequestRecorder): its fields are merged into this line instead of quoted as "msg".
  const bool merge = logger_name == kAccessLoggerName && payload.size() >= 2 &&
                     payload.front() == '{' && payload.back() == '}';
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("time");
  const std::string time = FormatTime(msg.time);
  writer.String(time.data(), static_cast<rapidjson::SizeType>(time.size()));
  writer.Key("level");
  const auto level = spdlog::level::to_string_view(msg.level);
  writer.String(level.data(), static_cast<rapidjson::SizeType>(level.size()));
  writer.Key("logger");
  const std::string_view name = logger_name.empty() ? std::string_view("inferd") : logger_name;
  writer.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  if (!merge) {
    writer.Key("msg");
    writer.String(payload.data(), static_cast<rapidjson::SizeType>(payload.size()));
  }
  writer.EndObject();
  std::string_view line(buffer.GetString(), buffer.GetSize());
  if (merge) {
    line.remove_suffix(1);  // the closing brace; the payload brings its own
    dest.append(line.data(), line.data() + line.size());
    if (payload.size() > 2) dest.push_back(',');
    dest.append(payload.data() + 1, payload.data() + payload.size());
  } else {
    dest.append(line.data(), line.data() + line.size());
  }
  dest.push_back('\n');
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

absl::Status ConfigureLogging(LogFormat format, std::string_view level, bool access_log) {
  std::shared_ptr<spdlog::logger> main = spdlog::default_logger();
  if (!spdlog::get(kAccessLoggerName)) {
    // Batched: a request thread only queues the line; one background thread writes the
    // queued lines together, so a slow log consumer (a pipe, a full disk) never stalls
    // request handling and the writer wakes once per interval, not per line. When the queue is
    // full new lines are dropped and counted (inferd_log_messages_dropped_total) rather
    // than blocking. Same sinks as the main log: one stream, lines never interleaved
    // mid-line.
    AccessSink() =
        std::make_shared<BatchingLogSink>(main->sinks(), kAccessQueueLines, kAccessWriteInterval);
    auto access = std::make_shared<spdlog::logger>(kAccessLoggerName, AccessSink());
    access->set_level(spdlog::level::info);
    spdlog::register_logger(access);
  }
  SetAccessLogEnabled(access_log);
  if (absl::Status set = SetLogFormat(format); !set.ok()) return set;
  return SetLogLevel(level);
}

absl::Status SetLogLevel(std::string_view level) {
  const spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str answers "off" for any name it does not know.
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(StrCat(
        "log level '", level, "' is not one of: trace, debug, info, warn, error, critical, off"));
  }
  spdlog::default_logger()->set_level(parsed);
  return absl::OkStatus();
}

absl::Status SetLogFormat(LogFormat format) {
  // Every logger shares the same sinks, so setting the sinks' formatter covers them all.
  for (const auto& sink : spdlog::default_logger()->sinks())
    sink->set_formatter(MakeFormatter(format));
  log_format.store(format);
  return absl::OkStatus();
}

void SetAccessLogEnabled(bool enabled) { access_log_enabled.store(enabled); }

std::string CurrentLogLevel() {
  const auto name = spdlog::level::to_string_view(spdlog::default_logger()->level());
  return std::string(name.data(), name.size());
}

LogFormat CurrentLogFormat() { return log_format.load(); }
bool AccessLogEnabled() { return access_log_enabled.load(); }

uint64_t AccessLogLinesDropped() { return AccessSink() ? AccessSink()->dropped() : 0; }

void ShutdownLogging() {
  SetAccessLogEnabled(false);
  // The logger holds the sink too; flushing writes what is queued before the process ends.
  if (AccessSink()) AccessSink()->flush();
}

spdlog::logger& AccessLogger() {
  static spdlog::logger* access = [] {
    std::shared_ptr<spdlog::logger> logger = spdlog::get(kAccessLoggerName);
    if (!logger) {
      logger = std::make_shared<spdlog::logger>(kAccessLoggerName,
                                                spdlog::default_logger()->sinks().begin(),
                                                spdlog::default_logger()->sinks().end());
      spdlog::register_logger(logger);
    }
    return logger.get();  // the registry keeps it alive
  }();
  return *access;
}

}  // namespace inferd

#include "observability/request_recorder.h"

#include <chrono>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "observability/log_setup.h"
#include "observability/request_outcome.h"

namespace inferd {
namespace {

void WriteString(rapidjson::Writer<rapidjson::StringBuffer>& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

}  // namespace

std::string AccessLogLine(const FinishedRequest& r, bool json) {
  const double latency_ms = std::chrono::duration<double, std::milli>(r.latency).count();
  const std::string_view outcome = OutcomeName(OutcomeForStatus(r.code));
  if (!json) {
    // The path and the error carry client text: escaped, so a request cannot forge a line.
    std::string line =
        fmt::format("{} {} {} {:.3f} ms id={}", EscapeForLog(r.method), EscapeForLog(r.path, 1024),
                    r.http_status, latency_ms, r.request_id);
    if (r.model != nullptr) {
      line += fmt::format(" model={} version={}", r.model->name(), r.model->version());
    }
    if (r.batch_size > 0) line += fmt::format(" batch={}", r.batch_size);
    if (!r.error.empty()) line += fmt::format(" error=\"{}\"", EscapeForLog(r.error, 1024));
    return line;
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("request_id");
  WriteString(writer, r.request_id);
  writer.Key("protocol");
  WriteString(writer, r.protocol);
  writer.Key("method");
  WriteString(writer, r.method);
  if (!r.path.empty()) {
    writer.Key("path");
    WriteString(writer, r.path);
  }
  if (r.model != nullptr) {
    writer.Key("model");
    WriteString(writer, r.model->name());
    writer.Key("version");
    writer.String(std::to_string(r.model->version()).c_str());
  }
  if (r.http_status != 0) {
    writer.Key("status");
    writer.Uint(r.http_status);
  }
  writer.Key("outcome");
  WriteString(writer, outcome);
  writer.Key("latency_ms");
  writer.Double(latency_ms);
  if (r.batch_size > 0) {
    writer.Key("batch_size");
    writer.Int64(r.batch_size);
  }
  if (!r.error.empty()) {
    writer.Key("error");
    WriteString(writer, r.error);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void RequestRecorder::HttpStarted() {
  if (metrics_ != nullptr) metrics_->HttpRequestStarted();
}

void RequestRecorder::Finished(const FinishedRequest& r) {
  if (r.model != nullptr && r.model->observer() != nullptr) {
    r.model->observer()->OnRequestFinished(r.code, r.latency);
  }
  if (metrics_ != nullptr && r.http_status != 0) metrics_->HttpRequestFinished(r.http_status);
  if (errors_ != nullptr && r.code != absl::StatusCode::kOk) {
    RecentError error;
    error.time_ms = WallClockMs();
    error.request_id = std::string(r.request_id);
    error.request = r.path.empty() ? std::string(r.method) : fmt::format("{} {}", r.method, r.path);
    if (r.model != nullptr) {
      error.model = r.model->name();
      error.version = std::to_string(r.model->version());
    }
    error.status = r.http_status;
    error.message = std::string(r.error);
    errors_->Add(std::move(error));
  }
  if (AccessLogEnabled()) {
    const bool json = CurrentLogFormat() == LogFormat::kJson;
    spdlog::logger& access = AccessLogger();
    if (r.code == absl::StatusCode::kOk) {
      access.info("{}", AccessLogLine(r, json));
    } else {
      access.warn("{}", AccessLogLine(r, json));
    }
  }
}

}  // namespace inferd

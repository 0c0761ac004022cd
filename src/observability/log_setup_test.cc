#include "observability/log_setup.h"

#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <spdlog/sinks/ostream_sink.h>

#include "observability/request_recorder.h"

namespace inferd {
namespace {

std::string LogOneLine(const std::string& logger_name, const std::string& message) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  sink->set_formatter(std::make_unique<JsonLogFormatter>());
  spdlog::logger logger(logger_name, sink);
  logger.warn("{}", message);
  return out.str();
}

rapidjson::Document Parse(const std::string& line) {
  rapidjson::Document doc;
  doc.Parse(line.c_str());
  EXPECT_FALSE(doc.HasParseError()) << line;
  EXPECT_TRUE(doc.IsObject()) << line;
  return doc;
}

TEST(JsonLogFormatterTest, WritesOneJsonObjectPerLineWithEscapedMessage) {
  const std::string line = LogOneLine("", "model \"m\": failed\tbadly\n");
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // the newline in the message is escaped
  rapidjson::Document doc = Parse(line);
  EXPECT_STREQ(doc["level"].GetString(), "warning");
  EXPECT_STREQ(doc["logger"].GetString(), "inferd");
  EXPECT_STREQ(doc["msg"].GetString(), "model \"m\": failed\tbadly\n");
  const std::string time = doc["time"].GetString();
  EXPECT_EQ(time.size(), 24u) << time;  // 2026-11-30T12:00:00.123Z
  EXPECT_EQ(time.back(), 'Z');
}

TEST(JsonLogFormatterTest, MergesAccessLogFieldsIntoTheLine) {
  FinishedRequest request;
  request.request_id = "abc";
  request.method = "POST";
  request.path = "/v2/models/m/infer";
  request.code = absl::StatusCode::kResourceExhausted;
  request.http_status = 429;
  request.latency = std::chrono::microseconds(1500);
  request.error = "queue \"full\"";
  rapidjson::Document doc = Parse(LogOneLine("access", AccessLogLine(request, /*json=*/true)));
  EXPECT_STREQ(doc["logger"].GetString(), "access");
  EXPECT_STREQ(doc["request_id"].GetString(), "abc");
  EXPECT_EQ(doc["status"].GetUint(), 429u);
  EXPECT_STREQ(doc["outcome"].GetString(), "rejected");
  EXPECT_DOUBLE_EQ(doc["latency_ms"].GetDouble(), 1.5);
  EXPECT_STREQ(doc["error"].GetString(), "queue \"full\"");
  EXPECT_FALSE(doc.HasMember("msg"));
}

TEST(JsonLogFormatterTest, QuotesJsonLookingMessagesFromOtherLoggers) {
  rapidjson::Document doc = Parse(LogOneLine("", R"({"injected": 1})"));
  EXPECT_STREQ(doc["msg"].GetString(), R"({"injected": 1})");
  EXPECT_FALSE(doc.HasMember("injected"));
}

TEST(AccessLogLineTest, PlainLineNamesTheEssentials) {
  FinishedRequest request;
  request.request_id = "id-1";
  request.method = "GET";
  request.path = "/metrics";
  request.http_status = 200;
  request.latency = std::chrono::milliseconds(2);
  EXPECT_EQ(AccessLogLine(request, /*json=*/false), "GET /metrics 200 2.000 ms id=id-1");
}

TEST(AccessLogLineTest, PlainLineEscapesClientTextSoNoLineCanBeForged) {
  FinishedRequest request;
  request.request_id = "id-1";
  request.method = "POST";
  request.path = "/v2/models/x\n2026-01-01 [info] forged/infer";
  request.http_status = 400;
  request.latency = std::chrono::milliseconds(2);
  request.error = "unknown field 'a\nb\x1b[2J'";
  const std::string line = AccessLogLine(request, /*json=*/false);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_NE(line.find("x\\x0a2026"), std::string::npos) << line;
}

TEST(LogSettingsTest, RejectsUnknownLevelsAndFormats) {
  EXPECT_FALSE(SetLogLevel("loud").ok());
  EXPECT_FALSE(ParseLogFormat("xml").ok());
  ASSERT_TRUE(SetLogLevel("debug").ok());
  EXPECT_EQ(CurrentLogLevel(), "debug");
  ASSERT_TRUE(SetLogLevel("info").ok());
}

}  // namespace
}  // namespace inferd

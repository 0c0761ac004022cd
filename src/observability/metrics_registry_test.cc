#include "observability/metrics_registry.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace inferd {
namespace {

using std::chrono::milliseconds;

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(MetricsRegistryTest, CountsRequestsByOutcomeAndObservesLatency) {
  MetricsRegistry metrics("1.2.3");
  std::shared_ptr<ModelObserver> model = metrics.ForModel("m", 3);
  model->OnRequestFinished(absl::StatusCode::kOk, milliseconds(5));
  model->OnRequestFinished(absl::StatusCode::kOk, milliseconds(200));
  model->OnRequestFinished(absl::StatusCode::kDeadlineExceeded, milliseconds(1));
  const std::string text = metrics.ScrapeText(nullptr);
  EXPECT_TRUE(HasLine(text, R"(inferd_requests_total{model="m",outcome="success",version="3"} 2)"))
      << text;
  EXPECT_TRUE(HasLine(text, R"(inferd_requests_total{model="m",outcome="timeout",version="3"} 1)"));
  EXPECT_TRUE(
      HasLine(text, R"(inferd_requests_total{model="m",outcome="bad_input",version="3"} 0)"));
  EXPECT_TRUE(HasLine(
      text, R"(inferd_request_duration_seconds_bucket{model="m",version="3",le="0.0005"} 0)"));
  EXPECT_TRUE(HasLine(  // 1 ms and 5 ms
      text, R"(inferd_request_duration_seconds_bucket{model="m",version="3",le="0.005"} 2)"));
  EXPECT_TRUE(HasLine(
      text, R"(inferd_request_duration_seconds_bucket{model="m",version="3",le="0.15"} 2)"));
  EXPECT_TRUE(HasLine(
      text, R"(inferd_request_duration_seconds_bucket{model="m",version="3",le="0.25"} 3)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_request_duration_seconds_count{model="m",version="3"} 3)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_build_info{version="1.2.3"} 1)"));
}

TEST(MetricsRegistryTest, ObservesBatchesAndQueueTime) {
  MetricsRegistry metrics("v");
  std::shared_ptr<ModelObserver> model = metrics.ForModel("m", 1);
  model->OnBatchExecuted(4, BatchTimes{milliseconds(1), milliseconds(2), milliseconds(1)});
  model->OnRequestDequeued(milliseconds(3));
  const std::string text = metrics.ScrapeText(nullptr);
  EXPECT_TRUE(HasLine(text, R"(inferd_batch_size_rows_bucket{model="m",version="1",le="2"} 0)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_batch_size_rows_bucket{model="m",version="1",le="4"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_inferences_total{model="m",version="1"} 4)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_compute_duration_seconds_sum{model="m",version="1"} 0.004)"))
      << text;
  EXPECT_TRUE(HasLine(
      text, R"(inferd_queue_duration_seconds_bucket{model="m",version="1",le="0.0025"} 0)"));
  EXPECT_TRUE(
      HasLine(text, R"(inferd_queue_duration_seconds_bucket{model="m",version="1",le="0.005"} 1)"));
}

TEST(MetricsRegistryTest, AReloadedVersionKeepsCountingTheSameSeries) {
  MetricsRegistry metrics("v");
  metrics.ForModel("m", 1)->OnRequestFinished(absl::StatusCode::kOk, milliseconds(1));
  metrics.ForModel("m", 1)->OnRequestFinished(absl::StatusCode::kOk, milliseconds(1));
  EXPECT_TRUE(HasLine(metrics.ScrapeText(nullptr),
                      R"(inferd_requests_total{model="m",outcome="success",version="1"} 2)"));
}

TEST(MetricsRegistryTest, RecordsLoadsMemoryAndLifecycleEvents) {
  MetricsRegistry metrics("v");
  metrics.OnModelLoadFinished("good", 2, milliseconds(1500), absl::OkStatus());
  metrics.OnModelLoadFinished("bad", std::nullopt, milliseconds(1), absl::NotFoundError("x"));
  metrics.SetModelMemoryBytes("good", 2, "cpu", 1 << 20);
  metrics.SetModelMemoryBytes("gone", 1, "cpu", 5);
  metrics.RemoveModelMemory("gone", 1, "cpu");
  metrics.SetDeviceMemoryBudgetBytes("cpu", 1 << 30);
  metrics.SetDeviceMemoryUsedBytes("cpu", 1 << 20);
  metrics.CountEviction("good", 2);
  metrics.CountReload("good", 2);
  const std::string text = metrics.ScrapeText(nullptr);
  EXPECT_TRUE(HasLine(text, R"(inferd_model_load_duration_seconds{model="good",version="2"} 1.5)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_model_load_failures_total{model="bad"} 1)"));
  EXPECT_TRUE(
      HasLine(text, R"(inferd_model_memory_bytes{device="cpu",model="good",version="2"} 1048576)"));
  EXPECT_EQ(text.find(R"(model="gone")"), std::string::npos);
  EXPECT_TRUE(HasLine(text, R"(inferd_device_memory_budget_bytes{device="cpu"} 1073741824)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_device_memory_used_bytes{device="cpu"} 1048576)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_model_evictions_total{model="good",version="2"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_model_reloads_total{model="good",version="2"} 1)"));
}

TEST(MetricsRegistryTest, TracksHttpInFlightAndStatusesAndProcess) {
  MetricsRegistry metrics("v");
  metrics.HttpRequestStarted();
  metrics.HttpRequestStarted();
  metrics.HttpRequestFinished(200);
  metrics.HttpRequestFinished(418);  // not one inferd sends: added on first use
  metrics.HttpRequestStarted();
  const std::string text = metrics.ScrapeText(nullptr);
  EXPECT_TRUE(HasLine(text, "inferd_http_requests_in_flight 1"));
  EXPECT_TRUE(HasLine(text, R"(inferd_http_responses_total{code="200"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(inferd_http_responses_total{code="418"} 1)"));
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(text.find("\nprocess_cpu_seconds_total "), std::string::npos);
}

}  // namespace
}  // namespace inferd

#include "auth/tenant.h"

#include <chrono>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/fake_time_source.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TenantLimits Limits(std::string name, double rate, double burst, int max_in_flight,
                    std::vector<std::string> models = {}) {
  TenantLimits limits;
  limits.name = std::move(name);
  limits.requests_per_second = rate;
  limits.burst = burst;
  limits.max_in_flight = max_in_flight;
  limits.models = std::move(models);
  return limits;
}

class RecordingObserver : public TenantObserver {
 public:
  explicit RecordingObserver(std::vector<std::string>* events) : events_(events) {}
  void OnRejected(TenantRejection reason) override {
    events_->push_back(std::string(TenantRejectionName(reason)));
  }
  void OnFinished(absl::StatusCode code, Duration latency) override {
    events_->push_back(
        std::string(absl::StatusCodeToString(code)) + " " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(latency).count()) +
        "ms");
  }

 private:
  std::vector<std::string>* events_;
};

TEST(TenantTest, CapsRequestsInFlightAndFreesTheSlotOnFinish) {
  FakeTimeSource time;
  Tenant tenant(Limits("alice", 0, 0, 2), &time);
  std::vector<std::string> events;
  tenant.SetObserver(std::make_unique<RecordingObserver>(&events));
  Duration retry{};
  absl::StatusOr<TenantPermit> first = tenant.Admit(&retry);
  absl::StatusOr<TenantPermit> second = tenant.Admit(&retry);
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<TenantPermit> third = tenant.Admit(&retry);
  ASSERT_TRUE(absl::IsResourceExhausted(third.status()));
  EXPECT_THAT(std::string(third.status().message()),
              HasSubstr("tenant 'alice' already has 2 requests in flight"));
  EXPECT_EQ(retry, std::chrono::seconds(1));
  time.Advance(std::chrono::milliseconds(30));
  first->Finish(absl::StatusCode::kOk);
  first->Finish(absl::StatusCode::kInternal);  // idempotent
  EXPECT_EQ(tenant.in_flight(), 1);
  EXPECT_TRUE(tenant.Admit(&retry).ok());  // a temporary: finished (cancelled) at once
  EXPECT_THAT(events, ElementsAre("in_flight_limit", "OK 30ms", "CANCELLED 0ms"));
}

// Regression (issue 30, finding 6): a request with n choices holds n sequences, so it counts n
// against max_in_flight; a tenant capped at one no longer held four sequences with n: 4.
TEST(TenantTest, ExtraSlotsCountAgainstMaxInFlightAndAreGivenBack) {
  FakeTimeSource time;
  Tenant tenant(Limits("carol", 0, 0, 3), &time);
  std::vector<std::string> events;
  tenant.SetObserver(std::make_unique<RecordingObserver>(&events));
  Duration retry{};
  absl::StatusOr<TenantPermit> permit = tenant.Admit(&retry);
  ASSERT_TRUE(permit.ok());
  absl::StatusOr<TenantSlots> three_more = tenant.AdmitMore(3);
  ASSERT_TRUE(absl::IsResourceExhausted(three_more.status()));
  EXPECT_THAT(std::string(three_more.status().message()),
              HasSubstr("this request's 4 choices ('n') would make 4"));
  EXPECT_EQ(tenant.in_flight(), 1);
  {
    absl::StatusOr<TenantSlots> two_more = tenant.AdmitMore(2);
    ASSERT_TRUE(two_more.ok());
    EXPECT_EQ(tenant.in_flight(), 3);
    EXPECT_FALSE(tenant.Admit(&retry).ok());
    TenantSlots moved = *std::move(two_more);
    EXPECT_EQ(tenant.in_flight(), 3);
  }
  EXPECT_EQ(tenant.in_flight(), 1);
  // Slots are not requests: only the two refusals are reported.
  EXPECT_THAT(events, ElementsAre("in_flight_limit", "in_flight_limit"));
}

TEST(TenantTest, RateLimitRefusesWithTheWaitAndRecovers) {
  FakeTimeSource time;
  Tenant tenant(Limits("bob", 2, 1, 0), &time);
  Duration retry{};
  ASSERT_TRUE(tenant.Admit(&retry).ok());
  absl::StatusOr<TenantPermit> refused = tenant.Admit(&retry);
  ASSERT_TRUE(absl::IsResourceExhausted(refused.status()));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("rate limit of 2 requests/s"));
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(retry),
            std::chrono::milliseconds(500));
  // A refused request holds no in-flight slot.
  EXPECT_EQ(tenant.in_flight(), 0);
  time.Advance(std::chrono::milliseconds(500));
  EXPECT_TRUE(tenant.Admit(&retry).ok());
}

TEST(TenantTest, ARequestRefusedForConcurrencySpendsNoToken) {
  FakeTimeSource time;
  Tenant tenant(Limits("c", 1, 2, 1), &time);
  Duration retry{};
  absl::StatusOr<TenantPermit> held = tenant.Admit(&retry);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(tenant.Admit(&retry).ok());
  EXPECT_FALSE(tenant.Admit(&retry).ok());
  held->Finish(absl::StatusCode::kOk);
  // The second token is still there.
  EXPECT_TRUE(tenant.Admit(&retry).ok());
}

TEST(TenantTest, ModelListLimitsTheModels) {
  FakeTimeSource time;
  Tenant open(Limits("open", 0, 0, 0), &time);
  EXPECT_TRUE(open.MayUse("anything"));
  Tenant narrow(Limits("narrow", 0, 0, 0, {"digits", "mlp"}), &time);
  EXPECT_TRUE(narrow.MayUse("digits"));
  EXPECT_FALSE(narrow.MayUse("resnet18"));
  EXPECT_FALSE(narrow.MayUse("digit"));
}

TEST(TenantTest, MovedPermitsReleaseOnce) {
  FakeTimeSource time;
  Tenant tenant(Limits("m", 0, 0, 1), &time);
  Duration retry{};
  absl::StatusOr<TenantPermit> permit = tenant.Admit(&retry);
  ASSERT_TRUE(permit.ok());
  TenantPermit moved = *std::move(permit);
  TenantPermit again = std::move(moved);
  EXPECT_EQ(tenant.in_flight(), 1);
  again.Finish(absl::StatusCode::kOk);
  EXPECT_EQ(tenant.in_flight(), 0);
}

}  // namespace
}  // namespace inferd

#include "core/repository/load_waiters.h"

#include <chrono>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr TimePoint kStart = TimePoint() + std::chrono::hours(1);

class LoadWaitersTest : public ::testing::Test {
 protected:
  // A waiter that records its answer in `answers_` as "id: OK" or "id: CODE message".
  LoadWaiters::Callback Record(std::string id) {
    return [this, id](absl::StatusOr<ModelHandle> result) {
      answers_.push_back(result.ok()
                             ? id + ": OK"
                             : id + ": " + absl::StatusCodeToString(result.status().code()) + " " +
                                   std::string(result.status().message()));
    };
  }
  static void Run(LoadWaiters::Answers& answers) {
    for (auto& answer : answers) answer();
  }

  LoadWaiters waiters_;
  std::vector<std::string> answers_;
};

TEST_F(LoadWaitersTest, ServeAnswersEveryWaiterWithTheHandleInOrder) {
  waiters_.Add(TimePoint::max(), Record("a"));
  waiters_.Add(kStart, Record("b"));
  LoadWaiters::Answers answers;
  waiters_.Serve(nullptr, &answers);
  EXPECT_TRUE(waiters_.empty());
  EXPECT_THAT(answers_, IsEmpty()) << "answers run only when the caller runs them";
  Run(answers);
  EXPECT_THAT(answers_, ElementsAre("a: OK", "b: OK"));
}

TEST_F(LoadWaitersTest, FailAnswersEveryWaiterWithTheError) {
  waiters_.Add(TimePoint::max(), Record("a"));
  waiters_.Add(TimePoint::max(), Record("b"));
  LoadWaiters::Answers answers;
  waiters_.Fail(absl::StatusCode::kUnavailable, "model 'm': unloaded by request", &answers);
  Run(answers);
  EXPECT_THAT(answers_, ElementsAre("a: UNAVAILABLE model 'm': unloaded by request",
                                    "b: UNAVAILABLE model 'm': unloaded by request"));
  EXPECT_TRUE(waiters_.empty());
}

TEST_F(LoadWaitersTest, ExpireAnswersOnlyWaitersWhoseDeadlinePassed) {
  waiters_.Add(kStart + std::chrono::seconds(1), Record("due"));
  waiters_.Add(TimePoint::max(), Record("patient"));
  waiters_.Add(kStart + std::chrono::seconds(5), Record("later"));
  int made = 0;
  auto message = [&] {
    ++made;
    return std::string("still loading");
  };
  LoadWaiters::Answers answers;
  waiters_.Expire(kStart, message, &answers);
  EXPECT_TRUE(answers.empty());
  EXPECT_EQ(made, 0) << "no message is made while nothing expires";

  waiters_.Expire(kStart + std::chrono::seconds(1), message, &answers);
  Run(answers);
  EXPECT_THAT(answers_, ElementsAre("due: DEADLINE_EXCEEDED still loading"));
  EXPECT_EQ(waiters_.size(), 2u);

  answers.clear();
  waiters_.Serve(nullptr, &answers);
  Run(answers);
  EXPECT_THAT(answers_,
              ElementsAre("due: DEADLINE_EXCEEDED still loading", "patient: OK", "later: OK"));
}

}  // namespace
}  // namespace inferd

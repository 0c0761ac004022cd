#include "backends/llama/token_logprobs.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(TokenLogprobsTest, IsTheLogSoftmaxOfTheLogits) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.5f};
  double sum = 0;
  for (float x : logits) sum += std::exp(x);
  const StepLogprobs step = LogprobsOf(logits, 1, 0);
  EXPECT_NEAR(step.logprob, 2.0 - std::log(sum), 1e-6);
  EXPECT_TRUE(step.top.empty());
}

TEST(TokenLogprobsTest, TopAlternativesAreLikeliestFirstWithTiesByLowerId) {
  const std::vector<float> logits = {0.0f, 5.0f, 1.0f, 5.0f, -2.0f};
  const StepLogprobs step = LogprobsOf(logits, 2, 3);
  ASSERT_EQ(step.top.size(), 3u);
  EXPECT_EQ(step.top[0].first, 1);
  EXPECT_EQ(step.top[1].first, 3);
  EXPECT_EQ(step.top[2].first, 2);
  EXPECT_FLOAT_EQ(step.top[2].second, step.logprob);
  EXPECT_FLOAT_EQ(step.top[0].second, step.top[1].second);
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) total += std::exp(LogprobsOf(logits, i, 0).logprob);
  EXPECT_NEAR(total, 1.0, 1e-6);
}

TEST(TokenLogprobsTest, LargeLogitsDoNotOverflowAndMaskedTokensAreMinusInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {1000.0f, 999.0f, -inf};
  const StepLogprobs step = LogprobsOf(logits, 0, 5);
  EXPECT_NEAR(step.logprob, -std::log1p(std::exp(-1.0)), 1e-5);
  ASSERT_EQ(step.top.size(), 3u);  // capped at the vocabulary
  EXPECT_EQ(step.top[2].second, -inf);
}

}  // namespace
}  // namespace inferd

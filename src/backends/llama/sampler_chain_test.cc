#include "backends/llama/sampler_chain.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <llama.h>

namespace inferd {
namespace {

// What llama.cpp's own greedy sampler picks from `logits`: GreedyToken's reference.
int32_t LlamaGreedy(const std::vector<float>& logits) {
  std::vector<llama_token_data> candidates;
  for (size_t i = 0; i < logits.size(); ++i) {
    candidates.push_back({static_cast<llama_token>(i), logits[i], 0.0f});
  }
  llama_token_data_array all{candidates.data(), candidates.size(), -1, false};
  SamplerPtr greedy(llama_sampler_init_greedy());
  llama_sampler_apply(greedy.get(), &all);
  return all.data[all.selected].id;
}

TEST(GreedyTokenTest, PicksWhatLlamaCppsGreedySamplerPicks) {
  std::mt19937 random(7);
  // Lengths below, at and around the lane count, and a vocabulary's (SmolLM2: 49152 + a tail).
  for (size_t n : {1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 100u, 49152u, 49157u}) {
    std::uniform_real_distribution<float> logit(-20.0f, 20.0f);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> logits(n);
      for (float& x : logits) x = logit(random);
      EXPECT_EQ(GreedyToken(logits), LlamaGreedy(logits)) << "n " << n << " trial " << trial;
    }
  }
}

TEST(GreedyTokenTest, TakesTheFirstOfEqualLargestLogits) {
  // Ties in other lanes, before and after each other, and in the tail past the last full
  // group of eight: coarse logits (few distinct values) make many.
  std::mt19937 random(11);
  std::uniform_int_distribution<int> coarse(0, 3);
  for (size_t n : {9u, 31u, 64u, 1003u}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> logits(n);
      for (float& x : logits) x = static_cast<float>(coarse(random));
      EXPECT_EQ(GreedyToken(logits), LlamaGreedy(logits)) << "n " << n << " trial " << trial;
    }
  }
  std::vector<float> tail(21, 0.0f);
  tail[20] = 5.0f;
  tail[4] = 5.0f;  // lane 4 holds it first; the tail's copy is later
  EXPECT_EQ(GreedyToken(tail), 4);
  tail[4] = 1.0f;
  EXPECT_EQ(GreedyToken(tail), 20);
}

TEST(GreedyTokenTest, TreatsNanAsLlamaCppDoes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t at : {0u, 3u, 8u, 40u}) {
    std::vector<float> logits(50);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(static_cast<float>(i));
    logits[at] = nan;
    EXPECT_EQ(GreedyToken(logits), LlamaGreedy(logits)) << "NaN at " << at;
  }
  std::vector<float> all_nan(12, nan);
  EXPECT_EQ(GreedyToken(all_nan), 0);
}

}  // namespace
}  // namespace inferd

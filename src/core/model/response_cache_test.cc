#include "core/model/response_cache.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace inferd {
namespace {

Tensor Floats(std::vector<float> values) {
  Tensor t = *Tensor::Allocate(DataType::kFp32, {1, static_cast<int64_t>(values.size())});
  std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(float));
  return t;
}

InferRequest Request(std::vector<float> values, std::string name = "x") {
  InferRequest request;
  request.inputs.push_back({std::move(name), Floats(std::move(values))});
  return request;
}

std::vector<NamedTensor> Answer(size_t floats) {
  return {{"y", Floats(std::vector<float>(floats, 1.0f))}};
}

TEST(ResponseCacheTest, KeyCoversEveryPartOfTheRequest) {
  const InferRequest base = Request({1, 2});
  const auto key = ResponseCache::KeyFor("m", 1, "", base);
  EXPECT_EQ(key, ResponseCache::KeyFor("m", 1, "", Request({1, 2})));
  EXPECT_NE(key, ResponseCache::KeyFor("m", 2, "", base));                  // version
  EXPECT_NE(key, ResponseCache::KeyFor("n", 1, "", base));                  // model
  EXPECT_NE(key, ResponseCache::KeyFor("m", 1, "acme", base));              // tenant
  EXPECT_NE(key, ResponseCache::KeyFor("m", 1, "", Request({1, 3})));       // bytes
  EXPECT_NE(key, ResponseCache::KeyFor("m", 1, "", Request({1, 2}, "z")));  // input name
  InferRequest reshaped = Request({1, 2});
  reshaped.inputs[0].tensor =
      Tensor::Wrap(DataType::kFp32, {2, 1}, reshaped.inputs[0].tensor.mutable_data(), 8,
                   reshaped.inputs[0].tensor.owner());
  EXPECT_NE(key, ResponseCache::KeyFor("m", 1, "", reshaped));  // same bytes, other shape
  InferRequest some_outputs = Request({1, 2});
  some_outputs.requested_outputs = {"y"};
  EXPECT_NE(key, ResponseCache::KeyFor("m", 1, "", some_outputs));
  // Lengths are part of the key: "m" + tenant "a" is not model "ma" without a tenant.
  EXPECT_NE(ResponseCache::KeyFor("m", 1, "a", base), ResponseCache::KeyFor("ma", 1, "", base));
}

TEST(ResponseCacheTest, HitReturnsACopyThatLaterChangesToTheAnswerDoNotReach) {
  ResponseCache cache(1 << 20);
  const auto key = ResponseCache::KeyFor("m", 1, "", Request({1}));
  EXPECT_FALSE(cache.Lookup(key).has_value());
  std::vector<NamedTensor> answer = Answer(4);
  cache.Insert(key, answer);
  answer[0].tensor.mutable_data_as<float>()[0] = 42.0f;  // the engine's buffer is reused
  auto hit = cache.Lookup(key);
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->size(), 1u);
  EXPECT_EQ((*hit)[0].name, "y");
  EXPECT_EQ((*hit)[0].tensor.data_as<float>()[0], 1.0f);
  const ResponseCacheStats stats = cache.Stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, 16 + 32 + ResponseCache::kEntryOverheadBytes);
}

TEST(ResponseCacheTest, StaysUnderItsBoundEvictingTheLeastRecentlyUsed) {
  // Each entry: 400 floats = 1600 bytes + digest + overhead = 1888 bytes; 4 fit in 8000.
  ResponseCache cache(8000 * 2);  // an answer may take an eighth: 2000 bytes
  std::vector<ResponseCache::Key> keys;
  for (float i = 0; i < 10; ++i) keys.push_back(ResponseCache::KeyFor("m", 1, "", Request({i})));
  for (int i = 0; i < 8; ++i) cache.Insert(keys[i], Answer(400));
  EXPECT_EQ(cache.Stats().entries, 8u);
  ASSERT_TRUE(cache.Lookup(keys[0]).has_value());  // 0 is now the most recently used
  cache.Insert(keys[8], Answer(400));
  cache.Insert(keys[9], Answer(400));
  const ResponseCacheStats stats = cache.Stats();
  EXPECT_LE(stats.bytes, 16000u);
  EXPECT_EQ(stats.evictions, 2u);
  EXPECT_TRUE(cache.Lookup(keys[0]).has_value());
  EXPECT_FALSE(cache.Lookup(keys[1]).has_value());  // the two least recently used went
  EXPECT_FALSE(cache.Lookup(keys[2]).has_value());
  EXPECT_TRUE(cache.Lookup(keys[9]).has_value());
}

TEST(ResponseCacheTest, AnAnswerOverAnEighthOfTheBoundIsNotKept) {
  ResponseCache cache(64 << 10);
  const auto key = ResponseCache::KeyFor("m", 1, "", Request({1}));
  cache.Insert(key, Answer(3000));  // 12 000 bytes > 8 KiB
  EXPECT_FALSE(cache.Lookup(key).has_value());
  EXPECT_EQ(cache.Stats().bytes, 0u);
}

}  // namespace
}  // namespace inferd

#include "backends/llama/llama_options.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

ModelConfig LlamaConfig(std::map<std::string, std::string> parameters) {
  ModelConfig config;
  // Assigned from std::string: GCC 12 at -O3 falsely warns (-Wrestrict, GCC bug 105329)
  // about assigning a short literal here.
  config.name = std::string("m");
  config.backend = std::string("llama");
  config.instances = {InstanceGroup{}};
  config.parameters = std::move(parameters);
  return config;
}

TEST(LlamaOptionsTest, DefaultsWithoutParameters) {
  auto options = ParseLlamaOptions(LlamaConfig({}), "c.yaml");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->context_length, 2048);
  EXPECT_EQ(options->parallel, 4);
  EXPECT_EQ(options->max_output_tokens(), 2048);
}

TEST(LlamaOptionsTest, ReadsEveryParameter) {
  auto options = ParseLlamaOptions(LlamaConfig({{"context_length", "512"},
                                                {"parallel", "16"},
                                                {"threads", "2"},
                                                {"batch_threads", "1"},
                                                {"batch_size", "256"},
                                                {"ubatch_size", "128"},
                                                {"kv_cache_type", "q8_0"},
                                                {"flash_attention", "on"},
                                                {"kv_unified", "true"},
                                                {"max_tokens", "100"},
                                                {"max_queue", "8"}}),
                                   "c.yaml");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->parallel, 16);
  EXPECT_EQ(options->kv_cache_type, "q8_0");
  EXPECT_TRUE(options->kv_unified);
  EXPECT_EQ(options->max_output_tokens(), 100);
  EXPECT_DOUBLE_EQ(KvCacheElementBytes("q8_0"), 34.0 / 32.0);
}

TEST(LlamaOptionsTest, ErrorsNameTheFileAndTheParameter) {
  auto typo = ParseLlamaOptions(LlamaConfig({{"contex_length", "512"}}), "m/config.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("m/config.yaml: parameters.contex_length: unknown"),
            std::string::npos)
      << typo.status();
  auto type = ParseLlamaOptions(LlamaConfig({{"kv_cache_type", "f8"}}), "c.yaml");
  EXPECT_NE(type.status().message().find("q8_0"), std::string::npos) << type.status();
  auto small = ParseLlamaOptions(
      LlamaConfig({{"parallel", "8"}, {"batch_size", "4"}, {"ubatch_size", "4"}}), "c.yaml");
  EXPECT_NE(small.status().message().find("at least parallel"), std::string::npos)
      << small.status();
  auto cap =
      ParseLlamaOptions(LlamaConfig({{"context_length", "64"}, {"max_tokens", "65"}}), "c.yaml");
  EXPECT_FALSE(cap.ok());
}

TEST(LlamaOptionsTest, EmbeddingsAreOffUntilAsked) {
  auto plain = ParseLlamaOptions(LlamaConfig({}), "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->embeddings);
  EXPECT_EQ(plain->pooling, "auto");
  auto on = ParseLlamaOptions(LlamaConfig({{"embeddings", "true"}, {"pooling", "cls"}}), "c.yaml");
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->embeddings);
  EXPECT_EQ(on->pooling, "cls");
  // rank: a reranker, which needs the second context.
  auto rank = ParseLlamaOptions(LlamaConfig({{"embeddings", "true"}, {"pooling", "rank"}}), "c");
  ASSERT_TRUE(rank.ok()) << rank.status();
  EXPECT_EQ(rank->pooling, "rank");
  auto alone = ParseLlamaOptions(LlamaConfig({{"pooling", "rank"}}), "m/config.yaml");
  EXPECT_NE(alone.status().message().find("m/config.yaml: parameters.pooling: rank makes a "
                                          "reranker"),
            std::string::npos)
      << alone.status();
  auto bad = ParseLlamaOptions(LlamaConfig({{"pooling", "max"}}), "m/config.yaml");
  EXPECT_NE(bad.status().message().find("m/config.yaml: parameters.pooling: must be auto, mean"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(ParseLlamaOptions(LlamaConfig({{"embeddings", "yes"}}), "c.yaml").ok());
}

TEST(LlamaOptionsTest, RejectsDevicesAndInstanceCountsItCannotServe) {
  ModelConfig cuda = LlamaConfig({});
  cuda.instances[0].device = "cuda:0";
  EXPECT_FALSE(ParseLlamaOptions(cuda, "c.yaml").ok());
  ModelConfig two = LlamaConfig({});
  two.instances[0].count = 2;
  EXPECT_NE(ParseLlamaOptions(two, "c.yaml").status().message().find("parallel"),
            std::string::npos);
}

TEST(LlamaOptionsTest, GpuLayersDefaultToNoneAndAreBounded) {
  auto defaults = ParseLlamaOptions(LlamaConfig({}), "c.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->gpu_layers, 0);
  EXPECT_TRUE(CheckGpuOffload(*defaults, /*supports_gpu_offload=*/false, "c.yaml").ok());
  auto some = ParseLlamaOptions(LlamaConfig({{"gpu_layers", "33"}}), "c.yaml");
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->gpu_layers, 33);
  for (const char* bad : {"-1", "1025", "all", "1.5", ""}) {
    auto options = ParseLlamaOptions(LlamaConfig({{"gpu_layers", bad}}), "c.yaml");
    ASSERT_FALSE(options.ok()) << bad;
    EXPECT_NE(options.status().message().find(
                  "c.yaml: parameters.gpu_layers: must be an integer in 0..1024"),
              std::string::npos)
        << options.status();
  }
}

TEST(LlamaOptionsTest, GpuLayersAreRefusedWithoutGpuOffloadNeverIgnored) {
  auto options = ParseLlamaOptions(LlamaConfig({{"gpu_layers", "1"}}), "c.yaml");
  ASSERT_TRUE(options.ok()) << options.status();
  const absl::Status cpu_build = CheckGpuOffload(*options, false, "c.yaml");
  EXPECT_EQ(cpu_build.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(cpu_build.message().find("c.yaml: parameters.gpu_layers: 1: this build's llama.cpp "
                                     "has no GPU offload (llama_supports_gpu_offload() is false"),
            std::string::npos)
      << cpu_build;
  // A GPU build: still refused until offloaded layers count in the device's memory budget.
  const absl::Status gpu_build = CheckGpuOffload(*options, true, "c.yaml");
  EXPECT_EQ(gpu_build.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(gpu_build.message().find("cuda:N memory budget"), std::string::npos) << gpu_build;
}

}  // namespace
}  // namespace inferd

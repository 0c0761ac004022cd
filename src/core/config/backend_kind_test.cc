#include "core/config/backend_kind.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(BackendKindTest, NamesTheKindOfEachBackend) {
  EXPECT_EQ(BackendKindOf("llama"), BackendKind::kLanguageModel);
  EXPECT_EQ(BackendKindOf("pipeline"), BackendKind::kPipeline);
  EXPECT_EQ(BackendKindOf("torch"), BackendKind::kTensor);
  EXPECT_EQ(BackendKindOf("onnx"), BackendKind::kTensor);
}

TEST(BackendKindTest, AnUnknownOrMisspelledNameIsATensorModel) {
  // Refused later, at load, as an unknown backend; never mistaken for a language model.
  EXPECT_EQ(BackendKindOf("Llama"), BackendKind::kTensor);
  EXPECT_EQ(BackendKindOf(""), BackendKind::kTensor);
}

}  // namespace
}  // namespace inferd

#include "core/config/model_name.h"

#include <string>

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(ModelNameTest, AcceptsOrdinaryNames) {
  for (const char* name : {"resnet18", "mlp_scorer", "text-classifier.v2", "a", "M@1:x"}) {
    EXPECT_TRUE(ValidateModelName(name).ok()) << name;
  }
  EXPECT_TRUE(ValidateModelName(std::string(kMaxModelNameBytes, 'm')).ok());
}

TEST(ModelNameTest, RefusesPathsHiddenNamesControlCharactersAndLongNames) {
  for (const std::string& name :
       {std::string(), std::string(".."), std::string("."), std::string(".git"),
        std::string("../etc"), std::string("a/b"), std::string("a\\b"), std::string("a b"),
        std::string("a\nb"), std::string("a\0b", 3), std::string("caf\xc3\xa9"),
        std::string(kMaxModelNameBytes + 1, 'm')}) {
    absl::Status status = ValidateModelName(name);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << name;
    EXPECT_EQ(std::string(status.message()).find('\n'), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace inferd

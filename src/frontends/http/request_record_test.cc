#include "frontends/http/request_record.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(ErrorMessageOfBodyTest, ReadsTheErrorStringOrNothing) {
  EXPECT_EQ(ErrorMessageOfBody(R"({"error":"queue \"full\""})"), "queue \"full\"");
  EXPECT_EQ(ErrorMessageOfBody(R"({"outputs":[]})"), "");
  EXPECT_EQ(ErrorMessageOfBody(R"({"error": 5})"), "");
  EXPECT_EQ(ErrorMessageOfBody("not json"), "");
}

}  // namespace
}  // namespace inferd

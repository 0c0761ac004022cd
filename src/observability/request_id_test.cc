#include "observability/request_id.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(RequestIdTest, KeepsAUsableClientId) {
  EXPECT_EQ(RequestIdFrom("trace-42.abc_DEF"), "trace-42.abc_DEF");
}

TEST(RequestIdTest, ReplacesMissingOrUnsafeIds) {
  for (std::string_view bad : {std::string_view(""), std::string_view("has space"),
                               std::string_view("quote\""), std::string_view("new\nline")}) {
    const std::string id = RequestIdFrom(bad);
    EXPECT_EQ(id.size(), 32u) << bad;
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  }
  EXPECT_EQ(RequestIdFrom(std::string(kMaxRequestIdLength + 1, 'a')).size(), 32u);
  EXPECT_EQ(RequestIdFrom(std::string(kMaxRequestIdLength, 'a')),
            std::string(kMaxRequestIdLength, 'a'));
}

TEST(RequestIdTest, GeneratedIdsDoNotRepeat) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.insert(NewRequestId());
  EXPECT_EQ(ids.size(), 1000u);
}

}  // namespace
}  // namespace inferd

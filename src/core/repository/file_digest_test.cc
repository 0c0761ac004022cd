#include "core/repository/file_digest.h"

#include <fstream>

#include "core/testing/temp_dir.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

TEST(FileDigestTest, MatchesKnownSha256) {
  testing::TempDir dir("digest");
  std::ofstream(dir.path() / "f") << "test";
  auto digest = Sha256OfFile(dir.path() / "f");
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(*digest, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
}

TEST(FileDigestTest, MissingFileIsNotFound) {
  testing::TempDir dir("digest");
  EXPECT_EQ(Sha256OfFile(dir.path() / "none").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace inferd

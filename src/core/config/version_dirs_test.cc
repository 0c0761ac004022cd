#include "core/config/version_dirs.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;
using testing::TempDir;

TEST(VersionDirsTest, AcceptsCanonicalNonNegativeIntegers) {
  EXPECT_THAT(ParseVersionDirName("0"), Optional(int64_t{0}));
  EXPECT_THAT(ParseVersionDirName("1"), Optional(int64_t{1}));
  EXPECT_THAT(ParseVersionDirName("42"), Optional(int64_t{42}));
  EXPECT_THAT(ParseVersionDirName("9223372036854775807"), Optional(int64_t{9223372036854775807}));
}

TEST(VersionDirsTest, RejectsEmptyName) { EXPECT_EQ(ParseVersionDirName(""), std::nullopt); }

TEST(VersionDirsTest, RejectsLeadingZeros) {
  EXPECT_EQ(ParseVersionDirName("007"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("01"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("00"), std::nullopt);
}

TEST(VersionDirsTest, RejectsSignsAndWhitespace) {
  EXPECT_EQ(ParseVersionDirName("-1"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("+1"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName(" 1"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("1 "), std::nullopt);
}

TEST(VersionDirsTest, RejectsTrailingAndNonDigits) {
  EXPECT_EQ(ParseVersionDirName("1a"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("abc"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("1.0"), std::nullopt);
}

TEST(VersionDirsTest, RejectsOverflow) {
  EXPECT_EQ(ParseVersionDirName("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseVersionDirName("99999999999999999999999"), std::nullopt);
}

TEST(VersionDirsTest, ScanListsVersionFoldersAscendingAndIgnoresOthers) {
  TempDir dir("inferd_version_dirs");
  for (const char* name : {"3", "1", "007", "1a", "-1"}) {
    std::filesystem::create_directory(dir.path() / name);
  }
  std::ofstream(dir.path() / "2") << "a file, not a version folder";
  std::ofstream(dir.path() / "config.yaml") << "backend: torch";

  const VersionDirScan scan = ScanVersionDirs(dir.path());

  EXPECT_THAT(scan.versions, ElementsAre(1, 3));
  EXPECT_THAT(scan.ignored, ElementsAre("-1", "007", "1a"));
}

TEST(VersionDirsTest, ScanOfMissingFolderIsEmpty) {
  TempDir dir("inferd_version_dirs");
  const VersionDirScan scan = ScanVersionDirs(dir.path() / "does_not_exist");
  EXPECT_THAT(scan.versions, IsEmpty());
  EXPECT_THAT(scan.ignored, IsEmpty());
}

}  // namespace
}  // namespace inferd

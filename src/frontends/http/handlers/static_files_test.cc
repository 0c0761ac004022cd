#include "frontends/http/handlers/static_files.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/testing/temp_dir.h"

namespace inferd {
namespace {

TEST(StaticFilesTest, ServesTheFilesOfTheFolderOnlyWithTheirTypes) {
  testing::TempDir dir("static_files");
  std::ofstream(dir.path() / "index.html") << "<html></html>";
  std::ofstream(dir.path() / "app.js") << "let x = 1;";
  std::filesystem::create_directory(dir.path() / "sub");
  std::ofstream(dir.path() / "sub" / "hidden.js") << "secret";
  absl::StatusOr<StaticFiles> files = StaticFiles::Load(dir.path());
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->size(), 2u);
  ASSERT_NE(files->Find("index.html"), nullptr);
  EXPECT_EQ(files->Find("index.html")->content, "<html></html>");
  EXPECT_EQ(files->Find("index.html")->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(files->Find("app.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(files->Find("sub/hidden.js"), nullptr);
  EXPECT_EQ(files->Find("../index.html"), nullptr);
}

TEST(StaticFilesTest, AMissingFolderIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(StaticFiles::Load("/nonexistent/dashboard").status()));
}

}  // namespace
}  // namespace inferd

#include "core/repository/model_folder.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/testing/fake_backend.h"
#include "core/testing/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

using ::testing::ElementsAre;
using testing::FakeBackend;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::WriteFile;

constexpr char kConfig[] = R"(backend: fake
inputs: [{name: x, datatype: FP32, dims: [2]}]
outputs: [{name: y, datatype: FP32, dims: [2]}]
)";

class ModelFolderTest : public ::testing::Test {
 protected:
  ModelFolderTest() { backends_.push_back(std::make_unique<FakeBackend>()); }
  ModelFolder Read(const std::string& name, const std::vector<int64_t>* stable = nullptr) {
    return ReadModelFolder(repo_.path(), name, stable, backends_, ConfigDefaults{});
  }

  TempDir repo_{"inferd_model_folder"};
  std::vector<std::unique_ptr<Backend>> backends_;
};

TEST_F(ModelFolderTest, ListsModelFoldersSortedWithoutHiddenOnesOrFiles) {
  WriteFile(repo_.path() / "b" / "config.yaml", kConfig);
  WriteFile(repo_.path() / "a" / "config.yaml", kConfig);
  WriteFile(repo_.path() / ".git" / "HEAD", "ref");
  WriteFile(repo_.path() / "notes.txt", "not a model");
  EXPECT_THAT(ListModelFolders(repo_.path()).value(), ElementsAre("a", "b"));
}

TEST_F(ModelFolderTest, MissingRepositoryIsNotFound) {
  const absl::StatusOr<std::vector<std::string>> names = ListModelFolders(repo_.path() / "nope");
  EXPECT_EQ(names.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(names.status().message()), HasSubstr("is not a readable folder"));
}

TEST_F(ModelFolderTest, ReadsConfigBackendAndVersionFolders) {
  WriteFile(repo_.path() / "m" / "config.yaml", kConfig);
  for (const char* version : {"3", "1", "01", "x"}) {
    WriteFile(repo_.path() / "m" / version / "model.fake", "weights");
  }
  const ModelFolder folder = Read("m");
  ASSERT_TRUE(folder.config.ok()) << folder.config.status();
  EXPECT_EQ(folder.text.value(), kConfig);
  EXPECT_EQ(folder.config->name, "m");
  EXPECT_EQ(folder.backend, backends_.front().get());
  EXPECT_THAT(folder.versions, ElementsAre(1, 3)) << "01 and x are not version folders";
}

TEST_F(ModelFolderTest, SettledVersionsReplaceTheScan) {
  WriteFile(repo_.path() / "m" / "config.yaml", kConfig);
  WriteFile(repo_.path() / "m" / "1" / "model.fake", "weights");
  WriteFile(repo_.path() / "m" / "2" / "model.fake", "still being copied");
  const std::vector<int64_t> stable = {1};
  EXPECT_THAT(Read("m", &stable).versions, ElementsAre(1));
}

TEST_F(ModelFolderTest, FolderWithOnlyAModelFileGetsAGeneratedConfig) {
  WriteFile(repo_.path() / "m" / "1" / "model.fake", "weights");
  const ModelFolder folder = Read("m");
  EXPECT_EQ(folder.text.value(), "backend: fake\n");
  EXPECT_EQ(folder.backend, backends_.front().get());
}

TEST_F(ModelFolderTest, BackendNotInThisBuildNamesTheAvailableOnes) {
  WriteFile(repo_.path() / "m" / "config.yaml", "backend: torch\n");
  const ModelFolder folder = Read("m");
  EXPECT_EQ(folder.backend, nullptr);
  EXPECT_EQ(folder.config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(folder.config.status().message()),
              HasSubstr("'torch' is not available in this build (available: fake)"));
}

TEST_F(ModelFolderTest, FindsBackendsByName) {
  EXPECT_EQ(FindBackend(backends_, "fake"), backends_.front().get());
  EXPECT_EQ(FindBackend(backends_, "onnx"), nullptr);
}

}  // namespace
}  // namespace inferd

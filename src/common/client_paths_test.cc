#include "common/client_paths.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

TEST(ClientPathsTest, MessagesNameFilesRelativeToTheRepository) {
  HideFolderFromClients("/srv/inferd-test-models/");
  EXPECT_EQ(WithoutServerPaths("/srv/inferd-test-models/digits/config.yaml: backend: 'x'"),
            "digits/config.yaml: backend: 'x'");
  EXPECT_EQ(WithoutServerPaths("no model folder 'm' in /srv/inferd-test-models"),
            "no model folder 'm' in the model repository");
  EXPECT_EQ(WithoutServerPaths("a/1/model.pt and /srv/inferd-test-models/b/1/model.pt"),
            "a/1/model.pt and b/1/model.pt");
  EXPECT_EQ(WithoutServerPaths("nothing to hide"), "nothing to hide");
}

}  // namespace
}  // namespace inferd

#include "frontends/http/routing/route_access.h"

#include <string>

#include <gtest/gtest.h>

namespace inferd {
namespace {

constexpr HttpMethod kGet = HttpMethod::kGet;
constexpr HttpMethod kPost = HttpMethod::kPost;

Access ClassOf(HttpMethod method, std::string_view path, std::string_view query = "") {
  return ClassifyHttpRoute(method, path, query, "").access;
}

TEST(RouteAccessTest, HealthIsPublic) {
  EXPECT_EQ(ClassOf(kGet, "/v2/health/live"), Access::kPublic);
  EXPECT_EQ(ClassOf(kGet, "/v2/health/ready"), Access::kPublic);
}

TEST(RouteAccessTest, ChangesAreManagement) {
  EXPECT_EQ(ClassOf(kPost, "/v2/repository/index"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/repository/models/m/load"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/repository/models/m/unload"), Access::kManagement);
  // The method does not matter: a GET on unload is refused before it is told 405.
  EXPECT_EQ(ClassOf(kGet, "/v2/repository/models/m/unload"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/repository/models/m/traffic"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/logging"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/systemsharedmemory/region/r/register"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/systemsharedmemory/unregister"), Access::kManagement);
  EXPECT_EQ(ClassOf(kPost, "/v2/cudasharedmemory/region/r/register"), Access::kManagement);
  EXPECT_EQ(ClassOf(HttpMethod::kOther, "/v2/logging"), Access::kManagement);
  // Extra slashes do not slip past (the router skips empty segments too).
  EXPECT_EQ(ClassOf(kPost, "//v2//repository/models/m//unload"), Access::kManagement);
}

TEST(RouteAccessTest, ReadOnlyServerViewsAreMonitoring) {
  EXPECT_EQ(ClassOf(kGet, "/metrics"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/dashboard"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/dashboard/data"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/logging"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/systemsharedmemory/status"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/cudasharedmemory/region/r/status"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/repository/stats"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/repository/models/m/traffic"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/models/stats"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/models/m/stats"), Access::kMonitoring);
  EXPECT_EQ(ClassOf(kGet, "/v2/models/m/versions/2/stats"), Access::kMonitoring);
}

TEST(RouteAccessTest, InferenceNamesItsModel) {
  struct Case {
    HttpMethod method;
    std::string path;
    std::string query;
    std::string model;
  };
  for (const Case& c : {
           Case{kPost, "/v2/models/digits/infer", "", "digits"},
           Case{kPost, "/v2/models/digits/versions/3/infer", "", "digits"},
           Case{kGet, "/v2/models/digits", "", "digits"},
           Case{kGet, "/v2/models/digits/ready", "", "digits"},
           Case{kPost, "/v1/models/digits:predict", "", "digits"},
           Case{kPost, "/v1/models/digits/versions/2:predict", "", "digits"},
           Case{kPost, "/v1/models/digits/labels/stable:predict", "", "digits"},
           Case{kPost, "/predict", "model=digits", "digits"},
       }) {
    const RouteAccess route = ClassifyHttpRoute(c.method, c.path, c.query, "");
    EXPECT_EQ(route.access, Access::kInference) << c.path;
    EXPECT_TRUE(route.for_model) << c.path;
    EXPECT_EQ(route.model, c.model) << c.path;
  }
}

TEST(RouteAccessTest, OpenAiEndpointsNeedTheInferenceRoleAndNameTheirModelInTheBody) {
  for (const char* path : {"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}) {
    const RouteAccess route = ClassifyHttpRoute(kPost, path, "", "mlp");
    EXPECT_EQ(route.access, Access::kInference) << path;
    EXPECT_FALSE(route.for_model) << path;  // checked once the body is parsed
  }
}

TEST(RouteAccessTest, PredictWithoutModelGoesToTheDefault) {
  const RouteAccess route = ClassifyHttpRoute(kPost, "/predict", "", "mlp");
  EXPECT_TRUE(route.for_model);
  EXPECT_EQ(route.model, "mlp");
  const RouteAccess unnamed = ClassifyHttpRoute(kPost, "/predict", "", "");
  EXPECT_TRUE(unnamed.for_model);
  EXPECT_EQ(unnamed.model, "");
}

TEST(RouteAccessTest, ServerMetadataAndUnknownPathsNeedAKey) {
  EXPECT_EQ(ClassOf(kGet, "/v2"), Access::kInference);
  EXPECT_FALSE(ClassifyHttpRoute(kGet, "/v2", "", "").for_model);
  EXPECT_EQ(ClassOf(kGet, "/"), Access::kInference);
  EXPECT_EQ(ClassOf(kGet, "/nope"), Access::kInference);
  EXPECT_EQ(ClassOf(kGet, "/v2/health/other"), Access::kPublic);  // answers 404 anyway
}

}  // namespace
}  // namespace inferd

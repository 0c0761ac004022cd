// The route table (http_routes.h) as a whole: every row parses, is reachable, and has the
// class access control gives it; what no row matches keeps the unknown-path rule.
#include <string>

#include "frontends/http/routing/http_routes.h"
#include "frontends/http/routing/route_access.h"
#include "gtest/gtest.h"

namespace inferd {
namespace {

// A method the row takes (its write class when it takes POST).
HttpMethod MethodOf(const HttpRoute& route) {
  return route.Takes(HttpMethod::kPost) ? HttpMethod::kPost : HttpMethod::kGet;
}

TEST(RouteTableTest, EveryPatternParses) {
  for (const HttpRoute& route : HttpRoutes()) {
    EXPECT_TRUE(RoutePattern::Parse(route.pattern).ok()) << route.pattern;
  }
}

TEST(RouteTableTest, EveryRowAnswersItsExampleAndNoEarlierRowShadowsIt) {
  for (const HttpRoute& route : HttpRoutes()) {
    const PathSegments path = SplitPath(route.example);
    const RouteMatch match = MatchHttpRoute(MethodOf(route), path);
    ASSERT_NE(match.route, nullptr) << route.pattern;
    EXPECT_EQ(match.route, &route)
        << route.example << " reaches " << match.route->pattern << ", not " << route.pattern;
  }
}

TEST(RouteTableTest, EveryRowIsClassifiedAsItsRowSays) {
  for (const HttpRoute& route : HttpRoutes()) {
    for (HttpMethod method :
         {HttpMethod::kGet, HttpMethod::kHead, HttpMethod::kPost, HttpMethod::kOther}) {
      if (route.other_methods_not_found && !route.Takes(method)) continue;
      const RouteAccess access = ClassifyHttpRoute(method, route.example, "", "");
      const bool read = method == HttpMethod::kGet || method == HttpMethod::kHead;
      EXPECT_EQ(access.access, read ? route.read : route.write) << route.example;
      // An inference route that names a model is checked against the key's models.
      if (access.access == Access::kInference && route.model == RouteModel::kPath) {
        EXPECT_EQ(access.for_model, RoutePattern::Parse(route.pattern)->names_model())
            << route.example;
      }
    }
  }
}

TEST(RouteTableTest, OnlyReadsAreOpenToMonitoringAndNothingButHealthIsPublic) {
  for (const HttpRoute& route : HttpRoutes()) {
    // A write is never monitoring: a monitoring key reads, it changes nothing. (A family's
    // ** fallback keeps the family's class: it answers 404 whatever the method.)
    if (route.Takes(HttpMethod::kPost) && !route.pattern.ends_with("**")) {
      EXPECT_NE(route.write, Access::kMonitoring) << route.pattern;
    }
    if (route.read == Access::kPublic || route.write == Access::kPublic) {
      EXPECT_EQ(route.pattern, "/v2/health/{name}");
    }
  }
}

TEST(RouteTableTest, AnUnknownPathNeedsAKey) {
  for (std::string_view path : {"/", "/nope", "/v3/health/live", "/v2/health", "/metrics/x",
                                "/v2/models", "/v1/nope", "/v2/logging/x"}) {
    const PathSegments segments = SplitPath(path);
    EXPECT_EQ(MatchHttpRoute(HttpMethod::kGet, segments).route, nullptr) << path;
    const RouteAccess access = ClassifyHttpRoute(HttpMethod::kGet, path, "", "");
    EXPECT_EQ(access.access, Access::kInference) << path;
    EXPECT_FALSE(access.for_model) << path;
  }
}

TEST(RouteTableTest, AllowHeaderListsTheRowsMethods) {
  for (const HttpRoute& route : HttpRoutes()) {
    if (route.methods == kAnyMethod) continue;
    const std::string allow(route.Allow());
    EXPECT_EQ(allow.find("GET") != std::string::npos, route.Takes(HttpMethod::kGet));
    EXPECT_EQ(allow.find("POST") != std::string::npos, route.Takes(HttpMethod::kPost));
  }
}

}  // namespace
}  // namespace inferd

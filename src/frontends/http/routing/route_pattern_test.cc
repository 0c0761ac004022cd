#include "frontends/http/routing/route_pattern.h"

#include "gtest/gtest.h"

namespace inferd {
namespace {

bool Matches(std::string_view pattern, std::string_view path, PathCaptures* captures) {
  absl::StatusOr<RoutePattern> parsed = RoutePattern::Parse(pattern);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  const PathSegments segments = SplitPath(path);
  return parsed->Match(segments, captures);
}

TEST(RoutePatternTest, SplitSkipsEmptySegments) {
  EXPECT_EQ(SplitPath("//v2//models/m/"), (PathSegments{"v2", "models", "m"}));
  EXPECT_TRUE(SplitPath("/").empty());
  EXPECT_TRUE(SplitPath("").empty());
}

TEST(RoutePatternTest, LiteralsAndCaptures) {
  PathCaptures c;
  EXPECT_TRUE(Matches("/v2/repository/models/{model}/load", "/v2/repository/models/m/load", &c));
  EXPECT_EQ(c.model, "m");
  EXPECT_FALSE(Matches("/v2/repository/models/{model}/load", "/v2/repository/models/m", &c));
  EXPECT_FALSE(Matches("/v2/health/{name}", "/v2/health/live/more", &c));
  EXPECT_TRUE(Matches("/dashboard/{name}", "/dashboard/app.js", &c));
  EXPECT_EQ(c.name, "app.js");
}

TEST(RoutePatternTest, RefTakesAVersionGreedily) {
  PathCaptures c;
  ASSERT_TRUE(Matches("/v2/models/{ref}/infer", "/v2/models/m/versions/3/infer", &c));
  EXPECT_EQ(c.model, "m");
  EXPECT_TRUE(c.has_version);
  EXPECT_EQ(c.version, "3");
  // Checked when served, so a bad version still picks the route.
  ASSERT_TRUE(Matches("/v2/models/{ref}/infer", "/v2/models/m/versions/abc/infer", &c));
  EXPECT_EQ(c.version, "abc");
  ASSERT_TRUE(Matches("/v2/models/{ref}", "/v2/models/m/versions", &c));
  EXPECT_TRUE(c.missing_version);
  ASSERT_TRUE(Matches("/v2/models/{ref}", "/v2/models/m", &c));
  EXPECT_FALSE(c.has_version);
}

TEST(RoutePatternTest, VerbEndsTheLastSegment) {
  PathCaptures c;
  ASSERT_TRUE(Matches("/v1/models/{ref}:predict", "/v1/models/m/versions/2:predict", &c));
  EXPECT_EQ(c.model, "m");
  EXPECT_EQ(c.version, "2");
  EXPECT_FALSE(Matches("/v1/models/{ref}:predict", "/v1/models/m", &c));
  ASSERT_TRUE(Matches("/v1/models/{model}/labels/{label}:predict",
                      "/v1/models/m/labels/stable:predict", &c));
  EXPECT_EQ(c.label, "stable");
  EXPECT_TRUE(Matches("/v1/models/{ref}/**:predict", "/v1/models/m/a/b:predict", &c));
}

TEST(RoutePatternTest, OpenAiModelHasNoColon) {
  PathCaptures c;
  EXPECT_TRUE(Matches("/v1/models/{openai_model}", "/v1/models/m", &c));
  EXPECT_FALSE(Matches("/v1/models/{openai_model}", "/v1/models/m:predict", &c));
}

TEST(RoutePatternTest, RestMatchesZeroOrMoreSegments) {
  PathCaptures c;
  EXPECT_TRUE(Matches("/v2/repository/**", "/v2/repository", &c));
  EXPECT_TRUE(Matches("/v2/repository/**", "/v2/repository/a/b/c", &c));
  EXPECT_FALSE(Matches("/v2/repository/**", "/v2", &c));
}

TEST(RoutePatternTest, MalformedPatternsAreRefused) {
  EXPECT_FALSE(RoutePattern::Parse("/v2/**/x").ok());
  EXPECT_FALSE(RoutePattern::Parse("/v2/{nope}").ok());
  EXPECT_FALSE(RoutePattern::Parse("/v2/{ref}:predict/x").ok());
}

}  // namespace
}  // namespace inferd

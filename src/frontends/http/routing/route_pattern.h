// A route's path pattern, written once in the route table (http_routes.cc) and matched
// against a request's path segments. Segments are what lies between '/'; empty ones are
// skipped, so "//v2//models/m" is "/v2/models/m" (dispatch and access see the same path).
//
//   literal          matches itself
//   {model}          any one segment: a model's name
//   {openai_model}   one segment without ':' (with one, "M:predict" is TF-Serving's)
//   {ref}            a model and an optional version: "M" or "M/versions/V". V is checked
//                    when the route is served, so "M/versions/abc" still picks its route and
//                    gets a 400 naming the version, not a 404
//   {label}          one segment: a TF-Serving version label (after {model})
//   {name}           any one segment for the handler (a dashboard file, a health probe)
//   **               the rest of the path, zero or more segments (last only): a family's
//                    fallback, so that an unknown path under it keeps the family's class
//   :verb            a suffix of the last pattern segment ("{ref}:predict", "**:predict"):
//                    the path's last segment must end with it, and is matched without it
//
// Patterns are parsed once, when the table is first used, and matched without allocating.
// Thread-safety: immutable after Parse; Match is const.
#ifndef INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_PATTERN_H_
#define INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_PATTERN_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"

namespace inferd {

// A request path split at '/', empty segments skipped. Inline for every path a route
// answers (the longest has 7 segments): only an odd, long path allocates.
using PathSegments = absl::InlinedVector<std::string_view, 12>;
PathSegments SplitPath(std::string_view path);

// What a pattern took from the path; views into it.
struct PathCaptures {
  std::string_view model;    // {model}, {openai_model}, {ref}'s M
  std::string_view version;  // {ref}'s V, when has_version
  bool has_version = false;
  bool missing_version = false;  // {ref} ended at "/versions"
  std::string_view label;        // {label}
  std::string_view name;         // {name}
};

class RoutePattern {
 public:
  // InvalidArgument for a malformed pattern (an unknown {kind}, ** not last): a programmer
  // error, which route_table_test.cc catches before a server would.
  static absl::StatusOr<RoutePattern> Parse(std::string_view pattern);

  // Whether `path` matches; on true `captures` holds what the pattern took.
  bool Match(std::span<const std::string_view> path, PathCaptures* captures) const;
  // False when `path` cannot match (its segment count or first segment is wrong): a cheap
  // test the table scan makes before Match, so that most rows cost two comparisons.
  bool MayMatch(std::span<const std::string_view> path) const {
    return path.size() >= min_segments_ && path.size() <= max_segments_ &&
           (last_literal_.empty() || path.back() == last_literal_);
  }
  // The pattern's first segment when it is a literal (every route's is: the table groups
  // its rows by it); empty otherwise.
  std::string_view first_literal() const { return first_literal_; }

  bool has_ref() const { return has_ref_; }
  bool has_label() const { return has_label_; }
  // Whether the pattern captures a model's name ({model}, {openai_model}, {ref}).
  bool names_model() const { return names_model_; }

 private:
  enum class Kind : uint8_t { kLiteral, kModel, kOpenAiModel, kRef, kLabel, kName, kRest };
  struct Segment {
    Kind kind;
    std::string_view literal;
  };

  absl::InlinedVector<Segment, 6> segments_;
  std::string_view verb_;           // ":predict", or empty
  std::string_view first_literal_;  // the first segment when a literal
  std::string_view last_literal_;   // the last one when a literal (no ** or :verb)
  size_t min_segments_ = 0;
  size_t max_segments_ = 0;
  bool has_ref_ = false;
  bool has_label_ = false;
  bool names_model_ = false;
};

}  // namespace inferd

#endif  // INFERD_FRONTENDS_HTTP_ROUTING_ROUTE_PATTERN_H_

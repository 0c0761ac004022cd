#include "frontends/http/routing/route_pattern.h"

#include <cstdint>
#include <string>

#include "common/strings.h"

namespace inferd {

PathSegments SplitPath(std::string_view path) {
  PathSegments segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

absl::StatusOr<RoutePattern> RoutePattern::Parse(std::string_view pattern) {
  RoutePattern parsed;
  const PathSegments parts = SplitPath(pattern);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    const bool last = i + 1 == parts.size();
    // The verb follows a capture: "{ref}:predict", "**:predict".
    const size_t colon = part.find(':');
    if (colon != std::string_view::npos && (part.starts_with('{') || part.starts_with('*'))) {
      if (!last) return absl::InvalidArgumentError(StrCat("'", pattern, "': a :verb ends it"));
      parsed.verb_ = part.substr(colon);
      part = part.substr(0, colon);
    }
    Segment segment{Kind::kLiteral, part};
    if (part == "**") {
      if (!last) return absl::InvalidArgumentError(StrCat("'", pattern, "': ** must be last"));
      segment.kind = Kind::kRest;
    } else if (part == "{model}") {
      segment.kind = Kind::kModel;
    } else if (part == "{openai_model}") {
      segment.kind = Kind::kOpenAiModel;
    } else if (part == "{ref}") {
      segment.kind = Kind::kRef;
      parsed.has_ref_ = true;
    } else if (part == "{label}") {
      segment.kind = Kind::kLabel;
      parsed.has_label_ = true;
    } else if (part == "{name}") {
      segment.kind = Kind::kName;
    } else if (part.find_first_of("{}*:") != std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat("'", pattern, "': unknown segment '", part, "'"));
    }
    if (segment.kind == Kind::kModel || segment.kind == Kind::kOpenAiModel ||
        segment.kind == Kind::kRef) {
      parsed.names_model_ = true;
    }
    parsed.segments_.push_back(segment);
  }
  for (const Segment& segment : parsed.segments_) {
    if (segment.kind == Kind::kRest) {
      parsed.max_segments_ = SIZE_MAX;
      break;
    }
    parsed.min_segments_ += 1;
    parsed.max_segments_ += segment.kind == Kind::kRef ? 3 : 1;  // "M/versions/V"
  }
  if (!parsed.segments_.empty() && parsed.segments_[0].kind == Kind::kLiteral) {
    parsed.first_literal_ = parsed.segments_[0].literal;
  }
  if (!parsed.segments_.empty() && parsed.segments_.back().kind == Kind::kLiteral &&
      parsed.verb_.empty()) {
    parsed.last_literal_ = parsed.segments_.back().literal;
  }
  return parsed;
}

bool RoutePattern::Match(std::span<const std::string_view> path, PathCaptures* captures) const {
  const size_t n = path.size();
  // The path's last segment without the verb; the others as they are.
  std::string_view last;
  if (!verb_.empty()) {
    if (n == 0 || !path[n - 1].ends_with(verb_)) return false;
    last = path[n - 1].substr(0, path[n - 1].size() - verb_.size());
  }
  auto at = [&](size_t i) { return !verb_.empty() && i + 1 == n ? last : path[i]; };

  PathCaptures taken;
  size_t i = 0;
  for (const Segment& segment : segments_) {
    if (segment.kind == Kind::kRest) {
      *captures = taken;
      return true;
    }
    if (i >= n) return false;
    const std::string_view part = at(i);
    switch (segment.kind) {
      case Kind::kLiteral:
        if (part != segment.literal) return false;
        break;
      case Kind::kOpenAiModel:
        if (part.find(':') != std::string_view::npos) return false;
        taken.model = part;
        break;
      case Kind::kModel:
        taken.model = part;
        break;
      case Kind::kRef:
        // Greedy, as a model's path reads: "M/versions/V" is always a version.
        taken.model = part;
        if (i + 1 < n && at(i + 1) == "versions") {
          if (i + 2 < n) {
            taken.version = at(i + 2);
            taken.has_version = true;
            i += 2;
          } else {
            taken.missing_version = true;
            i += 1;
          }
        }
        break;
      case Kind::kLabel:
        taken.label = part;
        break;
      case Kind::kName:
        taken.name = part;
        break;
      case Kind::kRest:
        break;
    }
    ++i;
  }
  if (i != n) return false;
  *captures = taken;
  return true;
}

}  // namespace inferd

#include "frontends/http/handlers/repository_handlers.h"

#include <string>
#include <utility>

#include "common/json_body.h"
#include "common/strings.h"
#include "core/config/version_dirs.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

HttpReply TrafficReply(const TrafficRules& rules) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("labels");
  writer.StartObject();
  for (const auto& [label, version] : rules.labels) {
    writer.Key(label.c_str());
    writer.Int64(version);
  }
  writer.EndObject();
  writer.Key("traffic");
  writer.StartObject();
  for (const auto& [target, weight] : rules.weights) {
    writer.Key(target.c_str());
    writer.Int64(weight);
  }
  writer.EndObject();
  writer.EndObject();
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

// A JSON value that is a non-negative integer (a version or a weight).
absl::StatusOr<int64_t> NonNegative(simdjson::dom::element value, std::string_view where) {
  int64_t number = 0;
  uint64_t unsigned_number = 0;
  if (!value.get(number) && number >= 0) return number;
  if (!value.get(unsigned_number) && unsigned_number <= INT64_MAX) {
    return static_cast<int64_t>(unsigned_number);
  }
  return absl::InvalidArgumentError(StrCat(where, " must be a non-negative integer"));
}

absl::StatusOr<TrafficRules> DecodeTraffic(std::string& body, TrafficRules rules) {
  absl::StatusOr<ParsedJson> json = ParseJsonBody(body);
  if (!json.ok()) return json.status();
  simdjson::dom::object object;
  if (json->root().get(object)) {
    return absl::InvalidArgumentError(
        "the body must be a JSON object {\"labels\": {...}, \"traffic\": {...}}");
  }
  for (auto [key, value] : object) {
    if (key != "labels" && key != "traffic") {
      return absl::InvalidArgumentError(
          StrCat("unknown field '", key, "' (known: labels, traffic)"));
    }
  }
  simdjson::dom::element labels, traffic;
  if (!object["labels"].get(labels)) {
    simdjson::dom::object map;
    if (labels.get(map)) return absl::InvalidArgumentError("'labels' must be an object");
    rules.labels.clear();
    for (auto [label, version] : map) {
      if (label.empty() || ParseVersionDirName(label)) {
        return absl::InvalidArgumentError(
            StrCat("labels: '", label, "': a label is a name, not a number"));
      }
      absl::StatusOr<int64_t> v = NonNegative(version, StrCat("labels.", label));
      if (!v.ok()) return v.status();
      rules.labels[std::string(label)] = *v;
    }
  }
  if (!object["traffic"].get(traffic)) {
    simdjson::dom::object map;
    if (traffic.get(map)) return absl::InvalidArgumentError("'traffic' must be an object");
    rules.weights.clear();
    for (auto [target, weight] : map) {
      absl::StatusOr<int64_t> w = NonNegative(weight, StrCat("traffic.", target));
      if (!w.ok()) return w.status();
      rules.weights.emplace_back(std::string(target), *w);
    }
  }
  return rules;
}

}  // namespace

void HandleRepositoryLoad(const HandlerContext& ctx, std::string_view name,
                          ResponderPtr responder) {
  ctx.models->LoadAsync(name, [responder = std::move(responder)](absl::Status status) {
    if (status.ok()) return responder->Send(HttpReply{200, "{}", "application/json", {}});
    // A model that cannot fit is a temporary condition (503); a bad model file or config
    // is the request's problem (400); an unknown model is 404.
    const unsigned code = absl::IsNotFound(status) &&
                                  status.message().find("no model folder") != std::string_view::npos
                              ? 404
                          : absl::IsUnavailable(status) ? 503
                                                        : 400;
    responder->Send(ErrorReply(code, StrCat("load failed: ", status.message())));
  });
}

HttpReply HandleRepositoryUnload(const HandlerContext& ctx, std::string_view name) {
  if (absl::Status status = ctx.models->Unload(name); !status.ok()) return ErrorReply(status);
  return HttpReply{200, "{}", "application/json", {}};
}

HttpReply HandleGetTraffic(const HandlerContext& ctx, std::string_view name) {
  absl::StatusOr<TrafficRules> rules = ctx.models->GetTrafficRules(name);
  if (!rules.ok()) return ErrorReply(rules.status());
  return TrafficReply(*rules);
}

HttpReply HandleSetTraffic(const HandlerContext& ctx, std::string_view name,
                           const HttpRequestView& request) {
  absl::StatusOr<TrafficRules> current = ctx.models->GetTrafficRules(name);
  if (!current.ok()) return ErrorReply(current.status());
  absl::StatusOr<TrafficRules> rules = DecodeTraffic(*request.body, *std::move(current));
  if (!rules.ok()) return ErrorReply(rules.status());
  if (absl::Status status = ctx.models->SetTrafficRules(name, *rules); !status.ok()) {
    return ErrorReply(status);
  }
  return TrafficReply(*rules);
}

}  // namespace inferd

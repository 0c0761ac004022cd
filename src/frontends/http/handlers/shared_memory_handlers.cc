#include "frontends/http/handlers/shared_memory_handlers.h"

#include <cstdint>
#include <optional>
#include <string>

#include "auth/tenant.h"
#include "common/json_body.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "frontends/http/codecs/json_tensor_codec.h"

namespace inferd {
namespace {

constexpr std::string_view kSystem = "systemsharedmemory";

HttpReply JsonReply(const rapidjson::StringBuffer& buffer) {
  return HttpReply{200, std::string(buffer.GetString(), buffer.GetSize()), "application/json", {}};
}

HttpReply Ok() { return HttpReply{200, "{}", "application/json", {}}; }

HttpReply StatusReply(const std::vector<SharedMemoryRegionInfo>& regions) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartArray();
  for (const SharedMemoryRegionInfo& region : regions) {
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, region.name);
    writer.Key("key");
    WriteString(writer, region.key);
    writer.Key("offset");
    writer.Uint64(region.offset);
    writer.Key("byte_size");
    writer.Uint64(region.byte_size);
    writer.EndObject();
  }
  writer.EndArray();
  return JsonReply(buffer);
}

absl::StatusOr<uint64_t> GetUnsigned(simdjson::dom::object body, std::string_view key,
                                     bool required) {
  simdjson::dom::element value;
  if (body[key].get(value)) {
    if (!required) return 0;
    return absl::InvalidArgumentError(StrCat("the register body needs '", key, "'"));
  }
  uint64_t number;
  if (value.get(number)) {
    return absl::InvalidArgumentError(StrCat("'", key, "' must be a non-negative integer"));
  }
  return number;
}

// {"key": "/shm_key", "offset": 0, "byte_size": N}
absl::Status Register(SharedMemoryRegistry& registry, std::string_view owner, std::string_view name,
                      const HttpRequestView& request) {
  ASSIGN_OR_RETURN(const ParsedJson json, ParseJsonBody(*request.body));
  simdjson::dom::object body;
  if (json.root().get(body)) {
    return absl::InvalidArgumentError(
        "the register body must be a JSON object: {\"key\", \"offset\", \"byte_size\"}");
  }
  ASSIGN_OR_RETURN(std::string_view key, GetString(body, "key", "the register body"));
  ASSIGN_OR_RETURN(uint64_t offset, GetUnsigned(body, "offset", /*required=*/false));
  ASSIGN_OR_RETURN(uint64_t byte_size, GetUnsigned(body, "byte_size", /*required=*/true));
  return registry.Register(owner, name, key, offset, byte_size);
}

// CUDA shared memory: nothing is ever registered.
HttpReply HandleCuda(std::string_view action, const HttpRequestView& request) {
  const bool get = request.method == HttpMethod::kGet;
  if (action == "status")
    return get ? HttpReply{200, "[]", "application/json", {}} : MethodNotAllowed("GET");
  if (request.method != HttpMethod::kPost) return MethodNotAllowed("POST");
  if (action == "unregister") return Ok();
  return ErrorReply(absl::UnimplementedError(
      "CUDA shared memory is not supported: inferd keeps tensors in host memory; register "
      "the region as system shared memory (/v2/systemsharedmemory) instead"));
}

}  // namespace

HttpReply HandleSharedMemory(const HandlerContext& ctx, const HttpRequestView& request,
                             std::span<const std::string_view> segments) {
  // /v2/<kind>/<action> or /v2/<kind>/region/<name>/<action>
  const size_t n = segments.size();
  std::optional<std::string_view> region;
  if (n == 5 && segments[2] == "region") {
    region = segments[3];
  } else if (n != 3) {
    return ErrorReply(404, StrCat("unknown path '", request.path, "': use /v2/", segments[1],
                                  "[/region/NAME]/status, "
                                  "/region/NAME/register or [/region/NAME]/unregister"));
  }
  const std::string_view action = segments.back();
  if (action != "status" && action != "unregister" && !(action == "register" && region)) {
    return ErrorReply(404, StrCat("unknown shared-memory action '", action,
                                  "': status, register (of a region) or unregister"));
  }
  if (segments[1] != kSystem) return HandleCuda(action, request);
  if (ctx.shared_memory == nullptr) {
    return ErrorReply(absl::UnimplementedError("shared memory is not enabled on this server"));
  }
  SharedMemoryRegistry& registry = *ctx.shared_memory;
  // Every call below reaches the caller's own regions only (shared_memory_registry.h).
  const std::string owner = TenantOwner(request.tenant);
  if (action == "status") {
    if (request.method != HttpMethod::kGet) return MethodNotAllowed("GET");
    if (!region) return StatusReply(registry.Status(owner));
    absl::StatusOr<SharedMemoryRegionInfo> info = registry.Status(owner, *region);
    if (!info.ok()) return ErrorReply(info.status());
    return StatusReply({*info});
  }
  if (request.method != HttpMethod::kPost) return MethodNotAllowed("POST");
  if (action == "unregister") {
    if (region) {
      registry.Unregister(owner, *region);
    } else {
      registry.UnregisterAll(owner);
    }
    return Ok();
  }
  if (absl::Status registered = Register(registry, owner, *region, request); !registered.ok()) {
    return ErrorReply(registered);
  }
  return Ok();
}

}  // namespace inferd

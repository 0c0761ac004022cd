#include "frontends/http/handlers/kserve_handlers.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "common/client_paths.h"
#include "common/strings.h"
#include "frontends/http/codecs/infer_body.h"
#include "frontends/http/codecs/json_tensor_codec.h"
#include "frontends/http/codecs/kserve_codec.h"
#include "frontends/http/handlers/index_row.h"

namespace inferd {
namespace {

HttpReply JsonReply(unsigned status, const rapidjson::StringBuffer& buffer) {
  HttpReply reply;
  reply.status = status;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

void WriteTensorSpecs(const ModelConfig& config, const std::vector<TensorSpec>& specs,
                      JsonWriter& writer) {
  writer.StartArray();
  for (const TensorSpec& spec : specs) {
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, spec.name);
    writer.Key("datatype");
    WriteString(writer, DataTypeName(spec.datatype));
    writer.Key("shape");
    writer.StartArray();
    for (int64_t dim : config.FullShape(spec)) writer.Int64(dim);
    writer.EndArray();
    writer.EndObject();
  }
  writer.EndArray();
}

}  // namespace

HttpReply HandleServerLive(const HandlerContext&) {
  return HttpReply{200, R"({"live":true})", "application/json", {}};
}

HttpReply HandleServerReady(const HandlerContext& ctx) {
  if (ctx.draining->load()) return HttpReply{503, R"({"ready":false})", "application/json", {}};
  return HttpReply{200, R"({"ready":true})", "application/json", {}};
}

HttpReply HandleServerMetadata(const HandlerContext& ctx) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("name");
  writer.String("inferd");
  writer.Key("version");
  WriteString(writer, ctx.server_version);
  writer.Key("extensions");
  writer.StartArray();
  writer.String("model_repository");
  writer.String("statistics");
  writer.String("binary_tensor_data");
  if (ctx.shared_memory != nullptr) writer.String("system_shared_memory");
  writer.EndArray();
  writer.EndObject();
  return JsonReply(200, buffer);
}

HttpReply HandleModelMetadata(const HandlerContext& ctx, const ModelRef& ref) {
  // Described without loading: a lazy or evicted model has metadata too.
  absl::StatusOr<ModelDescription> model = ctx.inference->Describe(ref.name, ref.version);
  if (!model.ok()) return ErrorReply(model.status());
  const std::vector<int64_t>& served = model->versions;
  const ModelConfig& config = *model->config;
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, config.name);
  writer.Key("versions");
  writer.StartArray();
  for (int64_t version : served) WriteString(writer, std::to_string(version));
  writer.EndArray();
  writer.Key("platform");
  WriteString(writer, model->platform);
  writer.Key("inputs");
  WriteTensorSpecs(config, config.inputs, writer);
  writer.Key("outputs");
  WriteTensorSpecs(config, config.outputs, writer);
  writer.EndObject();
  return JsonReply(200, buffer);
}

HttpReply HandleModelReady(const HandlerContext& ctx, const ModelRef& ref) {
  absl::StatusOr<ModelHandle> model = ctx.models->Acquire(ref.name, ref.version);
  if (absl::IsNotFound(model.status())) return ErrorReply(model.status());
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, ref.name);
  writer.Key("ready");
  writer.Bool(model.ok());
  if (!model.ok()) {
    writer.Key("reason");
    WriteString(writer, WithoutServerPaths(std::string(model.status().message())));
  }
  writer.EndObject();
  return JsonReply(model.ok() ? 200 : 503, buffer);
}

HttpReply HandleRepositoryIndex(const HandlerContext& ctx) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  writer.StartArray();
  for (const ModelStatus& status : ctx.models->Index()) {
    writer.StartObject();
    WriteIndexRowFields(status, writer);
    writer.EndObject();
  }
  writer.EndArray();
  return JsonReply(200, buffer);
}

void HandleModelInfer(const HandlerContext& ctx, const ModelRef& ref,
                      const HttpRequestView& request, ResponderPtr responder) {
  // An unknown or broken model is reported before the body is looked at.
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.inference->ConfigFor(ref.name);
  if (!config.ok()) return responder->Send(ErrorReply(config.status()));
  absl::StatusOr<DecodedInferBody> decoded = DecodeInferBody(request, ctx.shared_memory);
  if (!decoded.ok()) {
    NoteModelIfLoaded(ctx, *responder, ref.name, ref.version);
    return responder->Send(ErrorReply(decoded.status()));
  }
  if (absl::Status headers = ApplySchedulingHeaders(request, *decoded->request); !headers.ok()) {
    return responder->Send(ErrorReply(headers));
  }
  if ((*config)->capabilities.generates_text) {
    // A generation may run for long: stop it when the client goes away.
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    decoded->request->cancelled = cancelled;
    responder->WatchDisconnect([cancelled] { cancelled->store(true, std::memory_order_release); });
  }
  auto encode = [id = decoded->request->id, destinations = std::move(decoded->outputs)](
                    std::string_view name, int64_t version, const InferResponse& response) {
    return EncodeInferReply(name, version, id, response, destinations);
  };
  SubmitInference(ctx, ref.name, ref.version, std::move(decoded->request), std::move(responder),
                  std::move(encode));
}

}  // namespace inferd

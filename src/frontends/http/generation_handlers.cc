#include "frontends/http/generation_handlers.h"

#include <charconv>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "auth/access_policy.h"
#include "common/json_body.h"
#include "common/strings.h"
#include "frontends/http/embedding_codec.h"
#include "frontends/http/session_request.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

// Receives one generation's events on the model's decode thread and turns them into the
// reply: one reply when it ends, or a stream of server-sent events. Never blocks: both go
// through the responder, which queues them for the I/O thread.
class GenerationSink {
 public:
  GenerationSink(GenerationCall call, ResponderPtr responder)
      : call_(std::move(call)), responder_(std::move(responder)) {}

  void OnEvent(GenerationEvent event) {
    if (!call_.stream) {
      text_ += event.text;
      if (!event.done) return;
      if (!event.status.ok()) {
        return responder_->Send(GenerationErrorReply(call_.api, event.status));
      }
      responder_->Defer([call = call_, text = std::move(text_), event = std::move(event)] {
        return EncodeGenerationReply(call, text, event);
      });
      return;
    }
    if (stream_ == nullptr) {
      // Refused before any token (queue full, cancelled while queued): a plain error reply.
      if (event.done && !event.status.ok()) {
        return responder_->Send(GenerationErrorReply(call_.api, event.status));
      }
      HttpReply head;
      head.content_type = "text/event-stream";
      stream_ = responder_->StartStream(std::move(head));
      if (stream_ == nullptr) {
        return responder_->Send(ErrorReply(501, "this connection cannot stream"));
      }
      if (std::string start = EncodeStreamStart(call_); !start.empty()) {
        stream_->Write(std::move(start));
      }
    }
    if (!event.done) return stream_->Write(EncodeStreamText(call_, event.text));
    if (!event.status.ok()) return stream_->End(EncodeStreamError(call_, event.status));
    stream_->End(EncodeStreamEnd(call_, event));
  }

 private:
  const GenerationCall call_;
  const ResponderPtr responder_;
  std::string text_;
  ReplyStreamPtr stream_;
};

// The request's deadline: the Inference-Timeout-Us header, else the model's
// queue.default_timeout_us; 0 when neither sets one.
absl::StatusOr<int64_t> TimeoutUs(const HttpRequestView& view, const ModelConfig& config) {
  const std::string_view header = view.Header(kTimeoutHeader);
  if (header.empty()) return config.queue.default_timeout_us;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), value);
  if (ec != std::errc() || end != header.data() + header.size() || value < 0) {
    return absl::InvalidArgumentError(StrCat("header ", kTimeoutHeader, ": '", header,
                                             "' is not a non-negative integer (microseconds)"));
  }
  return value;
}

// Acquires the model (loading it if needed, never on this thread) and starts the generation.
void Submit(const HandlerContext& ctx, std::optional<int64_t> version, ParsedGeneration parsed,
            const HttpRequestView& view, ResponderPtr responder) {
  const GenerationApi api = parsed.call.api;
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config =
      ctx.models->ConfigOf(parsed.call.model);
  if (!config.ok()) return responder->Send(GenerationErrorReply(api, config.status()));
  if ((*config)->backend != "llama") {
    return responder->Send(GenerationErrorReply(
        api, absl::InvalidArgumentError(StrCat("model '", parsed.call.model, "' (backend ",
                                               (*config)->backend,
                                               ") does not generate text; use its infer "
                                               "endpoint"))));
  }
  absl::StatusOr<int64_t> timeout_us = TimeoutUs(view, **config);
  if (!timeout_us.ok()) return responder->Send(GenerationErrorReply(api, timeout_us.status()));
  if (*timeout_us > 0) {
    parsed.request->deadline = parsed.request->arrival + std::chrono::microseconds(*timeout_us);
  }
  if (parsed.call.id.ends_with('-')) parsed.call.id += NewRequestId();
  // Cancel when the client goes away, whether the request waits for a load, waits in the
  // queue or is generating.
  responder->WatchDisconnect([cancelled = parsed.request->cancelled] {
    cancelled->store(true, std::memory_order_release);
  });
  const std::string name = parsed.call.model;
  auto pending = std::make_shared<ParsedGeneration>(std::move(parsed));
  ctx.models->AcquireForInference(
      name, version, *timeout_us,
      [pending, responder = std::move(responder)](absl::StatusOr<ModelHandle> model) mutable {
        const GenerationApi api = pending->call.api;
        if (!model.ok()) return responder->Send(GenerationErrorReply(api, model.status()));
        NoteModel(*responder, *model);
        pending->call.model_version = std::to_string((*model)->version());
        auto sink = std::make_shared<GenerationSink>(pending->call, std::move(responder));
        // The sink holds no model handle: the decode thread must never release the last one
        // (ServedModel counts the request as in flight instead).
        pending->request->on_event = [sink](GenerationEvent event) {
          sink->OnEvent(std::move(event));
        };
        (*model)->Generate(std::move(pending->request));
      });
}

void WriteModelEntry(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view name) {
  w.StartObject();
  w.Key("id");
  w.String(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  w.Key("object");
  w.String("model");
  w.Key("created");
  w.Int64(0);
  w.Key("owned_by");
  w.String("inferd");
  w.EndObject();
}

bool Generates(const HandlerContext& ctx, std::string_view name) {
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.models->ConfigOf(name);
  return config.ok() && (*config)->backend == "llama";
}

}  // namespace

void HandleOpenAiGeneration(const HandlerContext& ctx, GenerationApi api,
                            const HttpRequestView& request, ResponderPtr responder) {
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(GenerationErrorReply(api, body.status()));
  absl::StatusOr<ParsedGeneration> parsed = ParseOpenAiRequest(body->root(), api);
  if (!parsed.ok()) return responder->Send(GenerationErrorReply(api, parsed.status()));
  // The router checked the role and the tenant's limits; the model is known only now.
  if (request.tenant != nullptr) {
    if (absl::Status allowed = CheckTenantModel(*request.tenant, parsed->call.model);
        !allowed.ok()) {
      return responder->Send(GenerationErrorReply(api, allowed));
    }
  }
  Submit(ctx, std::nullopt, *std::move(parsed), request, std::move(responder));
}

void HandleKServeGenerate(const HandlerContext& ctx, const ModelRef& ref, bool stream,
                          const HttpRequestView& request, ResponderPtr responder) {
  const GenerationApi api = GenerationApi::kKServe;
  if (auto config = ctx.models->ConfigOf(ref.name); !config.ok()) {
    return responder->Send(GenerationErrorReply(api, config.status()));
  }
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(GenerationErrorReply(api, body.status()));
  absl::StatusOr<ParsedGeneration> parsed = ParseKServeGenerate(body->root(), stream);
  if (!parsed.ok()) return responder->Send(GenerationErrorReply(api, parsed.status()));
  parsed->call.model = std::string(ref.name);
  Submit(ctx, ref.version, *std::move(parsed), request, std::move(responder));
}

void HandleOpenAiEmbeddings(const HandlerContext& ctx, const HttpRequestView& request,
                            ResponderPtr responder) {
  constexpr GenerationApi api = GenerationApi::kCompletion;  // OpenAI's error shape
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(GenerationErrorReply(api, body.status()));
  absl::StatusOr<ParsedEmbeddings> parsed = ParseEmbeddingsRequest(body->root());
  if (!parsed.ok()) return responder->Send(GenerationErrorReply(api, parsed.status()));
  if (request.tenant != nullptr) {
    if (absl::Status allowed = CheckTenantModel(*request.tenant, parsed->model); !allowed.ok()) {
      return responder->Send(GenerationErrorReply(api, allowed));
    }
  }
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.models->ConfigOf(parsed->model);
  if (!config.ok()) return responder->Send(GenerationErrorReply(api, config.status()));
  // Told from the config, so a lazy model is not loaded only to refuse.
  const auto flag = (*config)->parameters.find("embeddings");
  if ((*config)->backend != "llama" || flag == (*config)->parameters.end() ||
      flag->second != "true") {
    return responder->Send(GenerationErrorReply(
        api, absl::InvalidArgumentError(StrCat(
                 "model '", parsed->model, "' does not compute embeddings",
                 (*config)->backend == "llama"
                     ? " (its config.yaml would need parameters.embeddings: true)"
                     : StrCat(" (backend ", (*config)->backend, "); use its infer endpoint")))));
  }
  absl::StatusOr<int64_t> timeout_us = TimeoutUs(request, **config);
  if (!timeout_us.ok()) return responder->Send(GenerationErrorReply(api, timeout_us.status()));
  EmbedRequest& embed = *parsed->request;
  if (*timeout_us > 0) embed.deadline = embed.arrival + std::chrono::microseconds(*timeout_us);
  responder->WatchDisconnect(
      [cancelled = embed.cancelled] { cancelled->store(true, std::memory_order_release); });
  const std::string name = parsed->model;
  auto pending = std::make_shared<ParsedEmbeddings>(*std::move(parsed));
  ctx.models->AcquireForInference(
      name, std::nullopt, *timeout_us,
      [pending, responder = std::move(responder)](absl::StatusOr<ModelHandle> model) mutable {
        if (!model.ok()) return responder->Send(GenerationErrorReply(api, model.status()));
        NoteModel(*responder, *model);
        // As for generation: the callback holds no model handle (the decode thread must not
        // release the last one).
        pending->request->on_done = [responder, name = pending->model,
                                     base64 = pending->base64](absl::StatusOr<EmbedResult> result) {
          if (!result.ok()) return responder->Send(GenerationErrorReply(api, result.status()));
          // Encoded on the I/O thread, not the decode loop's.
          responder->Defer([name, base64, result = *std::move(result)] {
            return EncodeEmbeddingsReply(name, base64, result);
          });
        };
        (*model)->Embed(std::move(pending->request));
      });
}

void HandleChatTemplate(const HandlerContext& ctx, const ModelRef& ref,
                        const HttpRequestView& request, ResponderPtr responder) {
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(ErrorReply(body.status()));
  simdjson::dom::object fields;
  if (body->root().get(fields))
    return responder->Send(ErrorReply(400, "the body must be a JSON object"));
  absl::StatusOr<std::vector<ChatMessage>> messages = ParseChatMessages(fields);
  if (!messages.ok()) return responder->Send(ErrorReply(messages.status()));
  ctx.models->AcquireForInference(
      ref.name, ref.version, 0,
      [messages = *std::move(messages),
       responder = std::move(responder)](absl::StatusOr<ModelHandle> model) {
        if (!model.ok()) return responder->Send(ErrorReply(model.status()));
        const GenerativeModel* generator = (*model)->generative();
        if (generator == nullptr) {
          return responder->Send(ErrorReply(400, "this model does not generate text"));
        }
        absl::StatusOr<std::string> prompt = generator->ApplyChatTemplate(messages);
        if (!prompt.ok()) return responder->Send(ErrorReply(prompt.status()));
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        w.StartObject();
        w.Key("model_name");
        w.String((*model)->name().c_str());
        w.Key("prompt");
        w.String(prompt->data(), static_cast<rapidjson::SizeType>(prompt->size()));
        w.EndObject();
        HttpReply reply;
        reply.body.assign(buffer.GetString(), buffer.GetSize());
        responder->Send(std::move(reply));
      });
}

HttpReply HandleOpenAiModels(const HandlerContext& ctx) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("object");
  w.String("list");
  w.Key("data");
  w.StartArray();
  std::string last;
  for (const ModelStatus& status : ctx.models->Index()) {
    if (status.name == last) continue;  // one row per version
    last = status.name;
    if (Generates(ctx, status.name)) WriteModelEntry(w, status.name);
  }
  w.EndArray();
  w.EndObject();
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

HttpReply HandleOpenAiModel(const HandlerContext& ctx, std::string_view name) {
  if (!Generates(ctx, name)) {
    return GenerationErrorReply(
        GenerationApi::kChat,
        absl::NotFoundError(StrCat("no model '", name, "' that generates text (GET /v1/models)")));
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  WriteModelEntry(w, name);
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

}  // namespace inferd

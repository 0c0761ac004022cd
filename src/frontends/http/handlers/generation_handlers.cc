#include "frontends/http/handlers/generation_handlers.h"

#include <atomic>
#include <iterator>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "auth/access_policy.h"
#include "auth/tenant.h"
#include "common/error_detail.h"
#include "common/json_body.h"
#include "common/mutex.h"
#include "common/strings.h"
#include "frontends/http/codecs/embedding_codec.h"
#include "frontends/http/handlers/openai_request_prologue.h"
#include "frontends/http/session_request.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

// Receives the events of a request's choices (OpenAI's "n"; one sequence each in the model's
// decode loop) and turns them into the reply: one reply once every choice has ended, or a
// stream of server-sent events. Never blocks: both go through the responder, which queues
// them for the I/O thread. Events come from the model's threads, and for a request refused
// before it reached a model from the submitting thread: the mutex orders them. It holds the
// tenant's extra in-flight slots for the choices beyond the first until the last choice ends
// (the model lets go of the callback, and so of the sink, then).
class GenerationSink {
 public:
  GenerationSink(GenerationCall call, ResponderPtr responder,
                 std::shared_ptr<std::atomic<bool>> cancelled, TenantSlots extra_slots)
      : responder_(std::move(responder)),
        cancelled_(std::move(cancelled)),
        extra_slots_(std::move(extra_slots)),
        call_(std::move(call)),
        choices_(static_cast<size_t>(call_.n)) {}

  // The version chosen, before any event.
  void SetVersion(int64_t version) {
    MutexLock lock(&mu_);
    call_.model_version = std::to_string(version);
  }

  void OnEvent(GenerationEvent event) {
    MutexLock lock(&mu_);
    if (finished_) return;
    const int index = event.choice;
    if (index < 0 || index >= call_.n) return;
    GenerationChoice& choice = choices_[static_cast<size_t>(index)];
    if (event.done && !event.status.ok()) return Fail(event.status);
    if (!call_.stream) {
      choice.text += event.text;
      std::move(event.logprobs.begin(), event.logprobs.end(), std::back_inserter(choice.logprobs));
      event.logprobs.clear();
      if (!event.done) return;
      choice.done = std::move(event);
      if (++ended_ < call_.n) return;
      finished_ = true;
      responder_->Defer([call = call_, choices = std::move(choices_)] {
        return EncodeGenerationReply(call, choices);
      });
      return;
    }
    if (stream_ == nullptr && !StartStream()) return;
    if (call_.tools != nullptr) {
      // Tool calls are known once the choice's JSON is whole: it is held back until then.
      choice.text += event.text;
      if (!event.done) return;
      std::string events = EncodeStreamToolChoiceEnd(call_, choice.text, event, index);
      choice.done = std::move(event);
      if (++ended_ < call_.n) return stream_->Write(std::move(events));
      finished_ = true;
      return stream_->End(events + EncodeStreamFinish(call_, TotalUsage(choices_)));
    }
    const size_t offset = choice.token_bytes;
    for (const TokenLogprob& token : event.logprobs) choice.token_bytes += token.token.size();
    if (!event.done) {
      return stream_->Write(EncodeStreamText(call_, event.text, index, event.logprobs, offset));
    }
    std::string events = EncodeStreamChoiceEnd(call_, event, index, offset);
    choice.done = std::move(event);
    if (++ended_ < call_.n) return stream_->Write(std::move(events));
    finished_ = true;
    stream_->End(events + EncodeStreamFinish(call_, TotalUsage(choices_)));
  }

 private:
  bool StartStream() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    HttpReply head;
    head.content_type = "text/event-stream";
    stream_ = responder_->StartStream(std::move(head));
    if (stream_ == nullptr) {
      finished_ = true;
      cancelled_->store(true, std::memory_order_release);
      responder_->Send(ErrorReply(501, "this connection cannot stream"));
      return false;
    }
    std::string start;
    for (int i = 0; i < call_.n; ++i) start += EncodeStreamStart(call_, i);
    if (!start.empty()) stream_->Write(std::move(start));
    return true;
  }

  // One choice failed: the request fails, and the other choices stop at their next step.
  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    cancelled_->store(true, std::memory_order_release);
    // Refused before any token (queue full, cancelled while queued): a plain error reply.
    if (stream_ == nullptr) return responder_->Send(GenerationErrorReply(call_.api, status));
    stream_->End(EncodeStreamError(call_, status));
  }

  const ResponderPtr responder_;
  const std::shared_ptr<std::atomic<bool>> cancelled_;  // every choice's
  const TenantSlots extra_slots_;
  Mutex mu_;
  GenerationCall call_ ABSL_GUARDED_BY(mu_);
  std::vector<GenerationChoice> choices_ ABSL_GUARDED_BY(mu_);
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  ReplyStreamPtr stream_ ABSL_GUARDED_BY(mu_);
};

// Hands a parsed generation to the inference path, which checks its limits, sets its
// deadline, acquires the model (loading it if needed, never on this thread) and starts it.
void Submit(const HandlerContext& ctx, std::optional<int64_t> version, ParsedGeneration parsed,
            const HttpRequestView& view, ResponderPtr responder) {
  const GenerationApi api = parsed.call.api;
  absl::StatusOr<int64_t> timeout_us = HeaderTimeoutUs(view);
  if (!timeout_us.ok()) return responder->Send(GenerationErrorReply(api, timeout_us.status()));
  GenerateRequest& request = *parsed.request;
  request.n = parsed.call.n;
  // A tenant's requests reuse only its own cached prefixes, and a request with n choices
  // holds n of its in-flight places (the router took the first).
  TenantSlots extra_slots;
  if (view.tenant != nullptr) {
    request.cache_partition = view.tenant->name();
    absl::StatusOr<TenantSlots> slots = view.tenant->AdmitMore(parsed.call.n - 1);
    if (!slots.ok()) return responder->Send(GenerationErrorReply(api, slots.status()));
    extra_slots = *std::move(slots);
  }
  if (parsed.call.id.ends_with('-')) parsed.call.id += NewRequestId();
  // Cancel when the client goes away, whether the request waits for a load, waits in the
  // queue or is generating.
  responder->WatchDisconnect(
      [cancelled = request.cancelled] { cancelled->store(true, std::memory_order_release); });
  auto sink = std::make_shared<GenerationSink>(parsed.call, responder, request.cancelled,
                                               std::move(extra_slots));
  // The sink holds no model handle: the decode thread must never release the last one
  // (ServedModel counts the request as in flight instead).
  request.on_event = [sink](GenerationEvent event) { sink->OnEvent(std::move(event)); };
  ctx.inference->Generate(parsed.call.model, version, *timeout_us, std::move(parsed.request),
                          [sink, responder = std::move(responder)](const ModelHandle& model) {
                            responder->NoteModel(model);
                            sink->SetVersion(model->version());
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

}  // namespace

void HandleOpenAiGeneration(const HandlerContext& ctx, GenerationApi api,
                            const HttpRequestView& request, ResponderPtr responder) {
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(GenerationErrorReply(api, body.status()));
  absl::StatusOr<ParsedGeneration> parsed = ParseOpenAiRequest(body->root(), api);
  if (!parsed.ok()) return responder->Send(GenerationErrorReply(api, parsed.status()));
  // The router checked the role and the tenant's limits; the model is known only now.
  if (request.tenant != nullptr) {
    if (absl::Status allowed =
            CheckTenantModel(*request.tenant, TenantModelOf(ctx, parsed->call.model));
        !allowed.ok()) {
      return responder->Send(GenerationErrorReply(api, allowed));
    }
  }
  Submit(ctx, std::nullopt, *std::move(parsed), request, std::move(responder));
}

void HandleKServeGenerate(const HandlerContext& ctx, const ModelRef& ref, bool stream,
                          const HttpRequestView& request, ResponderPtr responder) {
  const GenerationApi api = GenerationApi::kKServe;
  if (auto config = ctx.inference->ConfigFor(ref.name); !config.ok()) {
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
  std::optional<PreparedOpenAiRequest<ParsedEmbeddings>> prepared =
      PrepareOpenAiRequest<ParsedEmbeddings>(request, *responder, ParseEmbeddingsRequest);
  if (!prepared) return;
  ParsedEmbeddings* parsed = &prepared->parsed;
  EmbedRequest& embed = *parsed->request;
  // As for generation: the callback holds no model handle (the decode thread must not release
  // the last one).
  embed.on_done = [responder, name = parsed->model,
                   base64 = parsed->base64](absl::StatusOr<EmbedResult> result) {
    if (!result.ok()) return responder->Send(GenerationErrorReply(api, result.status()));
    // Encoded on the I/O thread, not the decode loop's.
    responder->Defer([name, base64, result = *std::move(result)] {
      return EncodeEmbeddingsReply(name, base64, result);
    });
  };
  ctx.inference->Embed(parsed->model, prepared->timeout_us, std::move(parsed->request),
                       [responder](const ModelHandle& model) { responder->NoteModel(model); });
}

void HandleChatTemplate(const HandlerContext& ctx, const ModelRef& ref,
                        const HttpRequestView& request, ResponderPtr responder) {
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(ErrorReply(body.status()));
  simdjson::dom::object fields;
  if (body->root().get(fields))
    return responder->Send(ErrorReply(400, "the body must be a JSON object"));
  std::vector<ToolTurn> turns;
  absl::StatusOr<std::vector<ChatMessage>> messages = ParseChatMessages(fields, &turns);
  if (!messages.ok()) return responder->Send(ErrorReply(messages.status()));
  // With `tools` (OpenAI's), the prompt a chat request with them would have: in the model's
  // own tool format when its template knows one, else in the generic one.
  absl::StatusOr<ToolSet> tools = ReadOpenAiTools(fields);
  if (!tools.ok()) return responder->Send(ErrorReply(tools.status()));
  auto chat = std::make_shared<GenerateRequest>();
  chat->chat = true;
  chat->messages = *std::move(messages);
  if (tools->active()) {
    if (absl::Status applied = ApplyTools(*tools, *chat); !applied.ok()) {
      return responder->Send(ErrorReply(applied));
    }
    chat->tools = ModelToolsOf(*tools, std::move(turns), "call_");
  }
  ctx.models->AcquireForInference(
      ref.name, ref.version, 0,
      [chat = std::shared_ptr<const GenerateRequest>(std::move(chat)),
       responder = std::move(responder)](absl::StatusOr<ModelHandle> model) {
        if (!model.ok()) return responder->Send(ErrorReply(model.status()));
        const GenerativeModel* generator = (*model)->generative();
        if (generator == nullptr) {
          return responder->Send(ErrorReply(400, "this model does not generate text"));
        }
        absl::StatusOr<std::string> prompt = generator->RenderChatPrompt(*chat);
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
    absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.inference->ConfigFor(last);
    if (!config.ok() || !(*config)->capabilities.generates_text) continue;
    WriteModelEntry(w, status.name);
    // Each LoRA adapter is a model of its own to an OpenAI client: "base:adapter".
    for (const AdapterConfig& adapter : (*config)->adapters) {
      WriteModelEntry(w, StrCat(status.name, ":", adapter.name));
    }
  }
  w.EndArray();
  w.EndObject();
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

HttpReply HandleOpenAiModel(const HandlerContext& ctx, std::string_view name) {
  absl::StatusOr<std::shared_ptr<const ModelConfig>> config = ctx.inference->ConfigFor(name);
  if (!config.ok() || !(*config)->capabilities.generates_text) {
    return GenerationErrorReply(
        GenerationApi::kChat,
        WithErrorReason(absl::NotFoundError(
                            StrCat("no model '", name, "' that generates text (GET /v1/models)")),
                        ErrorReason::kUnknownModel));
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  WriteModelEntry(w, name);
  HttpReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  return reply;
}

}  // namespace inferd

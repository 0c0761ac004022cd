#include "frontends/http/handlers/anthropic_handler.h"

#include <atomic>
#include <memory>
#include <utility>

#include "auth/access_policy.h"
#include "auth/tenant.h"
#include "common/json_body.h"
#include "common/mutex.h"
#include "frontends/http/codecs/anthropic_codec.h"
#include "observability/request_id.h"

namespace inferd {
namespace {

// Receives the events of one message's generation and turns them into the
// reply: one reply once it ends, or Anthropic's stream of events. Events come
// from the model's threads, and for a request refused before it reached a model
// from the submitting thread: the mutex orders them. Error replies go out as
// plain ErrorReply: the router's responder gives them Anthropic's shape
// (error_shape.h).
class AnthropicSink {
 public:
  AnthropicSink(AnthropicCall call, ResponderPtr responder,
                std::shared_ptr<std::atomic<bool>> cancelled)
      : responder_(std::move(responder)),
        cancelled_(std::move(cancelled)),
        call_(std::move(call)) {}

  void OnEvent(GenerationEvent event) {
    MutexLock lock(&mu_);
    if (finished_) return;
    if (event.done && !event.status.ok()) return Fail(event.status);
    if (!call_.stream) {
      text_ += event.text;
      if (!event.done) return;
      finished_ = true;
      // Encoded on the I/O thread, not the decode loop's.
      responder_->Defer([call = call_, text = std::move(text_), done = std::move(event)] {
        return EncodeAnthropicMessage(call, text, done);
      });
      return;
    }
    if (stream_ == nullptr && !StartStream()) return;
    if (call_.tools != nullptr) {
      // Tool calls are known once the reply's JSON is whole: it is held back until then.
      text_ += event.text;
      if (!event.done) return;
      finished_ = true;
      return stream_->End(EncodeAnthropicStreamToolEnd(text_, event));
    }
    if (!event.done) return stream_->Write(EncodeAnthropicStreamText(event.text));
    finished_ = true;
    stream_->End(EncodeAnthropicStreamEnd(event));
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
    stream_->Write(EncodeAnthropicStreamHead(call_, /*text_block=*/call_.tools == nullptr));
    return true;
  }

  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    cancelled_->store(true, std::memory_order_release);
    // Refused before any token (queue full, prompt too long): a plain error
    // reply.
    if (stream_ == nullptr) return responder_->Send(ErrorReply(status));
    stream_->End(EncodeAnthropicStreamError(status));
  }

  const ResponderPtr responder_;
  const std::shared_ptr<std::atomic<bool>> cancelled_;
  Mutex mu_;
  const AnthropicCall call_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  ReplyStreamPtr stream_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void HandleAnthropicMessages(const HandlerContext& ctx, const HttpRequestView& request,
                             ResponderPtr responder) {
  absl::StatusOr<ParsedJson> body = ParseJsonBody(*request.body);
  if (!body.ok()) return responder->Send(ErrorReply(body.status()));
  absl::StatusOr<ParsedAnthropicMessages> parsed = ParseAnthropicMessages(body->root());
  if (!parsed.ok()) return responder->Send(ErrorReply(parsed.status()));
  // The router checked the role and the tenant's limits; the model is known
  // only now.
  if (request.tenant != nullptr) {
    if (absl::Status allowed =
            CheckTenantModel(*request.tenant, TenantModelOf(ctx, parsed->call.model));
        !allowed.ok()) {
      return responder->Send(ErrorReply(allowed));
    }
  }
  absl::StatusOr<int64_t> timeout_us = HeaderTimeoutUs(request);
  if (!timeout_us.ok()) return responder->Send(ErrorReply(timeout_us.status()));
  GenerateRequest& generate = *parsed->request;
  // A tenant's requests reuse only its own cached prefixes.
  if (request.tenant != nullptr) generate.cache_partition = request.tenant->name();
  parsed->call.id += NewRequestId();
  // Cancel when the client goes away, whether the request waits for a load,
  // waits in the queue or is generating.
  responder->WatchDisconnect(
      [cancelled = generate.cancelled] { cancelled->store(true, std::memory_order_release); });
  auto sink = std::make_shared<AnthropicSink>(parsed->call, responder, generate.cancelled);
  // The sink holds no model handle: the decode thread must never release the
  // last one.
  generate.on_event = [sink](GenerationEvent event) { sink->OnEvent(std::move(event)); };
  const std::string model = parsed->call.model;
  ctx.inference->Generate(model, std::nullopt, *timeout_us, std::move(parsed->request),
                          [responder = std::move(responder)](const ModelHandle& handle) {
                            responder->NoteModel(handle);
                          });
}

}  // namespace inferd

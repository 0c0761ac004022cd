#include "backends/llama/llama_engine.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <random>
#include <utility>

#include <llama.h>
#include <spdlog/spdlog.h>

#include "backends/llama/prompt_segments.h"
#include "backends/llama/sequence_queue.h"
#include "backends/llama/slot_choice.h"
#include "backends/llama/text_assembler.h"
#include "common/cores.h"
#include "common/error_detail.h"
#include "common/openmp_team.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

// As an execution instance's (SchedulerOptions::release_engine_threads_after).
constexpr auto kReleaseOpenMpTeamAfter = std::chrono::milliseconds(100);

// llama.cpp logs every tensor at load to stderr; only its warnings and errors reach our log.
void ForwardLlamaLog(ggml_log_level level, const char* text, void*) {
  std::string_view message(text);
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  if (message.empty()) return;
  if (level == GGML_LOG_LEVEL_ERROR) {
    spdlog::error("llama.cpp: {}", message);
  } else if (level == GGML_LOG_LEVEL_WARN) {
    spdlog::warn("llama.cpp: {}", message);
  }
}

void InitLlamaOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llama_log_set(ForwardLlamaLog, nullptr);
    llama_backend_init();
  });
}

ggml_type KvType(const std::string& name) {
  if (name == "f32") return GGML_TYPE_F32;
  if (name == "bf16") return GGML_TYPE_BF16;
  if (name == "q8_0") return GGML_TYPE_Q8_0;
  if (name == "q4_0") return GGML_TYPE_Q4_0;
  if (name == "q4_1") return GGML_TYPE_Q4_1;
  if (name == "q5_0") return GGML_TYPE_Q5_0;
  if (name == "q5_1") return GGML_TYPE_Q5_1;
  return GGML_TYPE_F16;
}

llama_flash_attn_type FlashAttention(const std::string& name) {
  if (name == "on") return LLAMA_FLASH_ATTN_TYPE_ENABLED;
  if (name == "off") return LLAMA_FLASH_ATTN_TYPE_DISABLED;
  return LLAMA_FLASH_ATTN_TYPE_AUTO;
}

std::optional<int64_t> MetaInt(const llama_model* model, const std::string& key) {
  char buffer[64];
  if (llama_model_meta_val_str(model, key.c_str(), buffer, sizeof(buffer)) <= 0) {
    return std::nullopt;
  }
  return std::strtoll(buffer, nullptr, 10);
}

// K and V elements one token occupies per layer. Head sizes come from the file's metadata
// when it has them (models whose head size is not n_embd / n_head), else from n_embd.
int64_t KvElementsPerTokenLayer(const llama_model* model) {
  char arch[64] = {0};
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch));
  const int64_t n_head = std::max(1, llama_model_n_head(model));
  const int64_t n_head_kv = std::max(1, llama_model_n_head_kv(model));
  const int64_t fallback = llama_model_n_embd(model) / n_head;
  const int64_t key = MetaInt(model, StrCat(arch, ".attention.key_length")).value_or(fallback);
  const int64_t value = MetaInt(model, StrCat(arch, ".attention.value_length")).value_or(fallback);
  return (key + value) * n_head_kv;
}

// The pooling of `options.pooling` for this file: auto takes the file's `<arch>.pooling_type`
// (a generative model states none: mean).
absl::StatusOr<int> ResolvePooling(const llama_model* model, const std::string& pooling,
                                   const std::string& file) {
  if (pooling == "mean") return LLAMA_POOLING_TYPE_MEAN;
  if (pooling == "cls") return LLAMA_POOLING_TYPE_CLS;
  if (pooling == "last") return LLAMA_POOLING_TYPE_LAST;
  char arch[64] = {0};
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof(arch));
  const int64_t stated = MetaInt(model, StrCat(arch, ".pooling_type")).value_or(0);
  if (stated == LLAMA_POOLING_TYPE_NONE) return LLAMA_POOLING_TYPE_MEAN;
  if (stated == LLAMA_POOLING_TYPE_MEAN || stated == LLAMA_POOLING_TYPE_CLS ||
      stated == LLAMA_POOLING_TYPE_LAST) {
    return static_cast<int>(stated);
  }
  return absl::InvalidArgumentError(
      StrCat(file, ": the file's pooling type is ", PoolingName(static_cast<int>(stated)),
             " (a reranker scores pairs, it does not embed); set parameters.pooling to mean, cls "
             "or last to embed with it anyway"));
}

struct SamplerDeleter {
  void operator()(llama_sampler* sampler) const { llama_sampler_free(sampler); }
};
using SamplerPtr = std::unique_ptr<llama_sampler, SamplerDeleter>;

// llama.cpp's sampler chain in the order its server applies these stages; greedy at
// temperature 0.
SamplerPtr MakeSampler(const SamplingParams& params, int32_t vocabulary) {
  SamplerPtr chain(llama_sampler_chain_init(llama_sampler_chain_default_params()));
  // Biases and penalties change the logits whatever picks the token, greedy included; they
  // cost nothing when unused (not in the chain).
  if (!params.logit_bias.empty()) {
    std::vector<llama_logit_bias> biases;
    biases.reserve(params.logit_bias.size());
    for (const TokenBias& bias : params.logit_bias) biases.push_back({bias.token, bias.bias});
    llama_sampler_chain_add(
        chain.get(), llama_sampler_init_logit_bias(vocabulary, static_cast<int32_t>(biases.size()),
                                                   biases.data()));
  }
  if (params.presence_penalty != 0 || params.frequency_penalty != 0 ||
      params.repetition_penalty != 1) {
    llama_sampler_chain_add(
        chain.get(), llama_sampler_init_penalties(vocabulary, params.penalty_last_n,
                                                  static_cast<float>(params.repetition_penalty),
                                                  static_cast<float>(params.frequency_penalty),
                                                  static_cast<float>(params.presence_penalty)));
  }
  if (params.temperature <= 0) {
    llama_sampler_chain_add(chain.get(), llama_sampler_init_greedy());
    return chain;
  }
  if (params.top_k > 0)
    llama_sampler_chain_add(chain.get(), llama_sampler_init_top_k(params.top_k));
  if (params.top_p < 1.0) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_top_p(static_cast<float>(params.top_p), 1));
  }
  if (params.min_p > 0) {
    llama_sampler_chain_add(chain.get(),
                            llama_sampler_init_min_p(static_cast<float>(params.min_p), 1));
  }
  llama_sampler_chain_add(chain.get(),
                          llama_sampler_init_temp(static_cast<float>(params.temperature)));
  llama_sampler_chain_add(chain.get(),
                          llama_sampler_init_dist(params.seed.value_or(LLAMA_DEFAULT_SEED)));
  return chain;
}

void Deliver(GenerateRequest& request, GenerationEvent event) {
  if (request.on_event) request.on_event(std::move(event));
}

// A request refused before its sequences were queued: every choice ends with `status`.
void Fail(GenerateRequest& request, const absl::Status& status) {
  auto callback = std::move(request.on_event);
  request.on_event = nullptr;
  if (!callback) return;
  for (int choice = 0; choice < std::max(request.n, 1); ++choice) {
    GenerationEvent event;
    event.choice = choice;
    event.done = true;
    event.status = status;
    callback(std::move(event));
  }
}

// One queued choice refused (cancelled or expired while it waited, or unloaded): its end.
void FailChoice(GenerateRequest& request, int choice, const absl::Status& status) {
  GenerationEvent event;
  event.choice = choice;
  event.done = true;
  event.status = status;
  Deliver(request, std::move(event));
}

// A prompt longer than the model's context, marked so (common/error_detail.h): the field
// at fault is the chat's messages or the raw prompt.
absl::Status PromptTooLong(const GenerateRequest& request, absl::Status status) {
  return WithErrorReason(WithErrorField(std::move(status), request.chat ? "messages" : "prompt"),
                         ErrorReason::kContextLengthExceeded);
}

}  // namespace

struct LlamaEngine::Prepared {
  std::shared_ptr<const std::vector<int32_t>> prompt;
  int64_t max_tokens = 0;
};

struct LlamaEngine::EmbedJob {
  std::unique_ptr<EmbedRequest> request;
  std::vector<std::vector<int32_t>> inputs;  // tokens of each input
  EmbedResult result;
};

struct LlamaEngine::Slot {
  int32_t seq = 0;
  std::vector<int32_t> cache;  // the tokens the KV cache holds for this sequence
  uint64_t last_used = 0;      // admission tick
  // Whose requests may reuse `cache` (GenerateRequest::cache_partition).
  std::string partition;
  // The request being served (shared by its choices); null when the slot is free.
  std::shared_ptr<GenerateRequest> request;
  int choice = 0;
  std::shared_ptr<const std::vector<int32_t>> prompt;
  size_t prompt_done = 0;  // prompt tokens in the cache
  int64_t cached = 0;      // of them, reused from an earlier request
  int64_t max_tokens = 0;
  SamplerPtr sampler;
  std::optional<TextAssembler> text;
  int32_t next = -1;  // sampled and not yet decoded
  int64_t generated = 0;
  int32_t batch_index = -1;
  TimePoint admitted{}, first_token{};
};

absl::StatusOr<std::unique_ptr<LlamaEngine>> LlamaEngine::Create(const std::filesystem::path& gguf,
                                                                 const LlamaOptions& options) {
  InitLlamaOnce();
  llama_model_params model_params = llama_model_default_params();
  model_params.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(gguf.c_str(), model_params);
  if (model == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(gguf.string(),
               ": llama.cpp could not load this file as a GGUF model (its "
               "reason is in the log above)"));
  }
  const int threads = options.threads > 0 ? options.threads : CoresAvailable();
  llama_context_params params = llama_context_default_params();
  params.n_ctx = static_cast<uint32_t>(options.context_length * options.parallel);
  params.n_seq_max = static_cast<uint32_t>(options.parallel);
  params.n_batch = static_cast<uint32_t>(options.batch_size);
  params.n_ubatch = static_cast<uint32_t>(options.ubatch_size);
  params.n_threads = threads;
  params.n_threads_batch = options.batch_threads > 0 ? options.batch_threads : threads;
  params.type_k = KvType(options.kv_cache_type);
  params.type_v = KvType(options.kv_cache_type);
  params.flash_attn_type = FlashAttention(options.flash_attention);
  params.kv_unified = options.kv_unified;
  params.no_perf = true;
  llama_context* context = llama_init_from_model(model, params);
  if (context == nullptr) {
    llama_model_free(model);
    return absl::InvalidArgumentError(StrCat(
        gguf.string(), ": llama.cpp could not create a context of ", params.n_ctx,
        " tokens with these parameters (a quantized kv_cache_type needs flash_attention; the "
        "reason is in the log above)"));
  }
  if (llama_n_ctx_seq(context) < static_cast<uint32_t>(options.context_length)) {
    const uint32_t got = llama_n_ctx_seq(context);
    llama_free(context);
    llama_model_free(model);
    return absl::InvalidArgumentError(StrCat(gguf.string(), ": parameters.context_length ",
                                             options.context_length,
                                             " exceeds what the model "
                                             "supports per sequence (",
                                             got, ")"));
  }
  std::unique_ptr<Embedder> embedder;
  if (options.embeddings) {
    absl::StatusOr<int> pooling = ResolvePooling(model, options.pooling, gguf.string());
    absl::StatusOr<std::unique_ptr<Embedder>> made =
        pooling.ok() ? Embedder::Create(model, options, *pooling, gguf.string())
                     : absl::StatusOr<std::unique_ptr<Embedder>>(pooling.status());
    if (!made.ok()) {
      llama_free(context);
      llama_model_free(model);
      return made.status();
    }
    embedder = *std::move(made);
  }
  return std::unique_ptr<LlamaEngine>(
      new LlamaEngine(model, context, options, std::move(embedder)));
}

LlamaEngine::LlamaEngine(llama_model* model, llama_context* context, const LlamaOptions& options,
                         std::unique_ptr<Embedder> embedder)
    : model_(model),
      context_(context),
      vocab_(llama_model_get_vocab(model)),
      options_(options),
      embedder_(std::move(embedder)),
      sequences_(options.max_queue, options.parallel) {
  weight_bytes_ = llama_model_size(model_);
  // The embeddings context's cache is f16 (llama.cpp's default), whatever kv_cache_type says.
  const double kv_per_token = static_cast<double>(llama_model_n_layer(model_)) *
                              static_cast<double>(KvElementsPerTokenLayer(model_));
  kv_bytes_ = static_cast<uint64_t>(static_cast<double>(llama_n_ctx(context_)) * kv_per_token *
                                    KvCacheElementBytes(options_.kv_cache_type));
  if (embedder_ != nullptr) {
    kv_bytes_ += static_cast<uint64_t>(static_cast<double>(embedder_->context_tokens()) *
                                       kv_per_token * KvCacheElementBytes("f16"));
  }
  const char* source = llama_model_chat_template(model_, nullptr);
  if (source == nullptr) {
    template_status_ = absl::FailedPreconditionError(
        "the model file has no chat template (tokenizer.chat_template); use /v1/completions "
        "with a prompt instead");
  } else {
    const llama_token bos = llama_vocab_bos(vocab_);
    const llama_token eos = llama_vocab_eos(vocab_);
    auto special = [this](llama_token token) {
      if (token == LLAMA_TOKEN_NULL) return std::string();
      char buffer[256];
      const int32_t n = llama_token_to_piece(vocab_, token, buffer, sizeof(buffer), 0, true);
      return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
    };
    absl::StatusOr<std::unique_ptr<ChatTemplate>> parsed =
        ChatTemplate::Create(source, special(bos), special(eos));
    if (parsed.ok()) {
      template_ = *std::move(parsed);
    } else {
      template_status_ = parsed.status();
      spdlog::warn("llama: {}", std::string(template_status_.message()));
    }
  }
  for (int i = 0; i < options_.parallel; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->seq = i;
    slots_.push_back(std::move(slot));
  }
  stats_.context_length = options_.context_length;
  stats_.parallel = options_.parallel;
  stats_.kv_cells_total = static_cast<int64_t>(llama_n_ctx(context_));
  const int32_t vocabulary = llama_vocab_n_tokens(vocab_);
  for (int32_t token = 0; token < vocabulary; ++token) {
    max_token_bytes_ = std::max(max_token_bytes_, Piece(token, /*special=*/true).size());
  }
  thread_ = std::thread([this] { Loop(); });
  prepare_thread_ = std::thread([this] { PrepareLoop(); });
}

LlamaEngine::~LlamaEngine() {
  Shutdown();
  embedder_.reset();  // its context before the model it uses
  llama_free(context_);
  llama_model_free(model_);
}

void LlamaEngine::Shutdown() {
  {
    MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  work_.NotifyAll();
  incoming_work_.NotifyAll();
  if (prepare_thread_.joinable()) prepare_thread_.join();
  if (thread_.joinable()) thread_.join();
}

std::vector<int32_t> LlamaEngine::Tokenize(std::string_view text, bool add_special,
                                           bool parse_special) const {
  // A token covers at least one byte; room for the BOS/EOS the vocabulary may add.
  std::vector<int32_t> tokens(text.size() + 4);
  int32_t n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                             static_cast<int32_t>(tokens.size()), add_special, parse_special);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = llama_tokenize(vocab_, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                       static_cast<int32_t>(tokens.size()), add_special, parse_special);
  }
  tokens.resize(static_cast<size_t>(std::max(n, 0)));
  return tokens;
}

std::string LlamaEngine::Piece(int32_t token, bool special) const {
  char buffer[128];
  int32_t n = llama_token_to_piece(vocab_, token, buffer, sizeof(buffer), 0, special);
  if (n >= 0) return std::string(buffer, static_cast<size_t>(n));
  std::string piece(static_cast<size_t>(-n), '\0');
  n = llama_token_to_piece(vocab_, token, piece.data(), static_cast<int32_t>(piece.size()), 0,
                           special);
  piece.resize(static_cast<size_t>(std::max(n, 0)));
  return piece;
}

absl::StatusOr<std::string> LlamaEngine::ApplyChatTemplate(
    const std::vector<ChatMessage>& messages) const {
  if (template_ == nullptr) return template_status_;
  absl::StatusOr<std::string> prompt = template_->Render(messages, /*add_generation_prompt=*/true);
  if (!prompt.ok()) return prompt.status();
  // As llama.cpp's server does: the tokenizer adds BOS itself, so a template that writes it
  // too would give two.
  const std::string& bos = template_->bos_token();
  if (llama_vocab_get_add_bos(vocab_) && !bos.empty() && prompt->starts_with(bos)) {
    prompt->erase(0, bos.size());
  }
  return prompt;
}

void LlamaEngine::Generate(std::unique_ptr<GenerateRequest> request) {
  // Cheap checks first, on the caller's thread; rendering and tokenising on the preparation
  // thread (the class comment).
  const int n = request->n;
  if (n < 1 || n > kMaxChoices) {
    return Fail(*request, absl::InvalidArgumentError(
                              StrCat("'n' must be between 1 and ", kMaxChoices, ", got ", n)));
  }
  const size_t bytes = PromptBytes(*request);
  const size_t most = static_cast<size_t>(options_.context_length) * max_token_bytes_;
  if (bytes > most) {
    return Fail(
        *request,
        PromptTooLong(*request,
                      absl::InvalidArgumentError(
                          StrCat("the prompt is ", bytes, " bytes; a sequence of this model holds ",
                                 options_.context_length,
                                 " tokens (parameters.context_length), and no prompt of more than ",
                                 most, " bytes fits in that many of its tokens"))));
  }
  const int32_t vocabulary = llama_vocab_n_tokens(vocab_);
  for (const TokenBias& bias : request->sampling.logit_bias) {
    if (bias.token < 0 || bias.token >= vocabulary) {
      return Fail(*request,
                  absl::InvalidArgumentError(StrCat("'logit_bias' names token ", bias.token,
                                                    ", but this model's "
                                                    "vocabulary has tokens 0 to ",
                                                    vocabulary - 1)));
    }
  }
  const int64_t cap = options_.max_output_tokens();
  if (request->max_tokens > cap) {
    return Fail(*request,
                WithErrorField(absl::InvalidArgumentError(StrCat("max_tokens ", request->max_tokens,
                                                                 " exceeds this model's limit of ",
                                                                 cap, " (parameters.max_tokens)")),
                               "max_tokens"));
  }
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      refused = absl::UnavailableError("the model is shutting down");
    } else if (refused = sequences_.Reserve(n); !refused.ok()) {
      ++stats_.requests_failed;
    } else {
      incoming_.push_back(std::move(request));
      stats_.queued = sequences_.waiting();
    }
  }
  if (!refused.ok()) return Fail(*request, refused);
  incoming_work_.NotifyOne();
}

absl::StatusOr<std::vector<int32_t>> LlamaEngine::TokenizeChat(
    const std::vector<ChatMessage>& messages) const {
  ASSIGN_OR_RETURN(std::string rendered, ApplyChatTemplate(messages));
  if (options_.special_tokens_in_messages) return Tokenize(rendered);
  // The contents as plain text (prompt_segments.h): the template rendered a second time with
  // markers for the contents says where they stand.
  absl::StatusOr<std::string> marked = ApplyChatTemplate(MarkedMessages(messages));
  std::optional<std::vector<PromptSegment>> segments;
  if (marked.ok()) segments = SplitRenderedPrompt(rendered, *marked, messages);
  if (!segments) {
    // The template looks at the contents, so they cannot be told apart from its text: a
    // content that holds special-token text is refused rather than tokenised as control.
    for (size_t i = 0; i < messages.size(); ++i) {
      for (int32_t token : Tokenize(messages[i].content, false, true)) {
        if (llama_vocab_get_attr(vocab_, token) &
            (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED)) {
          return absl::InvalidArgumentError(StrCat(
              "messages[", i, "].content holds the text of the special token '", Piece(token, true),
              "', which this model's chat template does not let inferd keep as plain text; "
              "remove it (or the operator may set parameters.special_tokens_in_messages)"));
        }
      }
    }
    return Tokenize(rendered);
  }
  std::vector<int32_t> tokens;
  bool first = true;
  for (const PromptSegment& segment : *segments) {
    // BOS (when the vocabulary wants it) once, before the first segment.
    std::vector<int32_t> part = Tokenize(segment.text, first, !segment.content);
    first = false;
    tokens.insert(tokens.end(), part.begin(), part.end());
  }
  if (first) tokens = Tokenize("");
  return tokens;
}

absl::StatusOr<LlamaEngine::Prepared> LlamaEngine::Prepare(const GenerateRequest& request) const {
  std::vector<int32_t> tokens;
  if (request.chat) {
    ASSIGN_OR_RETURN(tokens, TokenizeChat(request.messages));
  } else {
    // A raw prompt is the client's whole prompt, special tokens and all (as llama.cpp's
    // server takes it).
    tokens = Tokenize(request.prompt);
  }
  if (tokens.empty()) return absl::InvalidArgumentError("the prompt is empty (it has no tokens)");
  const int64_t n_prompt = static_cast<int64_t>(tokens.size());
  if (n_prompt >= options_.context_length) {
    return PromptTooLong(
        request, absl::InvalidArgumentError(
                     StrCat("the prompt has ", n_prompt,
                            " tokens, but a sequence of this model holds ", options_.context_length,
                            " tokens, prompt and output together (parameters.context_length)")));
  }
  Prepared prepared;
  prepared.prompt = std::make_shared<const std::vector<int32_t>>(std::move(tokens));
  prepared.max_tokens = request.max_tokens > 0 ? request.max_tokens : options_.max_output_tokens();
  return prepared;
}

void LlamaEngine::PrepareLoop() {
  while (true) {
    std::unique_ptr<GenerateRequest> request;
    {
      MutexLock lock(&mu_);
      incoming_work_.Wait(&mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !incoming_.empty();
      });
      if (stopping_) break;
      request = std::move(incoming_.front());
      incoming_.pop_front();
    }
    absl::StatusOr<Prepared> prepared;
    if (request->cancelled->load(std::memory_order_acquire)) {
      prepared = absl::CancelledError("the client went away");
    } else if (request->deadline && Clock::now() >= *request->deadline) {
      prepared = absl::DeadlineExceededError(
          "the request's deadline passed before its prompt was processed");
    } else {
      prepared = Prepare(*request);
    }
    const int n = request->n;
    absl::Status refused = prepared.status();
    {
      MutexLock lock(&mu_);
      if (refused.ok() && stopping_) refused = absl::UnavailableError("the model was unloaded");
      if (refused.ok()) {
        std::shared_ptr<GenerateRequest> shared = std::move(request);
        std::vector<QueuedChoice> choices;
        for (int choice = 0; choice < n; ++choice) {
          choices.push_back({shared, prepared->prompt, choice, prepared->max_tokens});
        }
        sequences_.Release(n, std::move(choices));
      } else {
        sequences_.Release(n);
        ++stats_.requests_failed;
      }
      stats_.queued = sequences_.waiting();
    }
    if (!refused.ok()) {
      Fail(*request, refused);
      continue;
    }
    work_.NotifyOne();
  }
  // Shutting down: what waits for preparation is answered here.
  std::deque<std::unique_ptr<GenerateRequest>> left;
  {
    MutexLock lock(&mu_);
    left.swap(incoming_);
    for (const auto& request : left) sequences_.Release(request->n);
  }
  for (auto& request : left) Fail(*request, absl::UnavailableError("the model was unloaded"));
}

void LlamaEngine::Embed(std::unique_ptr<EmbedRequest> request) {
  auto fail = [&request](absl::Status status) {
    auto callback = std::move(request->on_done);
    if (callback) callback(std::move(status));
  };
  if (embedder_ == nullptr) {
    return fail(absl::FailedPreconditionError(
        "this model does not compute embeddings (set parameters.embeddings: true in its "
        "config.yaml)"));
  }
  if (request->dimensions && *request->dimensions != embedder_->dimensions()) {
    return fail(absl::InvalidArgumentError(
        StrCat("'dimensions' is ", *request->dimensions, ", but this model's embeddings have ",
               embedder_->dimensions(), " (it cannot shorten them)")));
  }
  auto job = std::make_unique<EmbedJob>();
  for (size_t i = 0; i < request->inputs.size(); ++i) {
    std::vector<int32_t> tokens = Tokenize(request->inputs[i]);
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n == 0 || n > embedder_->max_tokens()) {
      return fail(absl::InvalidArgumentError(
          StrCat("input[", i, "] has ", n, " tokens, but this model embeds 1 to ",
                 embedder_->max_tokens(), " tokens per input (parameters.ubatch_size)")));
    }
    job->result.prompt_tokens += n;
    job->inputs.push_back(std::move(tokens));
  }
  absl::Status refused;
  {
    MutexLock lock(&mu_);
    const size_t waiting = static_cast<size_t>(sequences_.waiting()) + embed_queue_.size();
    if (stopping_) {
      refused = absl::UnavailableError("the model is shutting down");
    } else if (static_cast<int64_t>(waiting) >= options_.max_queue) {
      ++stats_.requests_failed;
      refused = absl::ResourceExhaustedError(
          StrCat("the model's queue is full: ", waiting, " requests wait (parameters.max_queue)"));
    } else {
      job->request = std::move(request);
      embed_queue_.push_back(std::move(job));
    }
  }
  if (!refused.ok()) return fail(std::move(refused));
  work_.NotifyOne();
}

void LlamaEngine::EmbedStep() {
  if (embedding_ == nullptr) {
    MutexLock lock(&mu_);
    if (embed_queue_.empty()) return;
    embedding_ = std::move(embed_queue_.front());
    embed_queue_.pop_front();
  }
  EmbedJob& job = *embedding_;
  if (job.request->cancelled->load(std::memory_order_acquire)) {
    return FinishEmbedding(absl::CancelledError("the client went away"));
  }
  if (job.request->deadline && Clock::now() >= *job.request->deadline) {
    return FinishEmbedding(
        absl::DeadlineExceededError("the request's deadline passed while it was embedded"));
  }
  absl::StatusOr<std::vector<float>> vector =
      embedder_->Embed(job.inputs[job.result.embeddings.size()]);
  if (!vector.ok()) return FinishEmbedding(vector.status());
  job.result.embeddings.push_back(*std::move(vector));
  if (job.result.embeddings.size() == job.inputs.size()) FinishEmbedding(absl::OkStatus());
}

void LlamaEngine::FinishEmbedding(absl::Status status) {
  std::unique_ptr<EmbedJob> job = std::move(embedding_);
  {
    MutexLock lock(&mu_);
    ++stats_.embedding_requests;
    if (status.ok()) {
      stats_.embedding_tokens += static_cast<uint64_t>(job->result.prompt_tokens);
    } else {
      ++stats_.requests_failed;
    }
  }
  auto callback = std::move(job->request->on_done);
  if (!callback) return;
  if (status.ok()) {
    callback(std::move(job->result));
  } else {
    callback(std::move(status));
  }
}

GenerationStats LlamaEngine::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void LlamaEngine::Loop() {
  llama_batch batch = llama_batch_init(options_.batch_size, 0, 1);
  // Running sequences and KV cells in use, for the statistics: after every step, and when
  // a step had nothing to run (its last sequences were cancelled) or failed.
  auto publish_occupancy = [this] {
    int64_t active = 0, used = 0;
    for (const auto& slot : slots_) {
      if (slot->request != nullptr) ++active;
      used += static_cast<int64_t>(slot->cache.size());
    }
    MutexLock lock(&mu_);
    stats_.active_sequences = active;
    stats_.kv_cells_used = used;
  };
  while (true) {
    {
      MutexLock lock(&mu_);
      const bool busy = std::any_of(slots_.begin(), slots_.end(),
                                    [](const auto& slot) { return slot->request != nullptr; });
      if (!busy && embedding_ == nullptr) {
        auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !sequences_.empty() || !embed_queue_.empty();
        };
        // Idle for a while: ggml's OpenMP workers for this thread go, so that they do not
        // slow the threads of the models that are running (common/openmp_team.h).
        if (!work_.WaitUntil(&mu_, Clock::now() + kReleaseOpenMpTeamAfter, has_work)) {
          mu_.Unlock();
          ReleaseOpenMpTeam();
          mu_.Lock();
          work_.Wait(&mu_, has_work);
        }
      }
      if (stopping_) break;
    }
    // Occupancy is published as soon as sequences are admitted, not only after the step: a
    // client that has its first token must not read a stale "no active sequence".
    if (Admit()) publish_occupancy();
    if (embedder_ != nullptr) EmbedStep();
    // Builds and runs one step; see the class comment.
    const TimePoint now = Clock::now();
    for (auto& slot : slots_) {
      if (slot->request == nullptr) continue;
      if (slot->request->cancelled->load(std::memory_order_acquire)) {
        Finish(*slot, absl::CancelledError("the client went away"), FinishReason::kNone);
      } else if (slot->request->deadline && now >= *slot->request->deadline) {
        Finish(*slot,
               absl::DeadlineExceededError("the request's deadline passed while it "
                                           "generated"),
               FinishReason::kNone);
      }
    }
    batch.n_tokens = 0;
    auto add = [&batch](int32_t token, int32_t pos, int32_t seq, bool logits) {
      const int32_t i = batch.n_tokens++;
      batch.token[i] = token;
      batch.pos[i] = pos;
      batch.n_seq_id[i] = 1;
      batch.seq_id[i][0] = seq;
      batch.logits[i] = logits ? 1 : 0;
      return i;
    };
    int64_t prompt_tokens = 0;
    for (auto& slot : slots_) {
      if (slot->request == nullptr || slot->next < 0) continue;
      slot->batch_index =
          add(slot->next, static_cast<int32_t>(slot->cache.size()), slot->seq, true);
      slot->cache.push_back(slot->next);
      slot->next = -1;
    }
    // Prompt chunks fill the rest of the step, the earliest admitted first.
    std::vector<Slot*> prompting;
    for (auto& slot : slots_) {
      if (slot->request != nullptr && slot->prompt_done < slot->prompt->size()) {
        prompting.push_back(slot.get());
      }
    }
    std::sort(prompting.begin(), prompting.end(),
              [](const Slot* a, const Slot* b) { return a->last_used < b->last_used; });
    for (Slot* slot : prompting) {
      const std::vector<int32_t>& prompt = *slot->prompt;
      while (batch.n_tokens < options_.batch_size && slot->prompt_done < prompt.size()) {
        const bool last = slot->prompt_done + 1 == prompt.size();
        const int32_t i = add(prompt[slot->prompt_done], static_cast<int32_t>(slot->cache.size()),
                              slot->seq, last);
        if (last) slot->batch_index = i;
        slot->cache.push_back(prompt[slot->prompt_done]);
        ++slot->prompt_done;
        ++prompt_tokens;
      }
    }
    if (batch.n_tokens == 0) {
      publish_occupancy();
      continue;
    }

    const TimePoint start = Clock::now();
    const int32_t rc = llama_decode(context_, batch);
    const TimePoint end = Clock::now();
    if (rc != 0) {
      spdlog::error("llama: decode of {} tokens failed (code {})", batch.n_tokens, rc);
      llama_memory_t memory = llama_get_memory(context_);
      for (auto& slot : slots_) {
        if (slot->request == nullptr) continue;
        llama_memory_seq_rm(memory, slot->seq, -1, -1);
        slot->cache.clear();
        slot->batch_index = -1;
        Finish(*slot, absl::InternalError(StrCat("llama.cpp's decode failed (code ", rc, ")")),
               FinishReason::kNone);
      }
      publish_occupancy();
      continue;
    }
    int64_t sampled = 0;
    for (auto& slot : slots_) {
      if (slot->request == nullptr || slot->batch_index < 0) continue;
      const int32_t token = llama_sampler_sample(slot->sampler.get(), context_, slot->batch_index);
      slot->batch_index = -1;
      ++sampled;
      if (slot->generated == 0) slot->first_token = end;
      ++slot->generated;
      if (llama_vocab_is_eog(vocab_, token)) {
        Finish(*slot, absl::OkStatus(), FinishReason::kStop);
        continue;
      }
      GenerationEvent event;
      event.choice = slot->choice;
      event.text = slot->text->Add(Piece(token));
      event.tokens = 1;
      if (!event.text.empty()) Deliver(*slot->request, std::move(event));
      if (slot->text->stopped()) {
        Finish(*slot, absl::OkStatus(), FinishReason::kStop);
      } else if (slot->generated >= slot->max_tokens ||
                 static_cast<int64_t>(slot->cache.size()) + 1 > options_.context_length) {
        Finish(*slot, absl::OkStatus(), FinishReason::kLength);
      } else {
        slot->next = token;
      }
    }
    {
      MutexLock lock(&mu_);
      ++stats_.decode_steps;
      stats_.decode_time += end - start;
      stats_.prompt_tokens += static_cast<uint64_t>(prompt_tokens);
    }
    publish_occupancy();
    (void)sampled;
  }
  llama_batch_free(batch);
  // Shutting down: everything still queued or running is answered.
  std::deque<QueuedChoice> left;
  {
    MutexLock lock(&mu_);
    left = sequences_.TakeAll();
    stats_.queued = 0;
  }
  for (QueuedChoice& queued : left) {
    FailChoice(*queued.request, queued.choice, absl::UnavailableError("the model was unloaded"));
  }
  std::deque<std::unique_ptr<EmbedJob>> embeds;
  {
    MutexLock lock(&mu_);
    embeds.swap(embed_queue_);
  }
  if (embedding_ != nullptr) embeds.push_front(std::move(embedding_));
  for (auto& job : embeds) {
    if (auto callback = std::move(job->request->on_done)) {
      callback(absl::UnavailableError("the model was unloaded"));
    }
  }
  for (auto& slot : slots_) {
    if (slot->request != nullptr) {
      Finish(*slot, absl::UnavailableError("the model was unloaded"), FinishReason::kNone);
    }
  }
}

bool LlamaEngine::Admit() {
  std::vector<std::pair<QueuedChoice, absl::Status>> dropped;
  std::vector<std::pair<size_t, QueuedChoice>> admitted;
  const TimePoint now = Clock::now();
  {
    MutexLock lock(&mu_);
    dropped = sequences_.DropFinished(now);
    std::vector<FreeSlot> free;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = *slots_[i];
      if (slot.request == nullptr) free.push_back({i, slot.cache, slot.partition, slot.last_used});
    }
    admitted = sequences_.Admit(std::move(free));
    stats_.queued = sequences_.waiting();
    stats_.requests_failed += dropped.size();
  }
  for (auto& [queued, why] : dropped) FailChoice(*queued.request, queued.choice, why);
  llama_memory_t memory = llama_get_memory(context_);
  for (auto& [index, queued] : admitted) {
    Slot* slot = slots_[index].get();
    const bool same_partition = slot->partition == queued.request->cache_partition;
    size_t reuse = queued.request->cache_prompt && same_partition
                       ? ReusablePrefix(slot->cache, *queued.prompt)
                       : 0;
    if (reuse < slot->cache.size() &&
        !llama_memory_seq_rm(memory, slot->seq, static_cast<llama_pos>(reuse), -1)) {
      llama_memory_seq_rm(memory, slot->seq, -1, -1);
      reuse = 0;
    }
    slot->cache.resize(reuse);
    slot->partition = queued.request->cache_partition;
    slot->request = std::move(queued.request);
    slot->choice = queued.choice;
    slot->prompt = std::move(queued.prompt);
    slot->prompt_done = reuse;
    slot->cached = static_cast<int64_t>(reuse);
    slot->max_tokens = queued.max_tokens;
    SamplingParams sampling = slot->request->sampling;
    if (sampling.seed) *sampling.seed += static_cast<uint32_t>(slot->choice);
    slot->sampler = MakeSampler(sampling, llama_vocab_n_tokens(vocab_));
    slot->text.emplace(slot->request->stop);
    slot->next = -1;
    slot->generated = 0;
    slot->batch_index = -1;
    slot->admitted = now;
    slot->last_used = ++tick_;
  }
  return !admitted.empty();
}

void LlamaEngine::Finish(Slot& slot, absl::Status status, FinishReason reason) {
  GenerationEvent event;
  event.choice = slot.choice;
  event.done = true;
  if (status.ok()) {
    event.text = slot.text->Flush();
    if (reason == FinishReason::kStop) event.stop_sequence = slot.text->stopped_by();
  }
  event.status = std::move(status);
  event.finish_reason = reason;
  event.usage.prompt_tokens = static_cast<int64_t>(slot.prompt->size());
  event.usage.cached_prompt_tokens = slot.cached;
  event.usage.completion_tokens = slot.generated;
  const TimePoint now = Clock::now();
  event.usage.total = now - slot.request->arrival;
  if (slot.generated > 0)
    event.usage.time_to_first_token = slot.first_token - slot.request->arrival;
  {
    MutexLock lock(&mu_);
    ++stats_.requests;
    if (!event.status.ok()) ++stats_.requests_failed;
    stats_.cached_prompt_tokens += static_cast<uint64_t>(slot.cached);
    stats_.completion_tokens += static_cast<uint64_t>(slot.generated);
    if (slot.generated > 0) {
      stats_.ttft.Add(event.usage.time_to_first_token);
      if (slot.generated > 1) {
        stats_.tpot.Add((now - slot.first_token) / (slot.generated - 1));
      }
    }
  }
  // The request is shared by its choices: the last one to end lets it go (and its callback,
  // which may hold the frontend's reply state).
  std::shared_ptr<GenerateRequest> request = std::move(slot.request);
  slot.prompt.reset();
  slot.sampler.reset();
  slot.text.reset();
  slot.next = -1;
  slot.batch_index = -1;
  Deliver(*request, std::move(event));
}

}  // namespace inferd

#include "ops/text/sentencepiece_tokenizer.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "inferd_tokenizers.h"
#include "ops/text/sentencepiece_shim.h"

#ifndef INFERD_SENTENCEPIECE_SHIM_PATH
#error "ops_text.cmake defines INFERD_SENTENCEPIECE_SHIM_PATH"
#endif

namespace inferd {

struct SentencePieceApi {
  decltype(&inferd_spm_load) load;
  decltype(&inferd_spm_free) free;
  decltype(&inferd_spm_encode) encode;
  decltype(&inferd_spm_bos_id) bos_id;
  decltype(&inferd_spm_eos_id) eos_id;
  decltype(&inferd_spm_pad_id) pad_id;
};

namespace {

constexpr char kCopyName[] = "libsentencepiece.so.0";
constexpr size_t kErrorSize = 512;

template <typename T>
bool Resolve(void* module, const char* name, T& out) {
  out = reinterpret_cast<T>(dlsym(module, name));
  return out != nullptr;
}

// Whether a loaded library's dynamic section carries DF_SYMBOLIC: the copy's whole point.
bool IsSymbolic(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return false;
  for (const ElfW(Dyn)* d = map->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_SYMBOLIC) return true;
    if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_SYMBOLIC) != 0) return true;
  }
  return false;
}

// Opens the DF_SYMBOLIC copy of libsentencepiece.so.0 by its path, then the shim module
// beside it: the shim's DT_NEEDED libsentencepiece.so.0 then matches the copy already loaded,
// whatever LD_LIBRARY_PATH says. Both RTLD_LOCAL: SentencePiece's protobuf symbols stay out
// of the global scope, where gRPC's libprotobuf lives.
absl::StatusOr<void*> OpenModule(const std::filesystem::path& shim, std::string& failures) {
  const std::filesystem::path copy = shim.parent_path() / kCopyName;
  void* library = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    absl::StrAppend(&failures, "; ", dlerror());
    return nullptr;
  }
  if (!IsSymbolic(library)) {
    return absl::FailedPreconditionError(
        absl::StrCat(copy.string(), " is not marked DF_SYMBOLIC: it would bind SentencePiece to ",
                     "gRPC's libprotobuf and abort; rebuild (ops_text.cmake makes that copy)"));
  }
  void* module = dlopen(shim.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) absl::StrAppend(&failures, "; ", dlerror());
  return module;
}

// The shim module, opened once for the process and never closed (models may be loaded again
// at any time).
absl::StatusOr<const SentencePieceApi*> Api() {
  static const absl::StatusOr<const SentencePieceApi*> api =
      []() -> absl::StatusOr<const SentencePieceApi*> {
    // An installed layout (<prefix>/bin/inferd, <prefix>/lib/ holding the module and its
    // copy of libsentencepiece.so.0, as in the container image) first, then the build tree.
    std::vector<std::filesystem::path> candidates;
    std::error_code error;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path built(INFERD_SENTENCEPIECE_SHIM_PATH);
    if (!error) candidates.push_back(exe.parent_path().parent_path() / "lib" / built.filename());
    candidates.push_back(built);
    void* module = nullptr;
    std::string failures;
    for (const std::filesystem::path& path : candidates) {
      if (!std::filesystem::exists(path, error)) continue;
      absl::StatusOr<void*> opened = OpenModule(path, failures);
      if (!opened.ok()) return opened.status();
      module = *opened;
      if (module != nullptr) break;
    }
    if (module == nullptr) {
      std::vector<std::string> names;
      for (const auto& path : candidates) names.push_back(path.string());
      return absl::FailedPreconditionError(
          absl::StrCat("cannot open SentencePiece's module (looked for ",
                       absl::StrJoin(names, ", "), ")", failures));
    }
    auto* table = new SentencePieceApi();
    if (!Resolve(module, "inferd_spm_load", table->load) ||
        !Resolve(module, "inferd_spm_free", table->free) ||
        !Resolve(module, "inferd_spm_encode", table->encode) ||
        !Resolve(module, "inferd_spm_bos_id", table->bos_id) ||
        !Resolve(module, "inferd_spm_eos_id", table->eos_id) ||
        !Resolve(module, "inferd_spm_pad_id", table->pad_id)) {
      delete table;
      return absl::FailedPreconditionError(
          absl::StrCat("SentencePiece's module lacks a function: ", dlerror()));
    }
    return table;
  }();
  return api;
}

}  // namespace

void SentencePieceTokenizer::Free::operator()(InferdSpm* spm) const { api->free(spm); }

SentencePieceTokenizer::SentencePieceTokenizer(const SentencePieceApi* api, InferdSpm* spm)
    : api_(api), spm_(spm, Free{api}) {}

absl::StatusOr<SentencePieceTokenizer> SentencePieceTokenizer::Load(
    const std::filesystem::path& path) {
  absl::StatusOr<const SentencePieceApi*> api = Api();
  if (!api.ok()) return api.status();
  char error[kErrorSize] = {};
  InferdSpm* spm = (*api)->load(path.c_str(), error, sizeof(error));
  if (spm == nullptr) return absl::InvalidArgumentError(error);
  return SentencePieceTokenizer(*api, spm);
}

absl::Status SentencePieceTokenizer::Configure(size_t max_length, bool add_bos, bool add_eos) {
  if ((add_bos && !bos_id()) || (add_eos && !eos_id())) {
    return absl::InvalidArgumentError("the model has no BOS or EOS piece to add");
  }
  const size_t specials = (add_bos ? 1 : 0) + (add_eos ? 1 : 0);
  if (max_length <= specials) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_length ", max_length, " leaves no room for a piece beside BOS/EOS"));
  }
  max_pieces_ = max_length - specials;
  add_bos_ = add_bos;
  add_eos_ = add_eos;
  return absl::OkStatus();
}

absl::StatusOr<Encoded> SentencePieceTokenizer::Encode(std::string_view text) const {
  const int64_t invalid =
      inferd_utf8_invalid_at(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  if (invalid >= 0)
    return absl::InvalidArgumentError(absl::StrCat("not UTF-8 (byte ", invalid, ")"));
  Encoded out;
  std::vector<int32_t> pieces(max_pieces_);
  char error[kErrorSize] = {};
  const int64_t count = api_->encode(spm_.get(), text.data(), text.size(), pieces.data(),
                                     pieces.size(), error, sizeof(error));
  if (count < 0) return absl::InternalError(absl::StrCat("sentencepiece: ", error));
  pieces.resize(std::min(static_cast<size_t>(count), max_pieces_));
  out.ids.reserve(pieces.size() + 2);
  if (add_bos_) out.ids.push_back(*bos_id());
  for (const int32_t id : pieces) out.ids.push_back(static_cast<uint32_t>(id));
  if (add_eos_) out.ids.push_back(*eos_id());
  out.mask.assign(out.ids.size(), 1);
  out.type_ids.assign(out.ids.size(), 0);
  return out;
}

namespace {
std::optional<uint32_t> PieceId(int32_t id) {
  if (id < 0) return std::nullopt;
  return static_cast<uint32_t>(id);
}
}  // namespace

std::optional<uint32_t> SentencePieceTokenizer::bos_id() const {
  return PieceId(api_->bos_id(spm_.get()));
}
std::optional<uint32_t> SentencePieceTokenizer::eos_id() const {
  return PieceId(api_->eos_id(spm_.get()));
}
std::optional<uint32_t> SentencePieceTokenizer::declared_pad_id() const {
  return PieceId(api_->pad_id(spm_.get()));
}

}  // namespace inferd

#include "common/error_detail.h"

#include "absl/strings/cord.h"

namespace inferd {
namespace {

// Payload type URLs: private to this file, so the payloads have one reader and one writer.
// (absl::string_view: this Abseil's is not std::string_view.)
constexpr absl::string_view kFieldUrl = "inferd/error-field";
constexpr absl::string_view kReasonUrl = "inferd/error-reason";

constexpr absl::string_view kUnknownModel = "unknown_model";
constexpr absl::string_view kContextLengthExceeded = "context_length_exceeded";

}  // namespace

absl::Status WithErrorField(absl::Status status, std::string_view field) {
  if (!status.ok() && !field.empty())
    status.SetPayload(kFieldUrl, absl::Cord(absl::string_view(field.data(), field.size())));
  return status;
}

absl::Status WithErrorReason(absl::Status status, ErrorReason reason) {
  if (status.ok()) return status;
  switch (reason) {
    case ErrorReason::kNone:
      status.ErasePayload(kReasonUrl);
      break;
    case ErrorReason::kUnknownModel:
      status.SetPayload(kReasonUrl, absl::Cord(kUnknownModel));
      break;
    case ErrorReason::kContextLengthExceeded:
      status.SetPayload(kReasonUrl, absl::Cord(kContextLengthExceeded));
      break;
  }
  return status;
}

std::string ErrorField(const absl::Status& status) {
  auto field = status.GetPayload(kFieldUrl);
  return field ? std::string(*field) : std::string();
}

ErrorReason ErrorReasonOf(const absl::Status& status) {
  auto reason = status.GetPayload(kReasonUrl);
  if (!reason) return ErrorReason::kNone;
  if (*reason == kUnknownModel) return ErrorReason::kUnknownModel;
  if (*reason == kContextLengthExceeded) return ErrorReason::kContextLengthExceeded;
  return ErrorReason::kNone;
}

}  // namespace inferd

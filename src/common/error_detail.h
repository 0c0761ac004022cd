// What an error says besides its code and message, for the protocols that have fields for it
// (OpenAI's "param" and "code"): the request field at fault, and a reason the protocol
// encoders translate into their own codes. Both ride on the absl::Status as payloads, so they
// pass unchanged through every layer that forwards a Status, and are attached where the
// error is made, by the code that knows (the codec knows the field, the model manager that a
// model is unknown), never guessed later from the message.
#ifndef INFERD_COMMON_ERROR_DETAIL_H_
#define INFERD_COMMON_ERROR_DETAIL_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace inferd {

enum class ErrorReason {
  kNone,
  kUnknownModel,           // the request names a model (or version) the server does not have
  kContextLengthExceeded,  // the prompt does not fit the model's context
};

// `status` with `field` named as the request field at fault ("temperature",
// "messages[2].content"); an OK status is returned unchanged.
absl::Status WithErrorField(absl::Status status, std::string_view field);
// `status` with `reason`; an OK status is returned unchanged.
absl::Status WithErrorReason(absl::Status status, ErrorReason reason);

// The field WithErrorField named; empty when none.
std::string ErrorField(const absl::Status& status);
// The reason WithErrorReason gave; kNone when none.
ErrorReason ErrorReasonOf(const absl::Status& status);

}  // namespace inferd

#endif  // INFERD_COMMON_ERROR_DETAIL_H_

// The GBNF grammar for a request's OutputFormat: llama.cpp's generic JSON grammar for
// json_object, llama.cpp's JSON schema converter for json_schema, the client's own text for
// grammar. Hostile input is bounded here, before llama.cpp parses it: a schema that uses a
// keyword the converter would silently ignore, or that nests deeper than kMaxOutputFormatNesting,
// and a grammar that nests deeper than kMaxOutputFormatNesting (llama.cpp's parsers recurse per
// level), are refused.
//
// Thread-safety: a free function; runs on the engine's preparation thread (its cost grows
// with the schema). Never throws: the converter's exceptions become InvalidArgument.
#ifndef INFERD_BACKENDS_LLAMA_OUTPUT_GRAMMAR_H_
#define INFERD_BACKENDS_LLAMA_OUTPUT_GRAMMAR_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/backend/generation.h"

namespace inferd {

// Levels of nested brackets in a schema or grammar; real ones use a handful.
inline constexpr int kMaxOutputFormatNesting = 64;

// The GBNF text, with its start rule named "root"; InvalidArgument naming the request field
// when the format cannot be enforced as given. `format.kind` must not be kText.
absl::StatusOr<std::string> OutputGrammar(const OutputFormat& format);

}  // namespace inferd

#endif  // INFERD_BACKENDS_LLAMA_OUTPUT_GRAMMAR_H_

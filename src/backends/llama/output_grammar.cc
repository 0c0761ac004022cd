#include "backends/llama/output_grammar.h"

#include <algorithm>
#include <exception>
#include <string_view>

#include "common/error_detail.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "json-schema-to-grammar.h"

namespace inferd {
namespace {

// llama.cpp's grammars/json.gbnf (same release as the engine): any JSON object.
constexpr std::string_view kJsonObjectGrammar = R"gbnf(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
)gbnf";

constexpr std::string_view kSchemaField = "'response_format.json_schema.schema'";

// Keywords llama.cpp's converter (common/json-schema.cpp) enforces, and annotations that
// constrain nothing. Any other keyword (not, if, patternProperties, uniqueItems, multipleOf,
// ...) the converter would skip, and the output would not be what the schema says.
constexpr std::string_view kSchemaKeywords[] = {"type",
                                                "properties",
                                                "required",
                                                "additionalProperties",
                                                "items",
                                                "prefixItems",
                                                "minItems",
                                                "maxItems",
                                                "anyOf",
                                                "oneOf",
                                                "allOf",
                                                "enum",
                                                "const",
                                                "$ref",
                                                "$defs",
                                                "definitions",
                                                "minLength",
                                                "maxLength",
                                                "pattern",
                                                "format",
                                                "minimum",
                                                "maximum",
                                                "exclusiveMinimum",
                                                "exclusiveMaximum",
                                                "title",
                                                "description",
                                                "default",
                                                "examples",
                                                "$schema",
                                                "$id",
                                                "$comment",
                                                "deprecated",
                                                "readOnly",
                                                "writeOnly"};

// Keywords whose value is one schema, or a map or list of schemas.
bool HoldsSchemas(std::string_view key) {
  return key == "properties" || key == "$defs" || key == "definitions" || key == "items" ||
         key == "prefixItems" || key == "anyOf" || key == "oneOf" || key == "allOf" ||
         key == "additionalProperties";
}

absl::Status Refuse(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(StrCat(kSchemaField, " at ", path, ": ", why));
}

absl::Status CheckSchema(const common_json& schema, const std::string& path, int depth);

// A keyword's value that holds schemas: one schema, a map of them or a list of them.
absl::Status CheckSchemas(std::string_view key, const common_json& value, const std::string& path,
                          int depth) {
  if (value.is_boolean()) return absl::OkStatus();  // additionalProperties: false, items: true
  if (key == "properties" || key == "$defs" || key == "definitions") {
    if (!value.is_object()) return Refuse(path, "must be an object of schemas");
    for (const auto& [name, child] : value.items()) {
      RETURN_IF_ERROR(CheckSchema(child, StrCat(path, "/", name), depth + 1));
    }
    return absl::OkStatus();
  }
  if (value.is_array()) {
    size_t i = 0;
    for (const auto& child : value) {
      RETURN_IF_ERROR(CheckSchema(child, StrCat(path, "/", i++), depth + 1));
    }
    return absl::OkStatus();
  }
  return CheckSchema(value, path, depth + 1);
}

absl::Status CheckSchema(const common_json& schema, const std::string& path, int depth) {
  if (depth > kMaxOutputFormatNesting) {
    return Refuse(path, StrCat("nests more than ", kMaxOutputFormatNesting, " schemas deep"));
  }
  if (schema.is_boolean()) return absl::OkStatus();
  if (!schema.is_object()) return Refuse(path, "a schema must be an object");
  bool integer = false;
  if (schema.contains("type") && schema.at("type").is_string()) {
    integer = schema.at("type").get<std::string>() == "integer";
  }
  for (const auto& [key, value] : schema.items()) {
    if (std::find(std::begin(kSchemaKeywords), std::end(kSchemaKeywords), key) ==
        std::end(kSchemaKeywords)) {
      return Refuse(path, StrCat("the keyword '", key,
                                 "' is not supported (inferd would not enforce it); docs/llm.md "
                                 "lists what is"));
    }
    // The converter bounds integers only: a bound on a number would not hold.
    if ((key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
         key == "exclusiveMaximum") &&
        !integer) {
      return Refuse(path, StrCat("'", key, "' is supported on type integer only"));
    }
    // The converter turns only a pattern anchored at both ends into grammar; any other it
    // would let match every string.
    if (key == "pattern") {
      const std::string pattern = value.is_string() ? value.get<std::string>() : "";
      if (pattern.size() < 2 || pattern.front() != '^' || pattern.back() != '$') {
        return Refuse(path, "a 'pattern' must be anchored with '^' and '$'");
      }
    }
    if (HoldsSchemas(key)) RETURN_IF_ERROR(CheckSchemas(key, value, StrCat(path, "/", key), depth));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SchemaGrammar(const std::string& text) {
  try {
    const common_json schema = common_json::parse(text);
    RETURN_IF_ERROR(CheckSchema(schema, "#", 0));
    return json_schema_to_grammar(schema);
  } catch (const std::exception& e) {
    // The converter's "JSON schema conversion failed:\n<reasons>", on one line.
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    return absl::InvalidArgumentError(StrCat(kSchemaField, ": ", message.substr(0, 1024)));
  }
}

// The deepest nesting of ( in GBNF text, outside literals, character classes and comments.
int GrammarNesting(std::string_view text) {
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '[') {
      const char end = c == '"' ? '"' : ']';
      for (++i; i < text.size() && text[i] != end; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<std::string> OutputGrammar(const OutputFormat& format) {
  switch (format.kind) {
    case OutputFormat::Kind::kJsonObject:
      return std::string(kJsonObjectGrammar);
    case OutputFormat::Kind::kJsonSchema: {
      absl::StatusOr<std::string> grammar = SchemaGrammar(format.text);
      if (grammar.ok() || format.field.empty()) return grammar;
      // A schema inferd built from other fields (a chat request's 'tools') is named by them.
      std::string message(grammar.status().message());
      if (message.starts_with(kSchemaField)) {
        message.replace(0, kSchemaField.size(),
                        StrCat("'", format.field, "' (the reply schema made of them)"));
      }
      return WithErrorField(absl::InvalidArgumentError(message), format.field);
    }
    case OutputFormat::Kind::kGrammar:
      if (GrammarNesting(format.text) > kMaxOutputFormatNesting) {
        return absl::InvalidArgumentError(StrCat("'grammar' nests parentheses more than ",
                                                 kMaxOutputFormatNesting, " levels deep"));
      }
      return format.text;
    case OutputFormat::Kind::kText:
      break;
  }
  return absl::InternalError("OutputGrammar of free text");
}

}  // namespace inferd

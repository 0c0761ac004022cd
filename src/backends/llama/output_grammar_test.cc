#include "backends/llama/output_grammar.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferd {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

OutputFormat Schema(const std::string& schema) {
  return {OutputFormat::Kind::kJsonSchema, schema, ""};
}

std::string ErrorOf(const absl::StatusOr<std::string>& grammar) {
  EXPECT_FALSE(grammar.ok());
  EXPECT_EQ(grammar.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(grammar.status().message());
}

TEST(OutputGrammarTest, JsonObjectIsLlamaCppsJsonGrammar) {
  absl::StatusOr<std::string> grammar = OutputGrammar({OutputFormat::Kind::kJsonObject, "", ""});
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  EXPECT_THAT(*grammar, StartsWith("root   ::= object"));
}

TEST(OutputGrammarTest, SchemaBecomesAGrammarOfItsProperties) {
  absl::StatusOr<std::string> grammar = OutputGrammar(Schema(
      R"({"type": "object", "title": "person", "properties": {"name": {"type": "string"},
          "age": {"type": "integer", "minimum": 0}}, "required": ["name", "age"],
          "additionalProperties": false})"));
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  EXPECT_THAT(*grammar, HasSubstr("name-kv"));
  EXPECT_THAT(*grammar, HasSubstr("age-kv"));
  EXPECT_THAT(*grammar, HasSubstr("root ::="));
}

TEST(OutputGrammarTest, RefusesAKeywordTheConverterWouldIgnore) {
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": "object", "properties": {"a": {
                  "type": "string", "not": {"const": "x"}}}})"))),
              HasSubstr("at #/properties/a: the keyword 'not' is not supported"));
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": "array", "uniqueItems": true})"))),
              HasSubstr("'uniqueItems'"));
}

TEST(OutputGrammarTest, RefusesBoundsOnANumberAndAnUnanchoredPattern) {
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": "number", "maximum": 1})"))),
              HasSubstr("'maximum' is supported on type integer only"));
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": "string", "pattern": "a+"})"))),
              HasSubstr("anchored"));
}

TEST(OutputGrammarTest, RefusesASchemaNestedTooDeep) {
  std::string schema;
  for (int i = 0; i < 100; ++i) schema += R"({"type": "array", "items": )";
  schema += "{}";
  schema += std::string(100, '}');
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(schema))), HasSubstr("schemas deep"));
}

TEST(OutputGrammarTest, TheConvertersErrorsBecomeInvalidArgument) {
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": "strnig"})"))),
              HasSubstr("unrecognized type strnig"));
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"$ref": "https://example.com/s.json"})"))),
              HasSubstr("unsupported $ref"));
  EXPECT_THAT(ErrorOf(OutputGrammar(Schema(R"({"type": )"))),
              HasSubstr("'response_format.json_schema.schema'"));
}

TEST(OutputGrammarTest, GrammarPassesThroughUnlessNestedTooDeep) {
  const std::string gbnf = R"(root ::= ("yes" | "no") # a comment with ((((()";
  absl::StatusOr<std::string> grammar = OutputGrammar({OutputFormat::Kind::kGrammar, gbnf, ""});
  ASSERT_TRUE(grammar.ok()) << grammar.status();
  EXPECT_EQ(*grammar, gbnf);
  const std::string deep = "root ::= " + std::string(1000, '(') + "\"x\"" + std::string(1000, ')');
  EXPECT_THAT(ErrorOf(OutputGrammar({OutputFormat::Kind::kGrammar, deep, ""})),
              HasSubstr("'grammar' nests parentheses"));
}

}  // namespace
}  // namespace inferd

#include "backends/llama/chat_template.h"

#include <gtest/gtest.h>

namespace inferd {
namespace {

constexpr char kTemplate[] =
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|system|>default{{ eos_token }}{% endif %}"
    "<|{{ message['role'] }}|>{{ message['content'] | trim }}{{ eos_token }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}";

TEST(ChatTemplateTest, RendersMessagesWithTheTemplatesOwnDefaults) {
  auto tmpl = ChatTemplate::Create(kTemplate, "<s>", "</s>");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  auto prompt = (*tmpl)->Render({{"user", "  Hi  "}}, /*add_generation_prompt=*/true);
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(*prompt, "<|system|>default</s><|user|>Hi</s><|assistant|>");
}

TEST(ChatTemplateTest, OmitsTheGenerationPromptWhenNotAsked) {
  auto tmpl = ChatTemplate::Create(kTemplate, "<s>", "</s>");
  ASSERT_TRUE(tmpl.ok());
  auto prompt = (*tmpl)->Render({{"system", "S"}, {"user", "U"}}, false);
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(*prompt, "<|system|>S</s><|user|>U</s>");
}

TEST(ChatTemplateTest, ReportsTheTemplatesOwnException) {
  auto tmpl = ChatTemplate::Create(
      "{% if messages[0]['role'] == 'assistant' %}{{ raise_exception('must start with a user') "
      "}}{% endif %}ok",
      "", "");
  ASSERT_TRUE(tmpl.ok());
  auto prompt = (*tmpl)->Render({{"assistant", "x"}}, true);
  ASSERT_FALSE(prompt.ok());
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(prompt.status().message().find("must start with a user"), std::string::npos)
      << prompt.status();
}

TEST(ChatTemplateTest, RejectsATemplateThatIsNotJinja) {
  auto tmpl = ChatTemplate::Create("{% for message in %}", "", "");
  EXPECT_FALSE(tmpl.ok());
}

}  // namespace
}  // namespace inferd

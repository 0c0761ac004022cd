#include "frontends/http/codecs/multipart_form.h"

#include <string>

#include <gtest/gtest.h>

#include "common/strings.h"

namespace inferd {
namespace {

constexpr std::string_view kType = "multipart/form-data; boundary=XyZ";

std::string Part(std::string_view disposition, std::string_view data) {
  return StrCat("--XyZ\r\nContent-Disposition: form-data; ", disposition,
                "\r\nContent-Type: application/octet-stream\r\n\r\n", data, "\r\n");
}

TEST(MultipartFormTest, TakesThePartNamedInputAsViewsIntoTheBody) {
  std::string body =
      StrCat(Part("name=\"note\"", "hello"),
             Part("name=\"input\"; filename=\"a.jpg\"", "\xFF\xD8 bytes\r\n--X"), "--XyZ--\r\n");
  auto form = ParseMultipartForm(kType, body);
  ASSERT_TRUE(form.ok()) << form.status();
  ASSERT_EQ(form->parts.size(), 2u);
  EXPECT_EQ(form->parts[0].name, "note");
  EXPECT_FALSE(form->parts[0].is_file);
  EXPECT_EQ(form->parts[1].filename, "a.jpg");
  auto input = form->InputPart();
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(*input, "\xFF\xD8 bytes\r\n--X");
  EXPECT_GE(input->data(), body.data());
  EXPECT_LE(input->data() + input->size(), body.data() + body.size());
}

TEST(MultipartFormTest, QuotedBoundaryPreambleAndTheOnlyFilePart) {
  std::string body =
      StrCat("preamble\r\n", Part("name=\"photo\"; filename=\"p.png\"", "PNG"), "--XyZ--");
  auto form = ParseMultipartForm("multipart/form-data; boundary=\"XyZ\"", body);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(*form->InputPart(), "PNG");
}

TEST(MultipartFormTest, MalformedBodiesAreInvalidArgument) {
  std::string good = StrCat(Part("name=\"input\"", "x"), "--XyZ--");
  for (size_t cut = 0; cut + 7 < good.size(); ++cut) {
    auto form = ParseMultipartForm(kType, good.substr(0, cut));
    EXPECT_FALSE(form.ok()) << cut;
  }
  EXPECT_FALSE(ParseMultipartForm("multipart/form-data", good).ok());
  EXPECT_FALSE(
      ParseMultipartForm(StrCat("multipart/form-data; boundary=", std::string(71, 'a')), good)
          .ok());
  std::string many;
  for (int i = 0; i < 17; ++i) many += Part("name=\"p\"", "x");
  auto too_many = ParseMultipartForm(kType, many + "--XyZ--");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("more than 16 parts"), std::string::npos);
  std::string big_headers = StrCat("--XyZ\r\nContent-Disposition: form-data; name=\"input\"\r\nX: ",
                                   std::string(9000, 'a'), "\r\n\r\nx\r\n--XyZ--");
  EXPECT_FALSE(ParseMultipartForm(kType, big_headers).ok());
  auto none = ParseMultipartForm(kType, StrCat(Part("name=\"a\"", "1"), "--XyZ--"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->InputPart().ok());
}

}  // namespace
}  // namespace inferd

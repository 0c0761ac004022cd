#include "ops/image/image_decoder.h"

#include <spng.h>
#include <turbojpeg.h>
#include <webp/decode.h>

#include <cstring>
#include <memory>
#include <string_view>

#include "common/status_macros.h"
#include "common/strings.h"

namespace inferd {
namespace {

enum class Format { kJpeg, kPng, kWebp, kUnknown };

Format Sniff(std::span<const uint8_t> f) {
  if (f.size() >= 3 && f[0] == 0xFF && f[1] == 0xD8 && f[2] == 0xFF) return Format::kJpeg;
  static constexpr uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (f.size() >= 8 && std::memcmp(f.data(), kPng, 8) == 0) return Format::kPng;
  if (f.size() >= 12 && std::memcmp(f.data(), "RIFF", 4) == 0 &&
      std::memcmp(f.data() + 8, "WEBP", 4) == 0) {
    return Format::kWebp;
  }
  return Format::kUnknown;
}

absl::Status CheckSize(uint64_t width, uint64_t height, const ImageLimits& limits,
                       const ImageLimitNames& names) {
  if (width == 0 || height == 0) {
    return absl::InvalidArgumentError(
        StrCat("the image declares ", width, "x", height, " pixels; send an image with pixels"));
  }
  if (width > limits.max_side || height > limits.max_side) {
    return absl::InvalidArgumentError(
        StrCat(width, "x", height, " pixels; this pipeline takes images of at most ",
               limits.max_side, " pixels a side (params.", names.max_side, ")"));
  }
  if (width * height > limits.max_pixels) {
    return absl::InvalidArgumentError(
        StrCat(width, "x", height, " pixels; this pipeline takes at most ", limits.max_pixels,
               " (params.", names.max_pixels, ")"));
  }
  return absl::OkStatus();
}

DecodedImage Blank(int width, int height, int channels) {
  DecodedImage image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<size_t>(width) * height * channels);
  return image;
}

// Pillow's RGB to L ("L = R * 299/1000 + G * 587/1000 + B * 114/1000" in 16-bit fixed point).
DecodedImage RgbToGray(const DecodedImage& rgb) {
  DecodedImage gray = Blank(rgb.width, rgb.height, 1);
  const size_t pixels = static_cast<size_t>(rgb.width) * rgb.height;
  for (size_t i = 0; i < pixels; ++i) {
    const uint8_t* p = &rgb.pixels[i * 3];
    gray.pixels[i] =
        static_cast<uint8_t>((p[0] * 19595 + p[1] * 38470 + p[2] * 7471 + 0x8000) >> 16);
  }
  return gray;
}

DecodedImage GrayToRgb(const DecodedImage& gray) {
  DecodedImage rgb = Blank(gray.width, gray.height, 3);
  const size_t pixels = static_cast<size_t>(gray.width) * gray.height;
  for (size_t i = 0; i < pixels; ++i) {
    rgb.pixels[i * 3] = rgb.pixels[i * 3 + 1] = rgb.pixels[i * 3 + 2] = gray.pixels[i];
  }
  return rgb;
}

DecodedImage ToColor(DecodedImage image, ImageColor color) {
  if (color == ImageColor::kGray && image.channels == 3) return RgbToGray(image);
  if (color == ImageColor::kRgb && image.channels == 1) return GrayToRgb(image);
  return image;
}

// --- JPEG (TurboJPEG) --------------------------------------------------------------------

// One TurboJPEG decompressor per thread. After a failed call it can be left mid-file and fail
// the next, valid, file with the last one's error, so it is replaced then.
struct TjHandle {
  tjhandle handle = tjInitDecompress();
  ~TjHandle() {
    if (handle != nullptr) tjDestroy(handle);
  }
  // The error of the call that just failed; the handle is new afterwards.
  std::string TakeError() {
    std::string error = tjGetErrorStr2(handle);
    tjDestroy(handle);
    handle = tjInitDecompress();
    return error;
  }
};

// Pillow opens CMYK JPEGs as "CMYK;I" (Adobe's inverted convention) and converts with
// cmyk2rgb: nk = 255 - k; channel = clip(nk - c * nk / 255) with its rounding MULDIV255.
uint8_t MulDiv255(int a, int b) {
  const int tmp = a * b + 128;
  return static_cast<uint8_t>(((tmp >> 8) + tmp) >> 8);
}

absl::StatusOr<DecodedImage> DecodeJpeg(std::span<const uint8_t> file, ImageColor color,
                                        const ImageLimits& limits, const ImageLimitNames& names) {
  thread_local TjHandle tj;
  if (tj.handle == nullptr) return absl::InternalError("TurboJPEG could not be initialised");
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.handle, file.data(), static_cast<unsigned long>(file.size()), &width,
                          &height, &subsampling, &colorspace) != 0) {
    return absl::InvalidArgumentError(
        StrCat("not a readable JPEG (", tj.TakeError(), "); send a JPEG, PNG or WebP file"));
  }
  RETURN_IF_ERROR(
      CheckSize(static_cast<uint64_t>(width), static_cast<uint64_t>(height), limits, names));
  // Pillow decodes with libjpeg's defaults: the accurate integer DCT and fancy upsampling,
  // which are TurboJPEG's defaults too. A warning (truncated data) is an error here.
  const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  const bool gray = colorspace == TJCS_GRAY;
  const int channels = cmyk ? 4 : gray ? 1 : 3;
  const int pixel_format = cmyk ? TJPF_CMYK : gray ? TJPF_GRAY : TJPF_RGB;
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * channels);
  if (tjDecompress2(tj.handle, file.data(), static_cast<unsigned long>(file.size()), pixels.data(),
                    width, 0, height, pixel_format, flags) != 0) {
    return absl::InvalidArgumentError(
        StrCat("the JPEG data is corrupt or truncated (", tj.TakeError(), ")"));
  }
  DecodedImage image;
  image.width = width;
  image.height = height;
  if (cmyk) {
    image = Blank(width, height, 3);
    const size_t count = static_cast<size_t>(width) * height;
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* p = &pixels[i * 4];
      const int nk = p[3];  // 255 - (255 - stored k)
      for (int ch = 0; ch < 3; ++ch) {
        const int c = 255 - p[ch];
        image.pixels[i * 3 + ch] = static_cast<uint8_t>(std::max(0, nk - MulDiv255(c, nk)));
      }
    }
  } else {
    image.channels = channels;
    image.pixels = std::move(pixels);
  }
  return ToColor(std::move(image), color);
}

// --- PNG (libspng) -----------------------------------------------------------------------

struct SpngContext {
  spng_ctx* ctx = spng_ctx_new(0);
  ~SpngContext() {
    if (ctx != nullptr) spng_ctx_free(ctx);
  }
};

absl::StatusOr<DecodedImage> DecodePng(std::span<const uint8_t> file, ImageColor color,
                                       const ImageLimits& limits, const ImageLimitNames& names) {
  SpngContext png;
  if (png.ctx == nullptr) return absl::ResourceExhaustedError("no memory for a PNG decoder");
  spng_set_image_limits(png.ctx, limits.max_side, limits.max_side);
  // Ancillary chunks (text, ICC profiles) are bounded too: 1 MiB each, 8 MiB in all.
  spng_set_chunk_limits(png.ctx, 1u << 20, 8u << 20);
  spng_set_png_buffer(png.ctx, file.data(), file.size());
  spng_ihdr ihdr{};
  if (int rc = spng_get_ihdr(png.ctx, &ihdr); rc != 0) {
    if (rc == SPNG_EWIDTH || rc == SPNG_EHEIGHT || rc == SPNG_EUSER_WIDTH ||
        rc == SPNG_EUSER_HEIGHT) {
      return absl::InvalidArgumentError(StrCat("the PNG's size is over ", limits.max_side,
                                               " pixels a side (params.", names.max_side,
                                               ") or invalid"));
    }
    return absl::InvalidArgumentError(
        StrCat("not a readable PNG (", spng_strerror(rc), "); send a JPEG, PNG or WebP file"));
  }
  RETURN_IF_ERROR(CheckSize(ihdr.width, ihdr.height, limits, names));
  const bool gray_source = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth <= 8;
  const bool as_gray = color == ImageColor::kGray && gray_source;
  const int format = as_gray ? SPNG_FMT_G8 : SPNG_FMT_RGB8;
  size_t size = 0;
  if (int rc = spng_decoded_image_size(png.ctx, format, &size); rc != 0) {
    return absl::InvalidArgumentError(
        StrCat("the PNG cannot be decoded (", spng_strerror(rc), ")"));
  }
  DecodedImage image =
      Blank(static_cast<int>(ihdr.width), static_cast<int>(ihdr.height), as_gray ? 1 : 3);
  if (size != image.pixels.size()) {
    return absl::InternalError(
        StrCat("libspng's decoded size ", size, " is not ", image.pixels.size()));
  }
  // No SPNG_DECODE_GAMMA and no SPNG_DECODE_TRNS: Pillow's convert ignores gAMA and drops
  // transparency.
  if (int rc = spng_decode_image(png.ctx, image.pixels.data(), size, format, 0); rc != 0) {
    return absl::InvalidArgumentError(
        StrCat("the PNG data is corrupt or truncated (", spng_strerror(rc), ")"));
  }
  return ToColor(std::move(image), color);
}

// --- WebP (libwebp) ----------------------------------------------------------------------

absl::StatusOr<DecodedImage> DecodeWebp(std::span<const uint8_t> file, ImageColor color,
                                        const ImageLimits& limits, const ImageLimitNames& names) {
  int width = 0, height = 0;
  if (!WebPGetInfo(file.data(), file.size(), &width, &height)) {
    return absl::InvalidArgumentError("not a readable WebP file; send a JPEG, PNG or WebP file");
  }
  RETURN_IF_ERROR(
      CheckSize(static_cast<uint64_t>(width), static_cast<uint64_t>(height), limits, names));
  DecodedImage image = Blank(width, height, 3);
  if (WebPDecodeRGBInto(file.data(), file.size(), image.pixels.data(), image.pixels.size(),
                        width * 3) == nullptr) {
    return absl::InvalidArgumentError("the WebP data is corrupt or truncated");
  }
  return ToColor(std::move(image), color);
}

// --- EXIF orientation --------------------------------------------------------------------

// Tag 0x0112 of IFD0 in a TIFF block ("II*\0" or "MM\0*"); 1 when absent or malformed.
int OrientationInTiff(std::span<const uint8_t> tiff) {
  if (tiff.size() < 8) return 1;
  const bool little = tiff[0] == 'I' && tiff[1] == 'I';
  if (!little && !(tiff[0] == 'M' && tiff[1] == 'M')) return 1;
  auto u16 = [&](size_t at) -> uint32_t {
    return little ? tiff[at] | (tiff[at + 1] << 8) : (tiff[at] << 8) | tiff[at + 1];
  };
  auto u32 = [&](size_t at) -> uint32_t {
    return little ? u16(at) | (u16(at + 2) << 16) : (u16(at) << 16) | u16(at + 2);
  };
  const uint64_t ifd = u32(4);
  if (ifd + 2 > tiff.size()) return 1;
  const uint32_t entries = u16(ifd);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint64_t entry = ifd + 2 + uint64_t{12} * i;
    if (entry + 12 > tiff.size()) return 1;
    if (u16(entry) == 0x0112 && u16(entry + 2) == 3) {
      const uint32_t value = u16(entry + 8);
      return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
    }
  }
  return 1;
}

int JpegOrientation(std::span<const uint8_t> f) {
  size_t at = 2;
  while (at + 4 <= f.size() && f[at] == 0xFF) {
    const uint8_t marker = f[at + 1];
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan, end of image
    const size_t length = (f[at + 2] << 8) | f[at + 3];
    if (length < 2 || at + 2 + length > f.size()) break;
    if (marker == 0xE1 && length >= 8 && std::memcmp(&f[at + 4], "Exif\0\0", 6) == 0) {
      return OrientationInTiff(f.subspan(at + 10, length - 8));
    }
    at += 2 + length;
  }
  return 1;
}

int PngOrientation(std::span<const uint8_t> f) {
  size_t at = 8;
  while (at + 12 <= f.size()) {
    const uint64_t length =
        (uint64_t{f[at]} << 24) | (f[at + 1] << 16) | (f[at + 2] << 8) | f[at + 3];
    if (at + 12 + length > f.size()) break;
    if (std::memcmp(&f[at + 4], "eXIf", 4) == 0)
      return OrientationInTiff(f.subspan(at + 8, length));
    if (std::memcmp(&f[at + 4], "IDAT", 4) == 0) break;  // eXIf must come before the pixels
    at += 12 + length;
  }
  return 1;
}

}  // namespace

int ExifOrientationOf(std::span<const uint8_t> file) {
  switch (Sniff(file)) {
    case Format::kJpeg:
      return JpegOrientation(file);
    case Format::kPng:
      return PngOrientation(file);
    default:
      return 1;
  }
}

absl::StatusOr<DecodedImage> DecodeImage(std::span<const uint8_t> file, ImageColor color,
                                         const ImageLimits& limits, const ImageLimitNames& names) {
  if (file.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(
        StrCat("the file has ", file.size(), " bytes; this pipeline takes images of at most ",
               limits.max_bytes, " bytes (params.", names.max_bytes, ")"));
  }
  switch (Sniff(file)) {
    case Format::kJpeg:
      return DecodeJpeg(file, color, limits, names);
    case Format::kPng:
      return DecodePng(file, color, limits, names);
    case Format::kWebp:
      return DecodeWebp(file, color, limits, names);
    case Format::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(
      StrCat("not a JPEG, PNG or WebP image (", file.size(),
             " bytes that start with none of their signatures); send the image file's bytes"));
}

}  // namespace inferd

// Image files from a client: the format sniffing, the JPEG (TurboJPEG), PNG (libspng) and WebP
// (libwebp) decoders with their size checks, the EXIF orientation reader, the resampling and
// cropping the image op runs after them. Small limits keep each input cheap; a decoded image
// must have the size its header declared. Input: one byte choosing gray or RGB, then the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "ops/image/image_decoder.h"
#include "ops/image/pil_resample.h"
#include "ops/image/pixel_ops.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return -1;
  const inferd::ImageColor color =
      data[0] % 2 == 0 ? inferd::ImageColor::kRgb : inferd::ImageColor::kGray;
  const std::span<const uint8_t> file(data + 1, size - 1);
  inferd::ImageLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_pixels = 1 << 18;
  limits.max_side = 2048;
  const int orientation = inferd::ExifOrientationOf(file);
  if (orientation < 1 || orientation > 8) std::abort();
  absl::StatusOr<inferd::DecodedImage> image = inferd::DecodeImage(file, color, limits);
  if (!image.ok()) return 0;
  const size_t expected = static_cast<size_t>(image->width) * image->height * image->channels;
  if (image->pixels.size() != expected || image->width < 1 || image->height < 1) std::abort();
  const inferd::DecodedImage oriented = inferd::Orient(*image, orientation);
  const inferd::DecodedImage resized =
      inferd::PilBilinearResize(oriented, 1 + oriented.width % 37, 1 + (oriented.height * 3) % 41);
  (void)inferd::CenterCrop(resized, 16, 16);
  return 0;
}

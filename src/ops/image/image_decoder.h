// Image bytes (JPEG, PNG, WebP; recognised by their magic bytes, never by a Content-Type) to
// 8-bit pixels in the colours Pillow gives for Image.open(f).convert("RGB") or .convert("L"):
// gray sources replicated to RGB, alpha dropped without compositing (palette transparency
// too), 16-bit samples cut to their high byte, Adobe CMYK JPEGs through Pillow's cmyk2rgb, RGB
// to gray with Pillow's L weights. No colour management (Pillow's convert ignores ICC
// profiles and gAMA too).
//
// Every size is checked before the pixels are allocated: the file's bytes, then the width,
// height and pixel count its header declares (a 100-byte file can declare 65000 x 65000).
// A truncated or corrupt file is refused rather than padded with grey (TurboJPEG's
// STOPONWARNING), and a progressive JPEG with an unreasonable number of scans is refused
// (LIMITSCANS). Errors are InvalidArgument with what to send instead.
// Thread-safety: thread-safe (each thread keeps its own TurboJPEG handle).
#ifndef INFERD_OPS_IMAGE_IMAGE_DECODER_H_
#define INFERD_OPS_IMAGE_IMAGE_DECODER_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "ops/image/decoded_image.h"

namespace inferd {

enum class ImageColor { kRgb, kGray };

// Where the errors point: the param names that set each limit ("params.max_pixels").
struct ImageLimitNames {
  std::string max_bytes = "max_bytes";
  std::string max_pixels = "max_pixels";
  std::string max_side = "max_side";
};

// The EXIF orientation (1..8) of a JPEG (APP1) or PNG (eXIf) file; 1 when it has none.
int ExifOrientationOf(std::span<const uint8_t> file);

absl::StatusOr<DecodedImage> DecodeImage(std::span<const uint8_t> file, ImageColor color,
                                         const ImageLimits& limits,
                                         const ImageLimitNames& names = {});

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_IMAGE_DECODER_H_

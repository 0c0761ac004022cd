// Pixels decoded from an image file: 8-bit, interleaved, row-major, top row first.
#ifndef INFERD_OPS_IMAGE_DECODED_IMAGE_H_
#define INFERD_OPS_IMAGE_DECODED_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace inferd {

struct DecodedImage {
  int width = 0;
  int height = 0;
  int channels = 0;             // 1 (gray) or 3 (RGB)
  std::vector<uint8_t> pixels;  // width * height * channels

  uint8_t* row(int y) { return pixels.data() + static_cast<std::size_t>(y) * width * channels; }
  const uint8_t* row(int y) const {
    return pixels.data() + static_cast<std::size_t>(y) * width * channels;
  }
};

// Bounds checked before any pixel buffer is allocated (decompression bombs: a small file can
// declare a huge image).
struct ImageLimits {
  uint64_t max_bytes = 20u << 20;    // of the encoded file
  uint64_t max_pixels = 16'777'216;  // width * height, decoded and after resizing
  uint32_t max_side = 16384;         // width and height each
};

}  // namespace inferd

#endif  // INFERD_OPS_IMAGE_DECODED_IMAGE_H_

#include "ops/image/pil_resample.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace inferd {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double Triangle(double x) {
  if (x < 0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}

// One axis: for each output position the first source index, the count of source indices,
// and their fixed-point weights (ksize per position).
struct Coefficients {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int> weights;
};

Coefficients Precompute(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;  // the bilinear filter's support is 1
  Coefficients c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(out_size);
  c.count.resize(out_size);
  c.weights.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> k(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = Triangle((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
      const double scaled = k[x] * (1 << kPrecisionBits);
      c.weights[static_cast<size_t>(xx) * c.ksize + x] =
          static_cast<int>(k[x] < 0 ? -0.5 + scaled : 0.5 + scaled);
    }
    c.first[xx] = xmin;
    c.count[xx] = xmax;
  }
  return c;
}

uint8_t Clip8(int64_t value) {
  const int64_t shifted = value >> kPrecisionBits;
  return static_cast<uint8_t>(std::clamp<int64_t>(shifted, 0, 255));
}

// Rows [row0, row0 + out.height) of `in`, resized horizontally into `out`.
void Horizontal(const DecodedImage& in, int row0, const Coefficients& c, DecodedImage& out) {
  const int channels = in.channels;
  for (int y = 0; y < out.height; ++y) {
    const uint8_t* src = in.row(row0 + y);
    uint8_t* dst = out.row(y);
    for (int xx = 0; xx < out.width; ++xx) {
      const int* k = &c.weights[static_cast<size_t>(xx) * c.ksize];
      const int xmin = c.first[xx];
      for (int ch = 0; ch < channels; ++ch) {
        int64_t ss = int64_t{1} << (kPrecisionBits - 1);
        for (int x = 0; x < c.count[xx]; ++x) {
          ss += static_cast<int64_t>(src[(x + xmin) * channels + ch]) * k[x];
        }
        dst[xx * channels + ch] = Clip8(ss);
      }
    }
  }
}

// `in` resized vertically into `out`; `first` already relative to `in`'s first row.
void Vertical(const DecodedImage& in, const Coefficients& c, const std::vector<int>& first,
              DecodedImage& out) {
  const int row_bytes = in.width * in.channels;
  for (int yy = 0; yy < out.height; ++yy) {
    const int* k = &c.weights[static_cast<size_t>(yy) * c.ksize];
    uint8_t* dst = out.row(yy);
    for (int i = 0; i < row_bytes; ++i) {
      int64_t ss = int64_t{1} << (kPrecisionBits - 1);
      for (int y = 0; y < c.count[yy]; ++y) {
        ss += static_cast<int64_t>(in.row(first[yy] + y)[i]) * k[y];
      }
      dst[i] = Clip8(ss);
    }
  }
}

DecodedImage Blank(int width, int height, int channels) {
  DecodedImage image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<size_t>(width) * height * channels);
  return image;
}

// Columns [column0, column0 + out.width) of `in`, resized vertically into `out`; `first`
// relative to `in`'s first row.
void VerticalColumns(const DecodedImage& in, int column0, const Coefficients& c,
                     const std::vector<int>& first, DecodedImage& out) {
  const int channels = in.channels;
  const int row_bytes = out.width * channels;
  for (int yy = 0; yy < out.height; ++yy) {
    const int* k = &c.weights[static_cast<size_t>(yy) * c.ksize];
    uint8_t* dst = out.row(yy);
    for (int i = 0; i < row_bytes; ++i) {
      int64_t ss = int64_t{1} << (kPrecisionBits - 1);
      for (int y = 0; y < c.count[yy]; ++y) {
        ss += static_cast<int64_t>(in.row(first[yy] + y)[column0 * channels + i]) * k[y];
      }
      dst[i] = Clip8(ss);
    }
  }
}

}  // namespace

DecodedImage PilBilinearResize(const DecodedImage& image, int width, int height) {
  const bool horizontal = width != image.width;
  const bool vertical = height != image.height;
  if (!horizontal && !vertical) return image;
  // Pillow 13 runs the vertical pass first when the height shrinks and that pass leaves the
  // smaller intermediate image (width * source height > source width * height); otherwise
  // the horizontal one. The order changes the rounding of the intermediate 8-bit image, so
  // it is followed here too. Found by comparing Image.resize with both orders done by hand
  // over shrinking, growing and mixed sizes (tests/integration/test_pipeline_image.py checks
  // the bytes).
  if (horizontal && vertical &&
      height<image.height&& static_cast<int64_t>(width) * image.height> static_cast<int64_t>(
          image.width) *
          height) {
    const Coefficients rows = Precompute(image.height, height);
    const Coefficients columns = Precompute(image.width, width);
    const int first_column = columns.first[0];
    const int last_column = columns.first[width - 1] + columns.count[width - 1];
    DecodedImage temp = Blank(last_column - first_column, height, image.channels);
    VerticalColumns(image, first_column, rows, rows.first, temp);
    Coefficients shifted = columns;
    for (int& f : shifted.first) f -= first_column;
    DecodedImage out = Blank(width, height, image.channels);
    Horizontal(temp, 0, shifted, out);
    return out;
  }
  const Coefficients rows = Precompute(image.height, height);
  const Coefficients columns = Precompute(image.width, width);
  // The source rows the vertical pass reads.
  const int first_row = rows.first[0];
  const int last_row = rows.first[height - 1] + rows.count[height - 1];
  std::vector<int> row_first = rows.first;
  const DecodedImage* source = &image;
  DecodedImage temp;
  if (horizontal) {
    for (int& f : row_first) f -= first_row;
    temp = Blank(width, last_row - first_row, image.channels);
    Horizontal(image, first_row, columns, temp);
    source = &temp;
  }
  if (!vertical) return temp;
  DecodedImage out = Blank(width, height, image.channels);
  Vertical(*source, rows, row_first, out);
  return out;
}

}  // namespace inferd

// JPEG (libjpeg API of libjpeg-turbo) and PNG (libpng's simplified API) in memory.
#include "io/image_codec.h"

// clang-format off: jpeglib.h needs <cstdio> (FILE) included before it.
#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>
// clang-format on

#include "base/error.h"

namespace cohort {
namespace {

// libjpeg reports errors through callbacks that must not return: jump back to the decoder and
// throw from there. Between setjmp and longjmp only C structs live in the jumping function, so
// no destructor is skipped.
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void OnJpegError(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings of pixel data that ends early or is corrupt are errors: libjpeg would fill the rest
// with gray and go on, which would train on a half image (a header that claims 16384x16384 over
// 16x16 of data). So are libjpeg's other "Corrupt JPEG data" warnings (bytes between markers
// where none belong) and an inconsistent progression, which djpeg refuses too (the fuzzing
// campaign's reference, scripts/fuzz-campaign.py), though OpenCV (MXNet) decodes past them.
// Warnings that leave the pixels whole (unknown JFIF or Adobe versions) are ignored.
void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level != -1) return;
  switch (cinfo->err->msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_MUST_RESYNC: OnJpegError(cinfo);
    default: return;
  }
}

// 4-channel CMYK pixels (Adobe's inverted convention, as libjpeg returns them) into RGB or gray
// in place, with OpenCV's integer arithmetic (icvCvt_CMYK2BGR_8u_C4C3R, icvCvt_CMYK2Gray).
void CmykToRgbOrGray(int channels, Image* image) {
  const size_t n = static_cast<size_t>(image->width) * image->height;
  uint8_t* p = image->pixels.data();
  for (size_t i = 0; i < n; ++i) {
    const int k = p[4 * i + 3];
    const int r = k - ((255 - p[4 * i]) * k >> 8);
    const int g = k - ((255 - p[4 * i + 1]) * k >> 8);
    const int b = k - ((255 - p[4 * i + 2]) * k >> 8);
    if (channels == 3) {
      p[3 * i] = static_cast<uint8_t>(r);
      p[3 * i + 1] = static_cast<uint8_t>(g);
      p[3 * i + 2] = static_cast<uint8_t>(b);
    } else {  // 0.299, 0.587, 0.114 in 14-bit fixed point, rounded (OpenCV's cR, cG, cB)
      p[i] = static_cast<uint8_t>((b * 1868 + g * 9617 + r * 4899 + (1 << 13)) >> 14);
    }
  }
  image->channels = channels;
  image->pixels.resize(n * channels);
}

void DecodeJpeg(std::string_view bytes, int channels, Image* out, uint64_t max_pixels) {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = OnJpegError;
  errors.mgr.emit_message = OnJpegMessage;
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&cinfo);
    COHORT_THROW() << "JPEG image of " << bytes.size()
                   << " bytes does not decode: " << errors.message;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  jpeg_read_header(&cinfo, TRUE);
  if (uint64_t{cinfo.image_width} * cinfo.image_height > max_pixels) {
    const std::string size =
        std::to_string(cinfo.image_width) + "x" + std::to_string(cinfo.image_height);
    jpeg_destroy_decompress(&cinfo);
    COHORT_THROW() << "JPEG image of " << bytes.size() << " bytes declares " << size
                   << " pixels, more than the " << max_pixels << " an image may have";
  }
  // CMYK (and YCCK) JPEGs, which libjpeg cannot turn into RGB, are read as CMYK and converted
  // as OpenCV's decoder (MXNet's) does, after the rows are in.
  const bool cmyk = cinfo.num_components == 4;
  cinfo.out_color_space = cmyk ? JCS_CMYK : channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out->width = static_cast<int>(cinfo.output_width);
  out->height = static_cast<int>(cinfo.output_height);
  out->channels = cinfo.output_components;
  const size_t stride = static_cast<size_t>(out->width) * out->channels;
  out->pixels.resize(stride * out->height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out->pixels.data() + cinfo.output_scanline * stride;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  if (cmyk) CmykToRgbOrGray(channels, out);
}

// PNG through libpng's simplified API. An alpha channel is read and then dropped (not
// composited), as OpenCV's imdecode, which MXNet uses, does for color images.
// Gray = 0.299 R + 0.587 G + 0.114 B in 15-bit fixed point: what OpenCV asks of libpng
// (png_set_rgb_to_gray with 0.299, 0.587) when MXNet decodes a color PNG as gray.
constexpr int kGrayRed = 9798, kGrayGreen = 19235, kGrayBlue = 32768 - 9798 - 19235;

// libpng's low-level API reports errors through a callback that must not return (as libjpeg's).
struct PngReader {
  const unsigned char* data;
  size_t size, at;
  char message[200];
};

[[noreturn]] void OnPngError(png_structp png, png_const_charp message) {
  auto* reader = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(reader->message, sizeof(reader->message), "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

void ReadPngBytes(png_structp png, png_bytep into, png_size_t n) {
  auto* reader = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > reader->size - reader->at) png_error(png, "the data ends early");
  std::memcpy(into, reader->data + reader->at, n);
  reader->at += n;
}

// A PNG of 16-bit samples as OpenCV's decoder (MXNet's) reads it into 8 bits: the low byte
// dropped (png_set_strip_16, not libpng's sRGB encoding of linear light, which the simplified
// API applies), alpha dropped, color weighed into gray by libpng with 0.299 and 0.587.
void DecodePng16(std::string_view bytes, int channels, Image* out) {
  PngReader reader{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0, ""};
  png_structp png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, OnPngError, OnPngWarning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    COHORT_THROW() << "PNG image of " << bytes.size() << " bytes: libpng could not start";
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    COHORT_THROW() << "PNG image of " << bytes.size()
                   << " bytes does not decode: " << reader.message;
  }
  png_set_read_fn(png, &reader, ReadPngBytes);
  png_read_info(png, info);
  const int color_type = png_get_color_type(png, info);
  png_set_strip_16(png);
  if (color_type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) && channels == 1) {
    png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  } else if (!(color_type & PNG_COLOR_MASK_COLOR) && channels == 3) {
    png_set_gray_to_rgb(png);
  }
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out->width = static_cast<int>(png_get_image_width(png, info));
  out->height = static_cast<int>(png_get_image_height(png, info));
  out->channels = channels;
  const size_t stride = static_cast<size_t>(out->width) * channels;
  if (png_get_rowbytes(png, info) != stride) png_error(png, "unexpected row size");
  out->pixels.resize(stride * out->height);
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < out->height; ++y) {
      png_read_row(png, out->pixels.data() + static_cast<size_t>(y) * stride, nullptr);
    }
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
}

// libpng's simplified reader stops at the image data; OpenCV's decoder (MXNet's) goes on to
// png_read_end, which refuses a file whose IEND chunk is missing or fails its CRC (a truncated
// or damaged file: the fuzzing campaign found such files decoded). The chunks before the image
// data are libpng's to check; this walks the chunk headers to the IEND.
void CheckPngEnd(std::string_view bytes) {
  constexpr uint32_t kIendCrc = 0xAE426082u;  // the CRC of "IEND" with no data
  auto u32 = [&](size_t at) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + at;
    return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
  };
  size_t at = 8;
  while (at + 8 <= bytes.size()) {
    const uint32_t length = u32(at);
    const std::string_view type = bytes.substr(at + 4, 4);
    if (length > bytes.size() || at + 12 + length > bytes.size()) break;
    if (type == "IEND") {
      COHORT_CHECK(length == 0 && u32(at + 8) == kIendCrc)
          << "PNG image of " << bytes.size() << " bytes does not decode: IEND: CRC error";
      return;
    }
    at += 12 + length;
  }
  COHORT_THROW() << "PNG image of " << bytes.size()
                 << " bytes does not decode: the file ends before its IEND chunk";
}

void DecodePng(std::string_view bytes, int channels, Image* out, uint64_t max_pixels) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  auto fail = [&](const char* stage) {
    const std::string message = image.message;
    png_image_free(&image);
    COHORT_THROW() << "PNG image of " << bytes.size() << " bytes does not decode (" << stage
                   << "): " << message;
  };
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) fail("header");
  if (uint64_t{image.width} * image.height > max_pixels) {
    const std::string size = std::to_string(image.width) + "x" + std::to_string(image.height);
    png_image_free(&image);
    COHORT_THROW() << "PNG image of " << bytes.size() << " bytes declares " << size
                   << " pixels, more than the " << max_pixels << " an image may have";
  }
  if (image.format & PNG_FORMAT_FLAG_LINEAR) {  // a 16-bit file (the size is checked above)
    png_image_free(&image);
    return DecodePng16(bytes, channels, out);
  }
  const bool alpha = image.format & PNG_FORMAT_FLAG_ALPHA;
  // A color image read as gray: read RGB, then weigh it as OpenCV does (libpng's own conversion
  // works on linear light and gave values up to 9 levels off MXNet's).
  const bool to_gray = channels == 1 && (image.format & PNG_FORMAT_FLAG_COLOR);
  image.format = channels == 1 && !to_gray ? (alpha ? PNG_FORMAT_GA : PNG_FORMAT_GRAY)
                                           : (alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB);
  const int read_channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  out->width = static_cast<int>(image.width);
  out->height = static_cast<int>(image.height);
  out->channels = channels;
  out->pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out->pixels.data(), 0, nullptr)) fail("data");
  CheckPngEnd(bytes);
  if (read_channels != channels) {  // drop the alpha channel, or weigh RGB into gray, in place
    const size_t n = static_cast<size_t>(out->width) * out->height;
    uint8_t* p = out->pixels.data();
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* in = p + i * read_channels;
      if (to_gray) {
        p[i] = static_cast<uint8_t>((in[0] * kGrayRed + in[1] * kGrayGreen + in[2] * kGrayBlue +
                                     (1 << 14)) >> 15);
      } else {
        for (int c = 0; c < channels; ++c) p[i * channels + c] = in[c];
      }
    }
    out->pixels.resize(n * channels);
  }
}

}  // namespace

void DecodeImage(std::string_view bytes, int channels, Image* out, uint64_t max_pixels) {
  COHORT_CHECK(channels == 1 || channels == 3)
      << "images decode to 1 (gray) or 3 (RGB) channels, not " << channels;
  max_pixels = std::min(max_pixels, kMaxImagePixels);
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) {
    DecodeJpeg(bytes, channels, out, max_pixels);
  } else if (bytes.size() >= 8 && png_sig_cmp(b, 0, 8) == 0) {
    DecodePng(bytes, channels, out, max_pixels);
  } else {
    COHORT_THROW() << "image of " << bytes.size() << " bytes is neither JPEG nor PNG (its first "
                   << "bytes are not either format's signature)";
  }
}

std::string EncodeJpeg(const Image& image, int quality) {
  COHORT_CHECK(image.channels == 1 || image.channels == 3)
      << "JPEG encodes 1 or 3 channels, not " << image.channels;
  COHORT_CHECK(quality >= 1 && quality <= 100) << "JPEG quality " << quality << " is not in 1..100";
  jpeg_compress_struct cinfo;
  JpegErrors errors;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  cinfo.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = OnJpegError;
  if (setjmp(errors.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    COHORT_THROW() << "JPEG encoding failed: " << errors.message;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = image.channels;
  cinfo.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const size_t stride = static_cast<size_t>(image.width) * image.channels;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(image.pixels.data()) + cinfo.next_scanline * stride;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

std::string EncodePng(const Image& image) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  switch (image.channels) {
    case 1: png.format = PNG_FORMAT_GRAY; break;
    case 3: png.format = PNG_FORMAT_RGB; break;
    case 4: png.format = PNG_FORMAT_RGBA; break;
    default: COHORT_THROW() << "PNG encodes 1, 3 or 4 channels, not " << image.channels;
  }
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&png, nullptr, &size, 0, image.pixels.data(), 0, nullptr)) {
    COHORT_THROW() << "PNG encoding failed: " << png.message;
  }
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&png, out.data(), &size, 0, image.pixels.data(), 0, nullptr)) {
    COHORT_THROW() << "PNG encoding failed: " << png.message;
  }
  out.resize(size);
  return out;
}

// Source x = (x + 0.5) · in/out - 0.5, clamped to the edge pixels (OpenCV's mapping).
void ResizeImage(const Image& in, int width, int height, Image* out) {
  out->width = width;
  out->height = height;
  out->channels = in.channels;
  out->pixels.resize(static_cast<size_t>(width) * height * in.channels);
  struct Tap {
    int i0, i1;
    float w1;
  };
  auto taps = [](int in_size, int out_size, std::vector<Tap>* t) {
    t->resize(out_size);
    const double ratio = static_cast<double>(in_size) / out_size;
    for (int o = 0; o < out_size; ++o) {
      const double f = (o + 0.5) * ratio - 0.5;
      int i = static_cast<int>(std::floor(f));
      float w = static_cast<float>(f - i);
      if (i < 0) i = 0, w = 0;
      if (i >= in_size - 1) i = in_size - 1, w = 0;
      (*t)[o] = {i, std::min(i + 1, in_size - 1), w};
    }
  };
  thread_local std::vector<Tap> xs, ys;
  taps(in.width, width, &xs);
  taps(in.height, height, &ys);
  const int c = in.channels;
  for (int y = 0; y < height; ++y) {
    const uint8_t* r0 = &in.pixels[static_cast<size_t>(ys[y].i0) * in.width * c];
    const uint8_t* r1 = &in.pixels[static_cast<size_t>(ys[y].i1) * in.width * c];
    const float wy = ys[y].w1;
    uint8_t* dst = &out->pixels[static_cast<size_t>(y) * width * c];
    for (int x = 0; x < width; ++x) {
      const Tap& t = xs[x];
      for (int k = 0; k < c; ++k) {
        const float top = r0[t.i0 * c + k] + (r0[t.i1 * c + k] - r0[t.i0 * c + k]) * t.w1;
        const float bottom = r1[t.i0 * c + k] + (r1[t.i1 * c + k] - r1[t.i0 * c + k]) * t.w1;
        const float v = top + (bottom - top) * wy;
        dst[x * c + k] = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  }
}

void ResizeShorterSide(const Image& in, int64_t shorter, Image* out, uint64_t max_pixels) {
  const int64_t w = in.width, h = in.height;
  const int64_t nw = h > w ? shorter : shorter * w / h;
  const int64_t nh = h > w ? shorter * h / w : shorter;
  max_pixels = std::min(max_pixels, kMaxImagePixels);
  // Refused before anything is allocated: a thin image resized by its shorter side grows fast.
  if (static_cast<double>(nw) * static_cast<double>(nh) > static_cast<double>(max_pixels)) {
    COHORT_THROW() << "resizing a " << w << "x" << h << " image to a shorter side of " << shorter
                   << " makes it " << nw << "x" << nh << ", more than the " << max_pixels
                   << " pixels an image may have";
  }
  ResizeImage(in, static_cast<int>(nw), static_cast<int>(nh), out);
}

}  // namespace cohort

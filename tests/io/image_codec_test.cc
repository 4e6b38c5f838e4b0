// JPEG and PNG through io/image_codec: round trips, conversions, and bad bytes as errors.
#include "io/image_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "ndarray/params_io.h"

namespace cohort {
namespace {

// A smooth color pattern (JPEG keeps it close) of the given size and channel count.
Image Pattern(int width, int height, int channels) {
  Image image{width, height, channels, {}};
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        image.pixels.push_back(static_cast<uint8_t>(x * 150 / width + y * 60 / height + c * 15));
      }
    }
  }
  return image;
}

std::string ErrorOf(std::string_view bytes, int channels = 3) {
  Image out;
  try {
    DecodeImage(bytes, channels, &out);
  } catch (const Error& e) {
    return e.message();
  }
  return "(no error)";
}

TEST(ImageCodec, PngRoundTripsExactly) {
  for (int channels : {1, 3}) {
    const Image image = Pattern(37, 21, channels);
    Image back;
    DecodeImage(EncodePng(image), channels, &back);
    EXPECT_EQ(back.width, 37);
    EXPECT_EQ(back.height, 21);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, image.pixels) << channels << " channels";
  }
}

TEST(ImageCodec, PngAlphaIsDroppedNotComposited) {
  Image rgba = Pattern(8, 4, 4);
  for (size_t i = 3; i < rgba.pixels.size(); i += 4) rgba.pixels[i] = 0;  // fully transparent
  Image rgb;
  DecodeImage(EncodePng(rgba), 3, &rgb);
  ASSERT_EQ(rgb.pixels.size(), 8u * 4 * 3);
  for (size_t i = 0; i < 32; ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(rgb.pixels[i * 3 + c], rgba.pixels[i * 4 + c]);
  }
}

TEST(ImageCodec, JpegRoundTripsClosely) {
  const Image image = Pattern(64, 48, 3);
  const std::string jpeg = EncodeJpeg(image, 95);
  Image back;
  DecodeImage(jpeg, 3, &back);
  ASSERT_EQ(back.pixels.size(), image.pixels.size());
  double error = 0;
  for (size_t i = 0; i < image.pixels.size(); ++i) {
    error += std::abs(int{back.pixels[i]} - int{image.pixels[i]});
  }
  EXPECT_LT(error / image.pixels.size(), 3.0);
  EXPECT_GT(error, 0.0);  // it is lossy: the decoder really ran
  Image gray;             // the same bytes to one channel
  DecodeImage(jpeg, 1, &gray);
  EXPECT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.pixels.size(), 64u * 48);
}

TEST(ImageCodec, GrayJpegDecodesToEqualRgbChannels) {
  Image rgb;
  DecodeImage(EncodeJpeg(Pattern(16, 16, 1), 90), 3, &rgb);
  ASSERT_EQ(rgb.channels, 3);
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) {
    EXPECT_EQ(rgb.pixels[i], rgb.pixels[i + 1]);
    EXPECT_EQ(rgb.pixels[i], rgb.pixels[i + 2]);
  }
}

// Images MXNet 1.9.1 decodes its own way (scripts/make_mxnet_decode_fixtures.py): a CMYK JPEG,
// and PNGs of 16-bit samples (the low byte dropped, not gamma-encoded), as color and as gray.
TEST(ImageCodec, CmykJpegsAnd16BitPngsDecodeAsMXNetDoes) {
  const std::string dir = std::string(COHORT_TEST_DATA_DIR) + "/image_decode/";
  const ParamsFile expected = LoadParamsFile(dir + "expected.params");
  int compared = 0;
  for (const char* file : {"cmyk.jpg", "rgb16.png", "gray16.png"}) {
    std::ifstream in(dir + file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bytes.empty()) << file;
    for (int channels : {3, 1}) {
      SCOPED_TRACE(std::string(file) + (channels == 3 ? " as color" : " as gray"));
      const std::string key = std::string(file) + (channels == 3 ? ":color" : ":gray");
      const auto at = std::find(expected.names.begin(), expected.names.end(), key);
      ASSERT_NE(at, expected.names.end()) << key;
      const NDArray& want = expected.arrays[at - expected.names.begin()];
      Image got;
      DecodeImage(bytes, channels, &got);
      ASSERT_EQ(want.shape(), Shape({got.height, got.width, got.channels}));
      const std::vector<uint8_t> pixels = want.ToVector<uint8_t>();
      EXPECT_EQ(got.pixels, pixels);
      ++compared;
    }
    // Cut short, each is an error naming what stopped it (libpng's low-level reader for the
    // 16-bit ones), never a crash.
    for (int channels : {3, 1}) {
      EXPECT_NE(ErrorOf(std::string_view(bytes).substr(0, bytes.size() / 2), channels),
                "(no error)")
          << file;
    }
  }
  EXPECT_EQ(compared, 6);
}

// A JPEG whose header claims more pixels than its data holds (here 64x64 over 16x16 of data) is
// a bad image, not one served half gray.
TEST(ImageCodec, AJpegWithLessDataThanItsHeaderClaimsIsAnError) {
  std::string bytes = EncodeJpeg(Pattern(16, 16, 3), 90);
  const size_t sof = bytes.find("\xff\xc0");
  ASSERT_NE(sof, std::string::npos);
  bytes[sof + 5] = 0, bytes[sof + 6] = 64;  // height
  bytes[sof + 7] = 0, bytes[sof + 8] = 64;  // width
  for (int channels : {3, 1}) {
    EXPECT_NE(ErrorOf(bytes, channels).find("Corrupt JPEG data"), std::string::npos)
        << ErrorOf(bytes, channels);
  }
}

// Bytes between markers where none belong are "Corrupt JPEG data" to libjpeg, a warning djpeg
// refuses the file over: a bad image here too (the fuzzing campaign found such files packed).
TEST(ImageCodec, ExtraneousBytesBeforeAMarkerAreAnError) {
  std::string bytes = EncodeJpeg(Pattern(16, 16, 3), 90);
  const size_t sos = bytes.find("\xff\xda");
  ASSERT_NE(sos, std::string::npos);
  bytes.insert(sos, "\x12\x34\x56");  // before the start of scan
  EXPECT_NE(ErrorOf(bytes).find("extraneous bytes before marker 0xda"), std::string::npos)
      << ErrorOf(bytes);
}

// A PNG whose IEND chunk is missing or damaged is refused, as OpenCV's decoder (MXNet's, which
// reads to the end) refuses it; the fuzzing campaign found both decoded.
TEST(ImageCodec, APngWithoutAWholeIendIsAnError) {
  const std::string bytes = EncodePng(Pattern(8, 6, 3));
  ASSERT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND");
  std::string damaged = bytes;
  damaged[damaged.size() - 1] ^= 0x20;  // the IEND CRC
  EXPECT_NE(ErrorOf(damaged).find("IEND: CRC error"), std::string::npos) << ErrorOf(damaged);
  EXPECT_NE(ErrorOf(bytes.substr(0, bytes.size() - 12)).find("ends before its IEND"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(bytes), "(no error)");
}

// A thin image resized by its shorter side is refused before the resize allocates, naming the
// size it would have.
TEST(ImageCodec, AResizeToMorePixelsThanAnImageMayHaveIsRefused) {
  Image out;
  try {
    ResizeShorterSide(Pattern(1000, 2, 3), 16000, &out);
    FAIL() << "an 8000000x16000 resize was made";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("resizing a 1000x2 image to a shorter side of 16000 makes it "
                               "8000000x16000, more than the 268435456 pixels"),
              std::string::npos)
        << e.message();
  }
  ResizeShorterSide(Pattern(30, 20, 3), 10, &out);
  EXPECT_EQ(out.width, 15);
  EXPECT_EQ(out.height, 10);
}

TEST(ImageCodec, BadBytesAreErrorsNeverCrashes) {
  EXPECT_NE(ErrorOf("GIF89a....").find("neither JPEG nor PNG"), std::string::npos);
  EXPECT_NE(ErrorOf("").find("neither JPEG nor PNG"), std::string::npos);
  const std::string jpeg = EncodeJpeg(Pattern(64, 64, 3), 90);
  std::string e = ErrorOf(jpeg.substr(0, jpeg.size() / 2));
  EXPECT_NE(e.find("JPEG image of"), std::string::npos) << e;
  EXPECT_NE(e.find("does not decode"), std::string::npos) << e;
  e = ErrorOf(jpeg.substr(0, 20));  // inside the header
  EXPECT_NE(e.find("JPEG image of 20 bytes does not decode"), std::string::npos) << e;
  std::string garbled = jpeg;
  for (size_t i = 2; i < 200; ++i) garbled[i] = static_cast<char>(i * 13);
  e = ErrorOf(garbled);
  EXPECT_NE(e.find("JPEG"), std::string::npos) << e;
  const std::string png = EncodePng(Pattern(64, 64, 3));
  e = ErrorOf(png.substr(0, png.size() / 2));
  EXPECT_NE(e.find("PNG image of"), std::string::npos) << e;
  e = ErrorOf(png.substr(0, 12));
  EXPECT_NE(e.find("PNG image of 12 bytes does not decode"), std::string::npos) << e;
  EXPECT_THROW(EncodeJpeg(Pattern(4, 4, 3), 0), Error);
}

}  // namespace
}  // namespace cohort

// SPDX-License-Identifier: Apache-2.0
// The golden-vector text format, manifests and companions: what parses, and that every malformed,
// truncated or inconsistent input fails with a message naming the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "blockscale/golden/file.h"
#include "blockscale/golden/json_text.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/npy.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/set.h"
#include "blockscale/golden/verify.h"
#include "golden/helpers.h"

namespace blockscale::golden {
namespace {

// A small valid conversion file: f32 -> e2m1 under IEEE round-to-nearest-even.
const std::string kConvertHeader =
    "@golden 1\n"
    "@generator blockscale 0.1.0\n"
    "@kind conversion\n"
    "@op convert f32 e2m1\n"
    "@mode ieee_rn preset=ieee(nearest_even) rounding=nearest_even overflow=ieee nan=default zero=min_code "
    "negative=nan sr_bits=32 e8m0_subnormal_grid=0\n"
    "@fields x:f32 -> ieee_rn:e2m1\n";

std::string convert_file(const std::string& cases_line, const std::string& body) {
  return kConvertHeader + cases_line + body;
}

TEST(GoldenFormat, ParsesAndVerifiesAHandWrittenFile) {
  // 1.0 -> 0x2, 1.25 (a tie between 1 and 1.5) -> 1.0 (even), 7.0 -> overflow under IEEE RNE. e2m1 has
  // no Inf and no NaN: the overflow value is +max (0x7 = 6.0).
  const std::string text = convert_file("@cases 3\n", "3f800000 2\n3fa00000 2\n40e00000 7\n");
  const GoldenFile f = parse_golden(text, "hand.txt");
  EXPECT_EQ(f.cases(), 3u);
  EXPECT_EQ(f.header.kind, SetKind::conversion);
  ASSERT_EQ(f.header.fields.size(), 2u);
  EXPECT_EQ(f.header.fields[1].name, "ieee_rn");
  EXPECT_TRUE(f.header.fields[1].output);
  EXPECT_EQ(f.case_words(1)[0], 0x3fa00000u);
  const FileReport r = verify_golden(f);
  EXPECT_TRUE(r.ok()) << r.error << (r.first.empty() ? "" : r.first[0].detail);
  EXPECT_EQ(r.operation, "convert:f32:e2m1");
  // Writing it back gives the same cases.
  const GoldenFile g = parse_golden(format_golden(f), "again.txt");
  EXPECT_EQ(g.words, f.words);
}

TEST(GoldenFormat, ReportsAWrongExpectedResultWithItsLine) {
  const std::string text = convert_file("@cases 2\n", "3f800000 2\n3fa00000 3\n");
  const FileReport r = verify_golden(parse_golden(text, "wrong.txt"));
  EXPECT_EQ(r.cases, 2u);
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].line, 9u);
  EXPECT_EQ(r.first[0].index, 1u);
  EXPECT_NE(r.first[0].detail.find("ieee_rn: expected 3, blockscale gives 2"), std::string::npos)
      << r.first[0].detail;
}

struct Malformed {
  const char* what;
  std::string text;
  std::size_t line;     // expected line of the error (0: the file as a whole)
  const char* message;  // expected part of the message
};

// Test names print the description, not the bytes.
void PrintTo(const Malformed& m, std::ostream* os) { *os << m.what; }

class GoldenMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(GoldenMalformed, FailsWithFileLineAndReason) {
  const Malformed& m = GetParam();
  try {
    const GoldenFile f = parse_golden(m.text, "bad.txt");
    // Syntax fine: the semantic check must catch it.
    const auto op = make_operation(f);
    FAIL() << m.what << ": accepted";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.file(), "bad.txt");
    EXPECT_EQ(e.line(), m.line) << e.what();
    // what() is "<file>:<line>: <message>", the line left out for the file as a whole (line 0).
    EXPECT_EQ(std::string(e.what()),
              "bad.txt" + (m.line > 0 ? ":" + std::to_string(m.line) : std::string()) + ": " + e.message());
    EXPECT_NE(std::string(e.what()).find(m.message), std::string::npos) << m.what << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("bad.txt", 0), 0u) << e.what();
  }
}

const std::string kMode =
    "@mode ieee_rn preset=ieee(nearest_even) rounding=nearest_even overflow=ieee nan=default zero=min_code "
    "negative=nan "
    "sr_bits=32 e8m0_subnormal_grid=0\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, GoldenMalformed,
    ::testing::Values(
        Malformed{"empty", "", 0, "empty file"},
        Malformed{"not golden", "hello\n", 1, "first line must be '@golden 1'"},
        Malformed{"version 2", "@golden 2\n", 1, "unsupported golden format version"},
        Malformed{"comment before the magic line", "# hello\n@golden 1\n", 1, "first line must be '@golden 1'"},
        Malformed{"non-ASCII", "@golden 1\n@generator caf\xC3\xA9\n", 2, "non-ASCII byte 0xC3"},
        Malformed{"unknown data", "@golden 1\n@data bogus\n", 2, "@data 'bogus' is not one of"},
        Malformed{"hardware with a seed",
                  "@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n@seed 3\n@data hardware\n"
                  "@fields rows:u64 cols:u64 -> offset:u64\n@cases 0\n",
                  0, "@seed with @data hardware"},
        Malformed{"u64 leading zero",
                  "@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n"
                  "@fields a:u64 -> b:u64\n@cases 1\n01 2\n",
                  7, "'01' has a leading zero"},
        // 112 bytes that declare 65536 cases of 2^18 words: refused as what it is (the words are
        // not there), without reserving 40 GiB first.
        Malformed{"declared size far beyond the text",
                  "@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n"
                  "@fields a:f32[65536] -> d:f32[16384]\n@cases 65536\n0\n",
                  7, "expected 2 fields"},
        Malformed{"bad hex", convert_file("@cases 1\n", "3f80zz00 2\n"), 8, "is not hexadecimal"},
        Malformed{"field count", convert_file("@cases 1\n", "3f800000 2 2\n"), 8, "expected 2 fields"},
        Malformed{"field length", convert_file("@cases 1\n", "3f80000 2\n"), 8, "needs 8 hex digits, got 7"},
        Malformed{"truncated", convert_file("@cases 3\n", "3f800000 2\n"), 0,
                  "file ends after 1 cases, but @cases says 3"},
        Malformed{"extra case", convert_file("@cases 1\n", "3f800000 2\n3f800000 2\n"), 9,
                  "more cases than @cases"},
        Malformed{"crlf", convert_file("@cases 1\r\n", "3f800000 2\n"), 7, "carriage return"},
        Malformed{"conversion without a mode",
                  "@golden 1\n@generator x\n@kind conversion\n@op convert f32 e4m3\n@fields x:f32 -> d:e4m3\n"
                  "@cases 0\n",
                  0, "a conversion file needs at least one @mode line"},
        Malformed{"unknown key", "@golden 1\n@colour blue\n", 2, "unknown header key '@colour'"},
        Malformed{"repeated kind", "@golden 1\n@kind layout\n@kind layout\n", 3, "@kind appears twice"},
        Malformed{"unknown kind", "@golden 1\n@kind poetry\n", 2, "unknown @kind 'poetry'"},
        Malformed{
            "missing cases",
            "@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n@fields a:u64 -> b:u64\n1 2\n",
            6, "@cases is missing"},
        Malformed{"header after cases", convert_file("@cases 1\n", "3f800000 2\n@seed 3\n"), 9,
                  "header line after the first case"},
        Malformed{"bad fields", "@golden 1\n@fields a:e9m9 -> b:f32\n", 2, "unknown type 'e9m9'"},
        Malformed{"no arrow", "@golden 1\n@fields a:f32 b:f32\n", 2, "no '->'"},
        Malformed{"cases not a number", "@golden 1\n@cases 1e3\n", 2, "@cases must be a decimal integer"},
        Malformed{"unknown op",
                  "@golden 1\n@generator x\n@kind instruction\n@op sm_99 mma.fancy m1n1k1 f32 f32 f32\n"
                  "@fields a:f32 -> d:f32\n@cases 0\n",
                  4, "not an instruction of the emulator table"},
        Malformed{"inconsistent fields",
                  "@golden 1\n@generator x\n@kind layout\n@op scale_layout tiled_128x4\n"
                  "@fields rows:u64 cols:u64 -> offset:u64\n@cases 0\n",
                  5, "do not match the operation"},
        Malformed{"preset changed",
                  "@golden 1\n@generator x\n@kind conversion\n@op convert f32 e4m3\n"
                  "@mode cuda preset=cuda(rounding=nearest_even,overflow=saturate) rounding=nearest_even "
                  "overflow=saturate "
                  "nan=7f/xor_sign zero=min_code negative=nan sr_bits=32 e8m0_subnormal_grid=0\n@fields "
                  "x:f32 -> cuda:e4m3\n@cases 0\n",
                  5, "differ from what cuda(rounding=nearest_even,overflow=saturate) gives now"},
        Malformed{"unknown layout",
                  "@golden 1\n@generator x\n@kind layout\n@op scale_layout spiral\n"
                  "@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "spiral"},
        Malformed{"unknown recipe",
                  "@golden 1\n@generator x\n@kind quantization\n@op quantize mxfp4 recipe=guess\n"
                  "@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "unknown quantization recipe 'guess'"},
        Malformed{"gemm spec",
                  "@golden 1\n@generator x\n@kind gemm\n@op gemm m=2 n=2 k=0 schedule=chain interval=4 "
                  "fma=scale_product c=accumulator split_k=1 reduction=sequential instruction=sm_90a "
                  "wgmma.mma_async m64n8k32 f32 e4m3 e4m3\n"
                  "@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "k=0 is outside 1..4096"},
        Malformed{"fp8 recipe",
                  "@golden 1\n@generator x\n@kind quantization\n@op quantize fp8_e5m2 recipe=deepgemm\n"
                  "@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "deepgemm quantizes to float8_e4m3fn only"},
        Malformed{
            "fp8 recipe options",
            "@golden 1\n@generator x\n@kind quantization\n@op quantize fp8_e4m3 recipe=torchao clamp=1\n"
            "@fields a:u64 -> b:u64\n@cases 0\n",
            4, "expected exactly 'quantize fp8_e4m3 recipe=torchao'"},
        Malformed{"fp8 quantize fields",
                  "@golden 1\n@generator x\n@kind quantization\n@op quantize fp8_e4m3 recipe=torchao\n"
                  "@fields x:f32[32] -> s:f32 q:e4m3[32]\n@cases 0\n",
                  5, "do not match the operation"},
        Malformed{"library schedule changed",
                  "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=288 library=cublaslt "
                  "fast_accum=0 scale_a=1x128 scale_b=128x128 a=e4m3 b=e4m3 interval=4 scales=promotion_fma "
                  "fma=scale_b_first exchanged=0\n@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "differs from the library's row in the emulator table now"},
        Malformed{"library row not measured",
                  "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=288 library=cublaslt "
                  "fast_accum=1 scale_a=1x128 scale_b=128x128 a=e4m3 b=e4m3 interval=0 scales=promotion_fma "
                  "fma=scale_product exchanged=0\n@fields a:u64 -> b:u64\n@cases 0\n",
                  4, "was not measured with A 1x128 x B 128x128"},
        Malformed{
            "library e5m2 x e5m2",
            "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=288 library=torch_scaled_mm "
            "fast_accum=0 scale_a=tensor scale_b=tensor a=e5m2 b=e5m2 interval=4 "
            "scales=epilogue_scale_product fma=scale_product exchanged=0\n@fields a:u64 -> b:u64\n@cases 0\n",
            4, "e5m2 x e5m2"},
        Malformed{
            "library split of a row never seen splitting",
            "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=640 library=torch_scaled_mm "
            "fast_accum=0 scale_a=row scale_b=row a=e4m3 b=e4m3 interval=4 scales=epilogue_b_first "
            "fma=scale_product exchanged=0 split_k=2 split_tile=128\n@fields a:u64 -> b:u64\n@cases 0\n",
            4, "split_k=2: torch_scaled_mm row x row was never seen splitting K"},
        Malformed{
            "library split tile changed",
            "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=640 library=cublaslt "
            "fast_accum=0 scale_a=1x128 scale_b=128x128 a=e4m3 b=e4m3 interval=4 scales=promotion_fma "
            "fma=scale_product exchanged=0 split_k=2 split_tile=128\n@fields a:u64 -> b:u64\n@cases 0\n",
            4, "split_tile=512"},
        Malformed{
            "library split count 1",
            "@golden 1\n@generator x\n@kind gemm\n@op fp8_scaled_gemm m=2 n=2 k=640 library=cublaslt "
            "fast_accum=0 scale_a=tensor scale_b=tensor a=e4m3 b=e4m3 interval=4 "
            "scales=epilogue_scale_product "
            "fma=scale_product exchanged=0 split_k=1 split_tile=128\n@fields a:u64 -> b:u64\n@cases 0\n",
            4, "split_k=1 is outside 2..64"}),
    [](const ::testing::TestParamInfo<Malformed>& i) {
      std::string n = i.param.what;
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

// An element beyond its type: e2m3 codes take two hex digits but only 6 bits.
TEST(GoldenFormat, ElementRangeIsChecked) {
  const std::string text =
      "@golden 1\n@generator x\n@kind layout\n@op pack fp6_dense e2m3\n"
      "@fields codes:e2m3[16] -> bytes:u8[12]\n@cases 1\n"
      "40000000000000000000000000000000 000000000000000000000000\n";
  try {
    (void)parse_golden(text, "range.txt");
    FAIL() << "a 0x40 e2m3 code was accepted";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.line(), 7u);
    EXPECT_NE(std::string(e.what()).find("element 0: '40' is not a e2m3 value (at most 0x3f)"),
              std::string::npos)
        << e.what();
  }
}

TEST(GoldenFormat, ACaseThatCannotBeComputedIsAMismatchNotACrash) {
  // r = 5 is outside a 3 x 5 matrix's rows.
  const std::string text =
      "@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n"
      "@fields rows:u64 cols:u64 r:u64 c:u64 -> size:u64 offset:u64\n@cases 1\n3 5 5 0 f 0\n";
  const FileReport r = verify_golden(parse_golden(text, "oob.txt"));
  EXPECT_EQ(r.mismatches, 1u);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_NE(r.first[0].detail.find("cannot compute"), std::string::npos) << r.first[0].detail;
}

// A case of an fp8 quantization file whose elements exceed the group's amax g, or that holds a NaN,
// cannot be computed: a mismatch that names the rule, not a crash.
TEST(GoldenFormat, Fp8QuantizationCasesOutsideTheRecipeAreNamed) {
  const std::string header =
      "@golden 1\n@generator x\n@kind quantization\n@op quantize fp8_e4m3 recipe=deepgemm\n"
      "@fields g:f32 x:f32[32] -> s:f32 q:e4m3[32]\n@cases 1\n";
  const std::string rest = std::string(31 * 8, '0') + " 3b124925 " + std::string(64, '0') + "\n";
  // g = 1.0, x[0] = 2.0.
  FileReport r = verify_golden(parse_golden(header + "3f800000 40000000" + rest, "over.txt"));
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_NE(r.first[0].detail.find("x[0] = 40000000 exceeds the group's amax g = 3f800000"),
            std::string::npos)
      << r.first[0].detail;
  r = verify_golden(parse_golden(header + "3f800000 7fc00000" + rest, "nan.txt"));
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_NE(r.first[0].detail.find("every input must be finite"), std::string::npos) << r.first[0].detail;
  r = verify_golden(parse_golden(header + "bf800000 00000000" + rest, "negative.txt"));
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_NE(r.first[0].detail.find("g (the group's amax) must be a finite fp32 value >= +0"),
            std::string::npos)
      << r.first[0].detail;
  // The same case with x[0] = 1.0 = g computes: sf = 1 * fp32(1/448), whose bits are 3b124925, and
  // the element 1.0 * fp32(1 / sf) rounds to 448 (0x7e).
  const std::string ok =
      "3f800000 3f800000" + std::string(31 * 8, '0') + " 3b124925 7e" + std::string(62, '0') + "\n";
  r = verify_golden(parse_golden(header + ok, "ok.txt"));
  EXPECT_EQ(r.mismatches, 0u) << (r.first.empty() ? "" : r.first[0].detail);
}

// JSON string literals (golden/json_text.h). The ill-formed UTF-8 examples are those of the Unicode
// Standard 15.0, section 3.9 ("U+FFFD Substitution of Maximal Subparts", tables 3-8 to 3-11), with
// the U+FFFD count each one gives there.
TEST(GoldenJsonText, EscapesAndReplacesIllFormedUtf8) {
  const auto bytes = [](std::initializer_list<int> b) {
    std::string s;
    for (int c : b) s += static_cast<char>(c);
    return s;
  };
  const std::string r = "\\ufffd";
  const std::pair<std::string, std::string> cases[] = {
      {"plain", "plain"},
      {"a\"b\\c/d", "a\\\"b\\\\c/d"},
      {std::string("\n\t\r\x01\x1f\x7f", 6) + std::string(1, '\0'), "\\n\\t\\u000d\\u0001\\u001f\x7f\\u0000"},
      // Well-formed: 2, 3 and 4 bytes, the ends of each range, U+FFFD itself.
      {"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbd\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
       "\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbd\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"},
      // Table 3-8: a truncated 4-byte and 3-byte sequence, a truncated 2-byte one, lone continuations.
      {bytes({0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64}),
       "a" + r + r + r + "b" + r + "c" + r + r + "d"},
      // Table 3-9: bytes that begin no sequence (overlong forms): one U+FFFD each.
      {bytes({0xC0, 0xAF, 0xE0, 0x80, 0xBF, 0xF0, 0x81, 0x82, 0x41}), r + r + r + r + r + r + r + r + "A"},
      // Table 3-10: surrogates.
      {bytes({0xED, 0xA0, 0x80, 0xED, 0xBF, 0xBF, 0xED, 0xAF, 0x41}), r + r + r + r + r + r + r + r + "A"},
      // Table 3-11: above U+10FFFF, FF, lone continuations.
      {bytes({0xF4, 0x91, 0x92, 0x93, 0xFF, 0x41, 0x80, 0xBF, 0x42}), r + r + r + r + r + "A" + r + r + "B"},
      // Truncated at the end of the string.
      {bytes({0x41, 0xF0, 0x9F, 0x98}), "A" + r},
      {bytes({0xE2, 0x82}), r},
  };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(json_escape(in), want) << json_string(in);
    EXPECT_EQ(json_string(in), "\"" + want + "\"");
  }
}

// FIPS 180-4 / NIST CSRC example values.
TEST(GoldenSha256, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary (55, 56, 64 bytes) differ from each other.
  EXPECT_NE(sha256_hex(std::string(55, 'x')), sha256_hex(std::string(56, 'x')));
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

class GoldenManifest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir("manifest");
    const auto files = generate_set("layout:tiled_8x4", 7, std::nullopt, 20);
    write_set(dir_, files, "layout:tiled_8x4", 7, "mixed", true);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(GoldenManifest, AWrittenSetVerifies) {
  const auto reports = verify_paths({dir_});
  ASSERT_EQ(reports.size(), 2u);  // the text file and its companion
  for (const auto& r : reports) EXPECT_TRUE(r.ok()) << r.path << ": " << r.error;
  EXPECT_EQ(reports[0].cases, 20u);
  const Manifest m = read_manifest(dir_ / "manifest.json");
  EXPECT_EQ(m.operation, "layout:tiled_8x4");
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.cases, 20u);
  EXPECT_EQ(m.files[1].companion_of, m.files[0].path);
}

TEST_F(GoldenManifest, DetectsAChangedFile) {
  const auto path = dir_ / "scale_tiled_8x4.txt";
  std::string text = test::read(path);
  text.insert(text.size() - 1, " ");  // still parses: only the hash differs
  test::write(path, text);
  const auto reports = verify_manifest(dir_ / "manifest.json");
  ASSERT_FALSE(reports.empty());
  EXPECT_NE(reports[0].error.find("SHA-256 mismatch"), std::string::npos) << reports[0].error;
  EXPECT_NE(reports[0].error.find("manifest.json"), std::string::npos) << reports[0].error;
}

TEST_F(GoldenManifest, DetectsMissingAndUnlistedFiles) {
  std::filesystem::rename(dir_ / "scale_tiled_8x4.npy", dir_ / "stray.npy");
  const auto reports = verify_manifest(dir_ / "manifest.json");
  bool missing = false, stray = false;
  for (const auto& r : reports) {
    missing |=
        r.error.find("scale_tiled_8x4.npy: listed in the manifest but cannot be read") != std::string::npos;
    stray |= r.error.find("stray.npy is in the set's directory but not in its manifest") != std::string::npos;
  }
  EXPECT_TRUE(missing);
  EXPECT_TRUE(stray);
}

TEST_F(GoldenManifest, DetectsACompanionThatDisagrees) {
  const auto npy = dir_ / "scale_tiled_8x4.npy";
  std::string bytes = test::read(npy);
  bytes[bytes.size() - 1] ^= 1;  // the last byte of the last record
  test::write(npy, bytes);
  Manifest m = read_manifest(dir_ / "manifest.json");
  m.files[1].sha256 = sha256_hex(bytes);
  test::write(dir_ / "manifest.json", format_manifest(m));
  const auto reports = verify_manifest(dir_ / "manifest.json");
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_NE(reports[1].error.find("record 19 differs from case 19"), std::string::npos) << reports[1].error;
}

// A manifest whose hash is right but whose record of the file is not: each disagreement is the
// file's error and names what the manifest says and what the file holds.
TEST_F(GoldenManifest, DetectsARecordThatMisdescribesItsFile) {
  const Manifest good = read_manifest(dir_ / "manifest.json");
  const auto first_error = [&](const Manifest& m) {
    test::write(dir_ / "manifest.json", format_manifest(m));
    const auto reports = verify_manifest(dir_ / "manifest.json");
    EXPECT_FALSE(reports.empty());
    return reports.empty() ? std::string() : reports[0].error;
  };
  Manifest kind = good;
  kind.files[0].kind = "conversion";
  EXPECT_NE(first_error(kind).find("the manifest says kind 'conversion', the file has @kind layout"),
            std::string::npos)
      << first_error(kind);
  Manifest cases = good;
  cases.files[0].cases = 21;
  cases.cases = 21;
  EXPECT_NE(first_error(cases).find("the manifest records 21 cases, the file has 20"), std::string::npos)
      << first_error(cases);
  Manifest operation = good;
  operation.files[0].operation = "layout:tiled_128x4";
  EXPECT_NE(first_error(operation).find("the manifest records operation 'layout:tiled_128x4', the file holds "
                                        "'layout:tiled_8x4'"),
            std::string::npos)
      << first_error(operation);
  test::write(dir_ / "manifest.json", format_manifest(good));
  for (const auto& r : verify_manifest(dir_ / "manifest.json")) EXPECT_TRUE(r.ok()) << r.path << ": " << r.error;
}

// A listed file that does not parse, with the hash the manifest records: the parse error is its
// report; a manifest that does not parse is one report of kind "manifest".
TEST_F(GoldenManifest, ReportsListedFilesAndManifestsThatDoNotParse) {
  const auto path = dir_ / "scale_tiled_8x4.txt";
  const std::string text = test::read(path);
  const std::string cut = text.substr(0, text.find("@fields"));  // the header without its fields
  test::write(path, cut);
  Manifest m = read_manifest(dir_ / "manifest.json");
  m.files[0].sha256 = sha256_hex(cut);
  test::write(dir_ / "manifest.json", format_manifest(m));
  auto reports = verify_manifest(dir_ / "manifest.json");
  ASSERT_FALSE(reports.empty());
  EXPECT_FALSE(reports[0].ok());
  EXPECT_NE(reports[0].error.find("scale_tiled_8x4.txt: @fields is missing"), std::string::npos) << reports[0].error;
  test::write(dir_ / "manifest.json", "{\"format\": \"blockscale-golden-manifest\",");
  reports = verify_manifest(dir_ / "manifest.json");
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].kind, "manifest");
  EXPECT_NE(reports[0].error.find("malformed JSON"), std::string::npos) << reports[0].error;
}

// Golden files are text: a binary file (or a device such as /dev/zero) is refused at its first NUL
// byte rather than read whole, and a directory by name.
TEST(GoldenReadFile, RefusesBinaryFilesAndDirectoriesNamingTheRule) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "blockscale_golden_binary";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "x.txt", std::ios::binary);
    f << "@golden 1\n" << std::string(200000, 'a') << '\0';
  }
  const auto refused = [](const std::filesystem::path& path) -> std::string {
    try {
      (void)read_golden(path);
    } catch (const GoldenError& e) {
      return e.what();
    }
    return "read";
  };
  EXPECT_NE(refused(dir / "x.txt").find("not a text file (a NUL byte at offset 200010)"), std::string::npos)
      << refused(dir / "x.txt");
  EXPECT_NE(refused(dir).find("a directory, not a file"), std::string::npos) << refused(dir);
  if (std::filesystem::exists("/dev/zero")) {
    EXPECT_NE(refused("/dev/zero").find("a NUL byte at offset 0"), std::string::npos) << refused("/dev/zero");
  }
  // A file over 1 GiB is refused by its size, before it is read (sparse files: no disk, no memory).
  // The text file's zeros after its first line would otherwise stop the read at a NUL: the message
  // tells which check refused it.
  {
    std::ofstream(dir / "huge.txt", std::ios::binary) << "@golden 1\n";
    std::filesystem::resize_file(dir / "huge.txt", (std::uintmax_t{1} << 30) + 1);
    EXPECT_NE(refused(dir / "huge.txt").find("larger than 1073741824 bytes"), std::string::npos) << refused(dir / "huge.txt");
    std::ofstream(dir / "huge.npy", std::ios::binary) << "\x93NUMPY";
    std::filesystem::resize_file(dir / "huge.npy", (std::uintmax_t{1} << 30) + 1);
    try {
      (void)read_file_bytes(dir / "huge.npy");
      ADD_FAILURE() << "a file of 2^30 + 1 bytes was read";
    } catch (const GoldenError& e) {
      EXPECT_NE(std::string(e.what()).find("larger than 1073741824 bytes"), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(GoldenManifestParse, RejectsMalformedManifests) {
  const std::string good =
      "{\"format\": \"blockscale-golden-manifest\", \"format_version\": 1, \"generator\": \"g\", "
      "\"operation\": \"o\", "
      "\"seed\": 1, \"data\": \"mixed\", \"cases\": 0, \"files\": []}";
  EXPECT_NO_THROW(parse_manifest(good, "m.json"));
  // Hex digits of either case in a \u escape: U+00C9 and U+00E9 as UTF-8.
  std::string escaped = good;
  escaped.replace(escaped.find("\"g\""), 3, "\"\\u00C9\\u00e9\"");
  EXPECT_EQ(parse_manifest(escaped, "m.json").generator, "\xC3\x89\xC3\xA9");
  const std::pair<std::string, const char*> bad[] = {
      {"{", "malformed JSON"},
      {"[]", "top level must be an object"},
      {good.substr(0, good.size() - 1) + ", \"extra\": 1}", "unknown key 'extra'"},
      {"{\"format\": \"x\"}", "\"format\" must be"},
      {"{\"format\": \"\xed\xa0\x80\"}", "bytes in a string that are not UTF-8"},  // a surrogate, raw
      {"{\"format\": \"blockscale-golden-manifest\", \"format_version\": 1, \"generator\": \"g\", "
       "\"operation\": \"o\", "
       "\"seed\": 1, \"data\": \"d\", \"cases\": 5, \"files\": []}",
       "\"cases\" is 5 but the files list 0"},
      {"{\"format\": \"blockscale-golden-manifest\", \"format_version\": 1, \"generator\": \"g\", "
       "\"operation\": \"o\", "
       "\"seed\": 1, \"data\": \"d\", \"cases\": 0, \"files\": [{\"path\": \"../x.txt\", \"kind\": "
       "\"layout\", "
       "\"cases\": 0, \"sha256\": \"" +
           std::string(64, '0') + "\"}]}",
       "must stay inside the set's directory"},
      {"{\"format\": \"blockscale-golden-manifest\", \"format_version\": 1, \"generator\": \"g\", "
       "\"operation\": \"o\", "
       "\"seed\": -1, \"data\": \"d\", \"cases\": 0, \"files\": []}",
       "non-negative integer"},
      {"{\"a\": 1, \"a\": 2}", "duplicate key"},
      // \u escapes: four hex digits of either case, nothing else (G and g sit just past F and f).
      {"{\"format\": \"\\u00G1\"}", "bad hex digit in \\u escape"},
      {"{\"format\": \"\\u00g1\"}", "bad hex digit in \\u escape"},
      {"{\"format\": \"\\u00@1\"}", "bad hex digit in \\u escape"},
      {"{\"format\": \"\\u00\"}", "\\u escape"},
      {std::string(100, '['), "nesting deeper than 32"},
  };
  for (const auto& [text, message] : bad) {
    try {
      (void)parse_manifest(text, "m.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const GoldenError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("m.json", 0), 0u) << e.what();
    }
  }
}

TEST(GoldenNpy, HeaderIsNumpyFormat1) {
  const auto files = generate_set("pack:fp4_dense:e2m1", 1, std::nullopt, 3);
  const std::string npy = npy_companion(files[0]);
  ASSERT_GE(npy.size(), 10u);
  EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header = static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  EXPECT_EQ((10 + header) % 64, 0u);
  EXPECT_EQ(npy.substr(10, header).back(), '\n');
  EXPECT_NE(npy.find("{'descr': [('codes', '|u1', (16,)), ('bytes', '|u1', (8,))], 'fortran_order': False, "
                     "'shape': (3,), }"),
            std::string::npos);
  EXPECT_EQ(npy.size(), 10 + header + 3 * (16 + 8));
}

// numpy.load reads a companion with numpy alone, record by record equal to the text file.
TEST(GoldenNpy, NumpyLoadsACompanion) {
  if (std::system("python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with numpy is not installed";
  const auto dir = test::scratch_dir("npy");
  const auto files = generate_set(
      "instruction:sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 "
      "e2m1 ue4m3",
      3, std::nullopt, 5);
  write_set(dir, files, "x", 3, "mixed", true);
  const std::string stem = (dir / files[0].name.substr(0, files[0].name.size() - 4)).string();
  const std::string script =
      "import numpy as np, sys\n"
      "a = np.load(sys.argv[1] + '.npy')\n"
      "lines = [l.split() for l in open(sys.argv[1] + '.txt') if l[0] not in '#@']\n"
      "assert a.shape == (5,), a.shape\n"
      "assert a.dtype.names == ('a', 'b', 'c', 'sa', 'sb', 'd'), a.dtype.names\n"
      "for r, l in zip(a, lines):\n"
      "    assert ''.join('%x' % v for v in r['a']) == l[0]\n"
      "    assert '%08x' % r['c'] == l[2] and '%08x' % r['d'] == l[5]\n"
      "    assert ''.join('%02x' % v for v in r['sa']) == l[3]\n"
      "print('ok')\n";
  test::write(dir / "check.py", script);
  const std::string cmd = "python3 " + (dir / "check.py").string() + " " + stem;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::filesystem::remove_all(dir);
}

// Values outside the enums are refused or named, never read from past a table's end (from an audit,
// 2026-11-30: hex_digits, max_word and to_string(ElementType) indexed the format table at 200).
TEST(GoldenFormat, ValuesOutsideTheEnumsAreRefused) {
  const ElementType unknown{WordType::code, static_cast<Format>(200)};
  EXPECT_EQ(to_string(unknown), "an unknown format (200)");
  EXPECT_THROW((void)hex_digits(unknown), std::invalid_argument);
  EXPECT_THROW((void)max_word(unknown), std::invalid_argument);
  const ElementType bad_word{static_cast<WordType>(5), Format::float32};
  EXPECT_THROW((void)hex_digits(bad_word), std::invalid_argument);
  EXPECT_THROW((void)max_word(bad_word), std::invalid_argument);
  GoldenFile f;
  f.header.kind = static_cast<SetKind>(5);
  EXPECT_THROW((void)format_golden(f), std::invalid_argument);
  const emulator::KernelSchedule s =
      emulator::KernelSchedule::chain(emulator::parse_instruction("sm_90a wgmma.mma_async m64n64k16 f32 f16 f16"));
  EXPECT_THROW((void)gemm_operation("bad", 4, 4, 16, s, static_cast<GemmOutput>(2)), std::invalid_argument);
}

}  // namespace
}  // namespace blockscale::golden

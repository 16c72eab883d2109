// SPDX-License-Identifier: Apache-2.0
// The SM90 mixed-input weight interleaves (docs/layouts.md, "Weight interleaves"): one engine that
// reads each variant's row of kWeightInterleaveTable (the byte gather of a 32-bit word and the
// permutation of its bits) and applies it tile by tile.
#include "blockscale/layout/weight_interleave.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace blockscale {

namespace {

using i64 = std::int64_t;

constexpr i64 kMaxExtent = i64{1} << 40;
constexpr i64 kTileRows = 16;  // a row pair (q, q + 8) per kernel block, two blocks of 8 pairs
constexpr i64 kTileBytes = 32;  // one partition: 64 codes of a row
constexpr int kWordsPerRow = 8;  // 32-bit words per tile row

// A variant's table row, prepared for the loops: the bit permutation as (mask, shift) groups in both
// directions, and for every source byte position of a tile (row half, column) the word that gathers
// it (destination row half h, word w, byte i).
struct Prepared {
  struct Group {
    std::uint32_t mask;
    int shift;  // destination bit - source bit
  };
  std::vector<Group> forward, backward;
  std::array<std::uint8_t, 32> inverse_perm{};
  struct Slot {
    std::uint8_t h = 0, w = 0, i = 0;
    bool used = false;
  };
  std::array<std::array<Slot, kTileBytes>, 2> gatherer{};  // [row half][column]
};

// The source column within the tile of byte i of word w in destination row half h.
int source_col(const WeightInterleaveInfo& v, int h, int w, int i) {
  return 16 * (w / 4) + 8 * h + v.col_stride * (w % 4) + v.col_offset[static_cast<std::size_t>(i)];
}

std::vector<Prepared::Group> groups_of(const std::array<std::uint8_t, 32>& perm) {
  std::vector<Prepared::Group> out;
  for (int b = 0; b < 32; ++b) {
    const int shift = perm[static_cast<std::size_t>(b)] - b;
    bool merged = false;
    for (auto& g : out)
      if (g.shift == shift) g.mask |= std::uint32_t{1} << b, merged = true;
    if (!merged) out.push_back({std::uint32_t{1} << b, shift});
  }
  return out;
}

Prepared prepare(const WeightInterleaveInfo& v) {
  Prepared p;
  std::array<bool, 32> hit{};
  for (int b = 0; b < 32; ++b) {
    const int d = v.bit_perm[static_cast<std::size_t>(b)];
    if (d > 31 || hit[static_cast<std::size_t>(d)])
      throw std::logic_error(std::string("weight interleave ") + v.name + ": bit_perm is not a permutation");
    hit[static_cast<std::size_t>(d)] = true;
    p.inverse_perm[static_cast<std::size_t>(d)] = static_cast<std::uint8_t>(b);
  }
  p.forward = groups_of(v.bit_perm);
  p.backward = groups_of(p.inverse_perm);
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < kWordsPerRow; ++w)
      for (int i = 0; i < 4; ++i) {
        const int c = source_col(v, h, w, i);
        auto& slot = p.gatherer.at(v.row_half[static_cast<std::size_t>(i)]).at(static_cast<std::size_t>(c));
        if (slot.used)
          throw std::logic_error(std::string("weight interleave ") + v.name + ": the gather reads a byte twice");
        slot = {static_cast<std::uint8_t>(h), static_cast<std::uint8_t>(w), static_cast<std::uint8_t>(i), true};
      }
  return p;
}

const Prepared& prepared(WeightInterleave v) {
  static const std::array<Prepared, kWeightInterleaveCount> all = [] {
    std::array<Prepared, kWeightInterleaveCount> a;
    for (int i = 0; i < kWeightInterleaveCount; ++i) a[static_cast<std::size_t>(i)] = prepare(kWeightInterleaveTable[static_cast<std::size_t>(i)]);
    return a;
  }();
  return all[static_cast<std::size_t>(v)];
}

std::uint32_t apply(const std::vector<Prepared::Group>& groups, std::uint32_t x) {
  std::uint32_t y = 0;
  for (const auto& g : groups) y |= g.shift >= 0 ? (x & g.mask) << g.shift : (x & g.mask) >> -g.shift;
  return y;
}

const WeightInterleaveInfo& checked_info(WeightInterleave v) {
  if (static_cast<std::size_t>(v) >= kWeightInterleaveTable.size())
    throw std::invalid_argument("weight interleave: unknown WeightInterleave");
  return info(v);
}

[[noreturn]] void fail(WeightInterleave v, i64 rows, i64 cols, const std::string& rule) {
  throw std::invalid_argument("weight interleave " + to_string(v) + " with rows=" + std::to_string(rows) +
                              ", cols=" + std::to_string(cols) + ": " + rule);
}

// Moves one expert: to the interleaved form when kForward, else back. `packed` and `inter` are the
// two forms; rowb = bytes per row.
template <bool kForward>
void move_expert(const WeightInterleaveInfo& v, const Prepared& p, i64 rows, i64 rowb, const std::uint8_t* from,
                 std::uint8_t* to) {
  for (i64 t0 = 0; t0 < rows; t0 += kTileRows)
    for (i64 c0 = 0; c0 < rowb; c0 += kTileBytes)
      for (int h = 0; h < 2; ++h)
        for (int q = 0; q < 8; ++q) {
          const i64 dst_row = t0 + 8 * h + q;
          for (int w = 0; w < kWordsPerRow; ++w) {
            std::array<i64, 4> src{};
            for (int i = 0; i < 4; ++i)
              src[static_cast<std::size_t>(i)] = (t0 + q + 8 * v.row_half[static_cast<std::size_t>(i)]) * rowb + c0 +
                                                 source_col(v, h, w, i);
            const i64 dst = dst_row * rowb + c0 + 4 * w;
            if constexpr (kForward) {
              std::uint32_t word = 0;
              for (int i = 0; i < 4; ++i) word |= std::uint32_t{from[src[static_cast<std::size_t>(i)]]} << (8 * i);
              const std::uint32_t out = apply(p.forward, word);
              for (int i = 0; i < 4; ++i) to[dst + i] = static_cast<std::uint8_t>(out >> (8 * i));
            } else {
              std::uint32_t word = 0;
              for (int i = 0; i < 4; ++i) word |= std::uint32_t{from[dst + i]} << (8 * i);
              const std::uint32_t out = apply(p.backward, word);
              for (int i = 0; i < 4; ++i) to[src[static_cast<std::size_t>(i)]] = static_cast<std::uint8_t>(out >> (8 * i));
            }
          }
        }
}

template <bool kForward>
void move_all(WeightInterleave v, i64 batch, i64 rows, i64 cols, std::span<const std::uint8_t> from,
              std::span<std::uint8_t> to, const char* what) {
  const WeightInterleaveInfo& vi = checked_info(v);
  const i64 per = weight_bytes(v, rows, cols);
  if (batch < 0) fail(v, rows, cols, std::string(what) + ": batch must not be negative");
  if (per != 0 && batch > (i64{1} << 62) / per)
    fail(v, rows, cols, std::string(what) + ": batch * size above 2^62 bytes is not supported");
  for (auto [name, size] : {std::pair{kForward ? "the packed input" : "the interleaved input", from.size()},
                            std::pair{kForward ? "the output" : "the packed output", to.size()}})
    if (static_cast<i64>(size) != batch * per)
      fail(v, rows, cols,
           std::string(what) + ": " + name + " has " + std::to_string(size) + " bytes, expected " +
               std::to_string(batch * per));
  if (per == 0) return;  // empty experts: nothing to move, however many (a loop over 2^62 of them would not end)
  const Prepared& p = prepared(v);
  for (i64 b = 0; b < batch; ++b)
    move_expert<kForward>(vi, p, rows, cols / 2, from.data() + b * per, to.data() + b * per);
}

}  // namespace

void check_weight_shape(WeightInterleave v, std::int64_t rows, std::int64_t cols) {
  checked_info(v);
  if (rows < 0 || cols < 0) fail(v, rows, cols, "extents must not be negative");
  if (rows > kMaxExtent || cols > kMaxExtent) fail(v, rows, cols, "extents above 2^40 are not supported");
  if (rows % kTileRows != 0)
    fail(v, rows, cols, "the interleave pairs rows q and q + 8 of 16-row tiles: rows must be a multiple of 16");
  if (cols % 64 != 0)
    fail(v, rows, cols, "the interleave moves 64-code (32-byte) partitions of a row: cols must be a multiple of 64");
  // weight_code_bits and weight_bit_source count bits in an int64: 8 x the bytes must fit.
  if (rows != 0 && cols / 2 > (i64{1} << 60) / rows) {
    fail(v, rows, cols, "storage above 2^60 bytes is not supported (its bit indexes are int64)");
  }
}

std::int64_t weight_bytes(WeightInterleave v, std::int64_t rows, std::int64_t cols) {
  check_weight_shape(v, rows, cols);
  return rows * (cols / 2);
}

void interleave_weights(WeightInterleave v, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                        std::span<const std::uint8_t> packed, std::span<std::uint8_t> out) {
  move_all<true>(v, batch, rows, cols, packed, out, "interleave_weights");
}

void deinterleave_weights(WeightInterleave v, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                          std::span<const std::uint8_t> in, std::span<std::uint8_t> packed) {
  move_all<false>(v, batch, rows, cols, in, packed, "deinterleave_weights");
}

std::array<std::int64_t, 4> weight_code_bits(WeightInterleave v, std::int64_t rows, std::int64_t cols, std::int64_t r,
                                             std::int64_t k) {
  const WeightInterleaveInfo& vi = checked_info(v);
  check_weight_shape(v, rows, cols);
  if (r < 0 || r >= rows || k < 0 || k >= cols)
    fail(v, rows, cols, "weight_code_bits: code (" + std::to_string(r) + ", " + std::to_string(k) + ") is outside the matrix");
  const i64 rowb = cols / 2, byte = k / 2, t = r % kTileRows;
  const auto& slot = prepared(v).gatherer[static_cast<std::size_t>(t / 8)][static_cast<std::size_t>(byte % kTileBytes)];
  const i64 dst_row = r - t + 8 * slot.h + t % 8;
  const i64 word_base = 8 * (dst_row * rowb + byte - byte % kTileBytes + 4 * slot.w);
  std::array<std::int64_t, 4> out{};
  for (int j = 0; j < 4; ++j)
    out[static_cast<std::size_t>(j)] = word_base + vi.bit_perm[static_cast<std::size_t>(8 * slot.i + 4 * (k % 2) + j)];
  return out;
}

std::array<std::int64_t, 3> weight_bit_source(WeightInterleave v, std::int64_t rows, std::int64_t cols,
                                              std::int64_t bit_index) {
  const WeightInterleaveInfo& vi = checked_info(v);
  const i64 size = weight_bytes(v, rows, cols);
  if (bit_index < 0 || bit_index / 8 >= size)
    fail(v, rows, cols,
         "weight_bit_source: bit " + std::to_string(bit_index) + " is outside the " + std::to_string(size) + " bytes");
  const i64 rowb = cols / 2, byte = bit_index / 8, row = byte / rowb, col = byte % rowb;
  const i64 t = row % kTileRows, h = t / 8, q = t % 8, w = (col % kTileBytes) / 4;
  const int b = prepared(v).inverse_perm[static_cast<std::size_t>(8 * (col % 4) + bit_index % 8)];
  const int i = b / 8, src_bit = b % 8;
  const i64 src_row = row - t + q + 8 * vi.row_half[static_cast<std::size_t>(i)];
  const i64 src_col = col - col % kTileBytes + source_col(vi, static_cast<int>(h), static_cast<int>(w), i);
  return {src_row, 2 * src_col + src_bit / 4, src_bit % 4};
}

std::string to_string(WeightInterleave v) { return checked_info(v).name; }

std::optional<WeightInterleave> parse_weight_interleave(std::string_view name) {
  for (const WeightInterleaveInfo& v : kWeightInterleaveTable)
    if (name == v.name) return v.kind;
  return std::nullopt;
}

WeightInterleave weight_interleave_from_string(std::string_view name) {
  if (auto v = parse_weight_interleave(name)) return *v;
  std::string known;
  for (const WeightInterleaveInfo& v : kWeightInterleaveTable) known += std::string(" ") + v.name;
  throw std::invalid_argument("unknown weight interleave '" + std::string(name) + "' (known:" + known + ")");
}

}  // namespace blockscale

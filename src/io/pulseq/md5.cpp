// MD5 (RFC 1321), only to check Pulseq [SIGNATURE] hashes: not for security.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "io/pulseq/pulseq_file.hpp"

namespace larmor::io::pulseq {
namespace {

// Per-round left-rotation amounts (RFC 1321, section 3.4).
constexpr std::array<std::uint32_t, 64> kShifts = {
    7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 7,  12, 17, 22, 5,  9,  14, 20, 5,  9,
    14, 20, 5,  9,  14, 20, 5,  9,  14, 20, 4,  11, 16, 23, 4,  11, 16, 23, 4,  11, 16, 23,
    4,  11, 16, 23, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21, 6,  10, 15, 21};

// T[i] = floor(2^32 * |sin(i + 1)|), computed once rather than typed in.
std::array<std::uint32_t, 64> sine_table() {
  std::array<std::uint32_t, 64> table{};
  for (int i = 0; i < 64; ++i) {
    table[i] = static_cast<std::uint32_t>(std::floor(4294967296.0 * std::fabs(std::sin(i + 1.0))));
  }
  return table;
}

std::uint32_t rotate_left(std::uint32_t x, std::uint32_t n) { return (x << n) | (x >> (32 - n)); }

void process_chunk(const unsigned char* chunk, std::array<std::uint32_t, 4>& state,
                   const std::array<std::uint32_t, 64>& sines) {
  std::uint32_t words[16];
  for (int i = 0; i < 16; ++i) {  // little-endian words
    words[i] = std::uint32_t(chunk[4 * i]) | (std::uint32_t(chunk[4 * i + 1]) << 8) |
               (std::uint32_t(chunk[4 * i + 2]) << 16) | (std::uint32_t(chunk[4 * i + 3]) << 24);
  }
  std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  for (int i = 0; i < 64; ++i) {
    std::uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    const std::uint32_t rotated = rotate_left(a + f + sines[i] + words[g], kShifts[i]);
    a = d;
    d = c;
    c = b;
    b = b + rotated;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

}  // namespace

std::string md5_hex(const std::string& bytes) {
  static const std::array<std::uint32_t, 64> sines = sine_table();
  std::array<std::uint32_t, 4> state = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};

  // Padding: a 1 bit, zeros to 56 mod 64 bytes, then the bit length (little-endian).
  std::string message = bytes;
  const std::uint64_t bit_length = static_cast<std::uint64_t>(bytes.size()) * 8u;
  message.push_back(static_cast<char>(0x80));
  while (message.size() % 64 != 56) message.push_back('\0');
  for (int i = 0; i < 8; ++i) message.push_back(static_cast<char>((bit_length >> (8 * i)) & 0xffu));

  for (std::size_t offset = 0; offset < message.size(); offset += 64) {
    process_chunk(reinterpret_cast<const unsigned char*>(message.data()) + offset, state, sines);
  }
  std::string hex;
  char byte_text[3];
  for (const std::uint32_t word : state) {
    for (int i = 0; i < 4; ++i) {
      std::snprintf(byte_text, sizeof byte_text, "%02x", (word >> (8 * i)) & 0xffu);
      hex += byte_text;
    }
  }
  return hex;
}

}  // namespace larmor::io::pulseq

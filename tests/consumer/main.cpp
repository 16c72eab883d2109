// Uses the installed blockscale: a conversion and a value type; exits non-zero on a wrong answer.
#include <blockscale/formats.h>

#include <cstdio>

int main() {
  using namespace blockscale;
  const std::uint32_t code = convert(Format::float8_e4m3fn, 3.3f, presets::cuda(Format::float8_e4m3fn));
  const float8_e4m3fn x(1.75f);
  std::printf("consumer: 3.3 -> e4m3 0x%02X (%g); float8_e4m3fn(1.75) = %g\n", code,
              to_double(Format::float8_e4m3fn, code), static_cast<double>(x));
  return (code == 0x45 && x.bits() == 0x3E) ? 0 : 1;  // 3.25 = 0.1000.101, 1.75 = 0.0111.110
}

// SPDX-License-Identifier: Apache-2.0
// Named option sets that reproduce other systems bit for bit (formats.md section (d) lists where
// they differ). Each preset throws std::invalid_argument for a combination the system does not
// offer, naming it, rather than guessing.
#pragma once

#include <optional>

#include "blockscale/formats/convert.h"

namespace blockscale::presets {

// IEEE 754-2019 semantics: the given rounding, overflow per §7.4, NaN quiet with sign and payload
// (§6.2.3); e8m0 zero -> 0x00 and negative -> NaN.
ConvertOptions ieee(Rounding r = Rounding::nearest_even);

// The host conversion functions of CUDA 13.0 (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h, cuda_fp16.h,
// cuda_bf16.h), for source format `src` (float32, plain double via Format::float32 is not
// distinguished: pass from_double = true), e.g.
//   fp8:  __nv_cvt_{float,double,halfraw,bfloat16raw}_to_fp8(x, __NV_SATFINITE | __NV_NOSAT, ...)
//         nearest_even only; overflow saturate (SATFINITE) or infinity (NOSAT);
//   fp6/fp4: __nv_cvt_*_to_fp6 / _to_fp4(x, ..., cudaRoundNearest | cudaRoundZero), always saturating;
//   e8m0: __nv_cvt_{float,double,bfloat16raw}_to_e8m0(x, SATFINITE | NOSAT, cudaRoundZero | cudaRoundPosInf);
//   f16/bf16: __float2half_{rn,rz,ru,rd}, __float2bfloat16_{rn,rz,ru,rd}.
// Unset `rounding` means CUDA's default for dst: nearest_even, or upward for e8m0 (the
// __nv_fp8_e8m0 constructor). Unset `overflow` means saturate (what the CUDA struct
// constructors do), or ieee for f16/bf16.
ConvertOptions cuda(Format dst, Format src = Format::float32, bool from_double = false,
                    std::optional<Rounding> rounding = std::nullopt,
                    std::optional<Overflow> overflow = std::nullopt);

// ml_dtypes 0.6.0 as NumPy and Python use it: ConvertImpl<From, To, kSaturate, kTruncate>, whose
// default (kSaturate = false, kTruncate = false) is what `numpy_array.astype(ml_dtypes.X)` and the
// scalar constructors do; float16 arrays are cast through float32. Checked exhaustively against
// ml_dtypes (tests/formats/ml_dtypes_oracle.py). One ml_dtypes 0.6.0 bug is deliberately not
// reproduced: a double in [1.5 * 2^128, 2^129) converted to e8m0 rounds to code 256, which wraps to
// 0x00 there; blockscale gives NaN (0xFF), as ml_dtypes does for every other overflow.
ConvertOptions ml_dtypes(Format dst, Format src = Format::float32, bool saturate = false,
                         bool truncate = false);

// What blockscale's value types (types.h) use for their constructors: ml_dtypes' default where
// ml_dtypes has the type, ieee(nearest_even) for the rest (ue4m3, f16, bf16, tf32, f32).
ConvertOptions value_type_default(Format dst);

}  // namespace blockscale::presets

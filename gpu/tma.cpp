// SPDX-License-Identifier: Apache-2.0
#include "tma.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <mutex>
#include <string>

#include "cuda_check.h"

namespace blockscale::gpu::detail {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    BLOCKSCALE_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || p == nullptr) {
      throw Error("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\")", source_location(__FILE__, __LINE__),
                  static_cast<int>(q), "cudaDriverEntryPointQueryResult", "the driver has no cuTensorMapEncodeTiled");
    }
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  return fn;
}

}  // namespace

CUtensorMap make_byte_matrix_map(const void* base, std::uint64_t rows, std::uint64_t row_bytes,
                                 std::uint32_t box_rows, std::uint32_t box_bytes, CUtensorMapSwizzle swizzle) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {row_bytes, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_bytes, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box,
                                 elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw Error("cuTensorMapEncodeTiled(rows=" + std::to_string(rows) + ", row_bytes=" + std::to_string(row_bytes) +
                    ", box=" + std::to_string(box_rows) + "x" + std::to_string(box_bytes) + ")",
                source_location(__FILE__, __LINE__), static_cast<int>(r), "CUresult",
                "invalid tensor-map parameters (alignment: base and row stride must be multiples of 16 bytes)");
  }
  return map;
}

}  // namespace blockscale::gpu::detail

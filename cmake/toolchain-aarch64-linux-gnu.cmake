# SPDX-License-Identifier: Apache-2.0
# Cross build for 64-bit Arm Linux (AArch64: Grace, Graviton, Ampere) with Debian's
# g++-aarch64-linux-gnu; tests run under qemu-user (scripts/test.sh --aarch64). The host's
# header-only packages (Eigen) are found as they are; libraries only from the target's sysroot and
# from BLOCKSCALE_AARCH64_PREFIX (GoogleTest built for the target).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(BLOCKSCALE_AARCH64_PREFIX "" CACHE PATH "Prefix of libraries built for the target (GoogleTest)")
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${BLOCKSCALE_AARCH64_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)

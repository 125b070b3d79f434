# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Cross-building wsched for 64-bit Arm Linux with Debian's cross compiler
# (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross: scripts/deps.sh), the
# tests run by qemu-user (qemu-user: qemu-aarch64 -L <sysroot>), which
# ctest puts in front of every test program it runs by target name.
#   cmake -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# scripts/test.sh aarch64 does this (without hwloc, OpenSSL and MPI, which
# are not installed for arm64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(WS_CROSS_TRIPLET aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${WS_CROSS_TRIPLET}-gcc)
set(CMAKE_ASM_COMPILER ${WS_CROSS_TRIPLET}-gcc)
# C++ only when the cross g++ is installed; else the C++ tests are skipped
# (check_language would find the host's g++, which builds x86-64 objects;
# a *-NOTFOUND value stops it and reads as false).
find_program(WS_CROSS_CXX ${WS_CROSS_TRIPLET}-g++)
if(WS_CROSS_CXX)
  set(CMAKE_CXX_COMPILER ${WS_CROSS_CXX})
else()
  set(CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER-NOTFOUND)
endif()

# The target's libraries and headers only; programs (pkg-config, python)
# from the host. pkg-config must not find the host's .pc files.
set(WS_CROSS_SYSROOT /usr/${WS_CROSS_TRIPLET})
set(CMAKE_FIND_ROOT_PATH ${WS_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} ${WS_CROSS_SYSROOT}/lib/pkgconfig)

find_program(WS_QEMU_AARCH64 qemu-aarch64)
if(WS_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${WS_QEMU_AARCH64} -L ${WS_CROSS_SYSROOT})
endif()

# aarch64-linux-gnu.cmake -- CMake toolchain for cross-building PocketLLM for
# 64-bit ARM Linux on a Debian x86-64 machine: Debian's gcc-aarch64-linux-gnu
# and the arm64 multiarch development packages (scripts/build-aarch64.sh
# installs both).  Test binaries run under qemu-aarch64-static.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
# the arm64 libraries and headers of Debian's multiarch layout
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)

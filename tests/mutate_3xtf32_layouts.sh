#!/bin/sh
# Can tests/test_3xtf32_layouts fail? Each line below is a deliberate mistake
# in kernels/gemm_f32_3xtf32_parts.h (a sed expression); the emulator is
# rebuilt against the mistaken copy and must report a failure. First the
# unmutated copy must pass, so a broken build cannot pass for a caught
# mutation. Run by make check; needs a C++ compiler and the CUDA headers.
set -u
src=${GS_SRCDIR:-$(dirname "$0")/..}
cxx=${CXX:-g++}
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT

# name|sed expression
mutations='swizzle phase of the wrong row bits (sw128)|s/((col >> 2) ^ row) \& 7/((col >> 2) ^ (row >> 1)) \& 7/
PERM 1 fragment k of the wrong half (frag_k)|s/8 \* j + 2 \* tq + hi/8 * j + 2 * tq + (hi ^ 1)/
TMA boxes in reverse order (mn_box)|s/c0 = r0 + MN_BOX \* i;/c0 = r0 + MN_BOX * (3 - i);/
row split writes the two passes to swapped chunks (split_chunk)|s/return 4 \* p + cc;/return 4 * (p ^ 1) + cc;/
TT split lanes without the bank flip: conflicts only (split_nm)|s/b = (q >> 1) \& 1;/b = 0;/
cross keeps an Inf or NaN (cross_row_lay)|s/v.x = (v.x \& 0x7f800000u) == 0x7f800000u ? 0u : v.x;/v.x = v.x;/
M-major A step off by a chunk (load_a_mn)|s/at\[o\[rr\]\[hi\] + j \* 8 \* 32\]/at[o[rr][hi] + j * 8 * 32 + 4 * (j \& 1)]/'

build_and_run() { # $1: folder holding the header under test
  "$cxx" -O2 -std=c++17 -ffp-contract=off -w -I"$1" -I"$src/kernels" -I"$cuda/include" \
    "$src/tests/test_3xtf32_layouts.cc" -o "$work/emu" || return 2
  "$work/emu" > "$work/out" 2>&1
}

mkdir "$work/hdr"
cp "$src/kernels/gemm_f32_3xtf32_parts.h" "$work/hdr/"
build_and_run "$work/hdr" || { echo "FAIL: the unmutated header does not pass"; cat "$work/out"; exit 1; }
echo "unmutated: all layouts ok"

bad=0
printf '%s\n' "$mutations" | {
  while IFS='|' read -r name expr; do
    sed "$expr" "$src/kernels/gemm_f32_3xtf32_parts.h" > "$work/hdr/gemm_f32_3xtf32_parts.h"
    if cmp -s "$src/kernels/gemm_f32_3xtf32_parts.h" "$work/hdr/gemm_f32_3xtf32_parts.h"; then
      echo "FAIL: mutation '$name' matched nothing in the header"; bad=1; continue
    fi
    build_and_run "$work/hdr"
    case $? in
      0) echo "FAIL: mutation '$name' not caught"; bad=1 ;;
      1) echo "caught: $name ($(grep -c FAIL "$work/out") failing lines)" ;;
      *) echo "FAIL: mutation '$name' did not build"; bad=1 ;;
    esac
  done
  exit $bad
}

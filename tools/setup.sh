#!/usr/bin/env bash
# Install what the build needs (Debian/Ubuntu; the CUDA Toolkit must already
# be installed), then configure and build into build/. Safe to run again.
#   CUDA_HOME=/usr/local/cuda (default)
#   bash tools/setup.sh --tsan   the same in build-tsan/, with ThreadSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
builddir=build configure_extra=
if [ "${1:-}" = --tsan ]; then builddir=build-tsan configure_extra=--enable-tsan; fi

need=()
for tool in autoreconf:autoconf automake:automake libtoolize:libtool pkg-config:pkg-config \
            make:make gcc:gcc g++:g++ python3:python3; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
pkg-config --exists cmocka 2>/dev/null || need+=(libcmocka-dev)
if [ -n "$configure_extra" ] && command -v gcc >/dev/null 2>&1 &&
   ! echo 'int main(void){return 0;}' | gcc -fsanitize=thread -x c - -o /dev/null 2>/dev/null; then
  need+=(libtsan2)
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing ${need[*]}; install them (apt-get install ${need[*]}) and run again" >&2
    exit 1
  fi
fi
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "setup: no nvcc under $CUDA_HOME (set CUDA_HOME)" >&2; exit 1; }

[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || autoreconf -fi
mkdir -p "$builddir"
cd "$builddir"
[ -f Makefile ] && [ Makefile -nt ../configure ] || ../configure --with-cuda="$CUDA_HOME" $configure_extra
make -j"$(nproc)"
echo "setup: built $(pwd)/libgemmshim.so"

#!/bin/sh
# A stand-in for gemmshim-bench, for gemmshim tune's tests (no GPU): the
# answers of --identity, --list-csv and one shape's measurement, in the
# bench's formats. Each call's arguments are appended to $FAKE_BENCH_LOG,
# and for a measurement, "m n k layout[ xBATCH]: arguments" to
# $FAKE_BENCH_LOG.shapes. A batch above 1 is outside every kernel's class
# (as the real table's: only the route cublaslt takes one).
#   FAKE_BENCH_NO_GPU=1   every call fails as the bench does without a GPU
# Ratios: cuBLAS against itself 1.001; kern_bf16 1.10 where m = 4096, else
# 0.90; kern_f32 1.00; kern_f32_tc (opt-in only) 2.00; kern_bf16 takes
# only TN (else "outside"). The CSV's launch column: pdl for kern_bf16 (as
# the decode kernels), else plain.
#   FAKE_BENCH_OLD=1  the CSV has no launch column (a bench older than tune)
#   FAKE_BENCH_LT=1   the kernel table lists the route cublaslt too: its
#                     two algorithms measure 0.97 (#1) and, where k = 8192,
#                     1.08 (#2; else 0.95).
[ -n "${FAKE_BENCH_LOG:-}" ] && echo "$*" >>"$FAKE_BENCH_LOG"
args="$*"
if [ -n "${FAKE_BENCH_NO_GPU:-}" ]; then
  echo "gemmshim-bench: no CUDA GPU (cudaGetDeviceCount: no CUDA-capable device is detected); nothing to measure" >&2
  exit 2
fi
kernel= shapes= csv= self= top= algos=
while [ $# -gt 0 ]; do
  case $1 in
    --identity)
      printf '%s\n' 'Validator,gpu_name,Fake GPU' 'Validator,compute_capability,9.0' \
        'Validator,sm_count,132' 'Validator,cublas_version,13.1.0' 'Validator,shim_version,0.1.0' \
        'Validator,kernel_table,0123456789abcdef' 'Validator,driver_version,580.159.04' \
        'Validator,power_limit_w,700' 'device_uuid,GPU-fake' 'cublas_path,/fake/libcublas.so.13'
      exit 0 ;;
    --list-csv)
      printf 'kernel,dtype,opt_in\nkern_f32,f32,0\nkern_bf16,bf16,0\nkern_f32_tc,f32,1\n'
      [ -n "${FAKE_BENCH_LT:-}" ] && printf 'cublaslt,bf16,0\ncublaslt,f16,0\n'
      exit 0 ;;
    --kernel) kernel=$2; shift ;;
    --shapes) shapes=$2; shift ;;
    --csv) csv=$2; shift ;;
    --self) self=1 ;;
    --after-producer) ;;
    --iters|--preheat-ms|--device|--math-mode|--dtype|--lt-call|--epilogue|--lt-route-workspace) shift ;;
    --lt-top) top=$2; shift ;;
    --lt-algos) algos=$2; shift ;;
    *) echo "fake-bench: unexpected argument $1" >&2; exit 2 ;;
  esac
  shift
done
read -r m n k layout batch <"$shapes" || exit 2
[ -n "${FAKE_BENCH_LOG:-}" ] && echo "$m $n $k $layout${batch:+ x$batch}: $args" >>"$FAKE_BENCH_LOG.shapes"
if [ "$kernel" = cublaslt ]; then
  A1='id=1;tile=18;splitk=1;reduction=0;swizzle=0;custom=0;stages=10;inner=0;cluster=0;workspace=0'
  A2='id=2;tile=20;splitk=1;reduction=0;swizzle=1;custom=0;stages=12;inner=0;cluster=0;workspace=0'
  if [ -n "$algos" ]; then list=$(cat "$algos"); else list=$(printf '%s\n%s' "$A1" "$A2"); fi
  {
    echo "# device: Fake GPU"
    echo "m,n,k,layout,ours_tflops,cublas_tflops,ratio,ours_err,cublas_err,sm_mhz,power_w,ours_us,cublas_us,samples,reps,buffer_sets,lt_rank,lt_rebuilt,lt_within_bound,lt_algo,launch"
    printf '%s\n' "$list" | while IFS= read -r a; do
      case $a in
        "$A1") rank=1 ratio=0.9700 ;;
        "$A2") rank=2; if [ "$k" = 8192 ]; then ratio=1.0800; else ratio=0.9500; fi ;;
        *) continue ;;
      esac
      echo "$m,$n,$k,$layout,1.0,1.0,$ratio,1.0e-03,1.0e-03,1755,690,10.00,$(echo "$ratio" | awk '{ printf "%.2f", 10 * $1 }'),20,50,8,$rank,1,1,$a,plain"
    done
  } >"$csv"
  exit 0
fi
if [ -z "$self" ] && [ "${batch:-1}" -gt 1 ]; then
  echo "$m $n $k x$batch $layout   outside the kernel's class: batched (not timed)"
  exit 0
fi
if [ -z "$self" ] && [ "$kernel" = kern_bf16 ] && [ "$layout" != TN ]; then
  echo "$m $n $k      $layout   outside the kernel's class: layout (not timed)"
  exit 0
fi
ratio=1.0010
launch=plain
[ -z "$self" ] && [ "$kernel" = kern_bf16 ] && launch=pdl
[ -z "$self" ] && case $kernel in
  kern_bf16) if [ "$m" = 4096 ]; then ratio=1.1000; else ratio=0.9000; fi ;;
  kern_f32) ratio=1.0000 ;;
  kern_f32_tc) ratio=2.0000 ;;
esac
{
  echo "# device: Fake GPU"
  echo "m,n,k,layout,ours_tflops,cublas_tflops,ratio,ours_err,cublas_err,sm_mhz,power_w,ours_us,cublas_us,samples,reps,buffer_sets,launch"
  echo "$m,$n,$k,$layout,1.0,1.0,$ratio,1.0e-03,1.0e-03,1755,690,10.00,$(echo "$ratio" | awk '{ printf "%.2f", 10 * $1 }'),20,50,8,$launch"
} >"$csv"
[ -n "${FAKE_BENCH_OLD:-}" ] && sed -i -e '2s/,launch$//' -e '3s/,[a-z]*$//' "$csv"
exit 0

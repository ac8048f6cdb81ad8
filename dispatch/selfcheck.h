/* The first-use self-check: before a kernel serves a class of calls on a
 * context, it is compared with cuBLAS once, without waiting for the GPU.
 *
 * A class is (kernel, the code path its launcher takes, output type,
 * layout, epilogue, context). On the first eligible call of a class that is
 * not being captured, cuBLAS serves the call into the caller's output, our
 * kernel writes a compact copy in stream-ordered scratch, a compare kernel
 * writes its verdict into pinned host memory and an event is recorded, all
 * on the caller's stream; the call returns at once. Until a later call sees
 * that event complete (cudaEventQuery), calls of the class forward with
 * reason `checking`; then the kernel serves them, or is disabled on the
 * context when the verdict failed. Calls under stream capture never start a
 * check: they forward (reason `unchecked`) until a call outside capture has
 * been checked. */
#ifndef GS_SELFCHECK_H
#define GS_SELFCHECK_H

#include "gemm.h"
#include "route.h"

typedef enum gs_gate {
  GS_GATE_SERVE,     /* checked and passed: run the kernel */
  GS_GATE_FORWARD,   /* forward the call to cuBLAS (d->reason says why) */
  GS_GATE_ANSWERED   /* this call started the check: cuBLAS served it
                        (*status is its status) */
} gs_gate;

/* For a call routed to d->variant on d->ctx. The caller has entered the
 * stream's context. On FORWARD and ANSWERED, d->variant is NULL. Never
 * waits: a lock another thread holds means `checking`. */
gs_gate gs_selfcheck_gate(gs_gemm *g, gs_decision *d, const gs_kernel_args *a, int *status);

/* The class index of a call within its kernel's checks, < GS_CHECK_KEYS:
 * the code path, output type, layout, epilogue. The route cublaslt is
 * checked per class, not per algorithm: what the shim adds there is the
 * translation of the call into a matmul, which is the same for every
 * algorithm; the algorithm is cuBLAS's own kernel, which cuBLASLt refuses
 * where it does not fit the call, and which the tuner checked against an
 * FP64 reference. A failed check turns the route off on the context. */
int gs_check_key(const gs_variant *v, const gs_gemm *g, const gs_kernel_args *a);

#endif

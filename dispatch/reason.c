/* The name of each reason, as the log and the tools print it. */
#include "reason.h"

static const char *const reason_names[GS_R_COUNT] = {
  [GS_R_ROUTED] = "routed",
  [GS_R_ROUTING_OFF] = "routing_off",
  [GS_R_BAD_ARGS] = "bad_args",
  [GS_R_EMPTY] = "empty",
  [GS_R_DTYPE] = "dtype",
  [GS_R_BATCHED] = "batched",
  [GS_R_LAYOUT] = "layout",
  [GS_R_SIZE_CLASS] = "size_class",
  [GS_R_NOT_TUNED] = "not_tuned",
  [GS_R_TUNED_CUBLAS] = "tuned_cublas",
  [GS_R_ROUTE_UNAVAILABLE] = "route_unavailable",
  [GS_R_STATE_UNREADABLE] = "state_unreadable",
  [GS_R_MATH_MODE] = "math_mode",
  [GS_R_NOT_OPTED_IN] = "not_opted_in",
  [GS_R_POINTER_MODE] = "pointer_mode",
  [GS_R_ALPHA_ZERO] = "alpha_zero",
  [GS_R_EPILOGUE] = "epilogue",
  [GS_R_LT_ATTRIBUTE] = "lt_attribute",
  [GS_R_ALIGNMENT] = "alignment",
  [GS_R_NO_GPU] = "no_gpu",
  [GS_R_ARCH] = "arch",
  [GS_R_TABLE_REFUSED] = "table_refused",
  [GS_R_LT_ALGO_UNFIT] = "lt_algo_unfit",
  [GS_R_SM_COUNT] = "sm_count_target",
  [GS_R_DISABLED] = "disabled",
  [GS_R_LAUNCH_FAILED] = "launch_failed",
  [GS_R_LOADING] = "loading",
  [GS_R_UNCHECKED] = "unchecked",
  [GS_R_CHECKING] = "checking",
  [GS_R_NO_SCRATCH] = "no_scratch",
  [GS_R_SELFCHECK] = "selfcheck",
  [GS_R_SELFCHECK_FAILED] = "selfcheck_failed",
  [GS_R_KERNEL_FAILED] = "kernel_failed",
  [GS_R_AB_COMPARED] = "ab_compared",
  [GS_R_AB_SHADOW] = "ab_shadow",
  [GS_R_AB_SKIPPED_CAPTURING] = "ab_skipped_capturing",
  [GS_R_AB_SKIPPED_SCRATCH] = "ab_skipped_scratch",
  [GS_R_AB_SKIPPED_ALLOC] = "ab_skipped_alloc",
};

const char *gs_reason_name(gs_reason r)
{
  if ((unsigned)r >= GS_R_COUNT || !reason_names[r]) return "unknown";
  return reason_names[r];
}

/* The command line of gemmshim-report and of `gemmshim report`: what A/B
 * mode measured, per shape class. The work is in report.c. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

static void usage(FILE *out, const char *prog)
{
  fprintf(out, "usage: %s [--csv] [--svg FILE] [--time-svg FILE] [--summary LOG]... [AB_CSV...]\n",
          prog);
  fputs("  AB_CSV         A/B CSV written under GEMMSHIM_AB (several files are merged)\n"
        "  --summary LOG  call log written under GEMMSHIM_LOG: totals, routes, FLOP share,\n"
        "                 calls A/B did not compare, and with GEMMSHIM_TIME where GEMM\n"
        "                 time went (repeatable)\n"
        "  --csv          print the per-shape table as CSV instead of text\n"
        "  --svg FILE     also draw speedup and worst error per shape class into FILE\n"
        "  --time-svg FILE  draw the share of GEMM time by shape and route into FILE\n"
        "At least one AB_CSV or --summary LOG is needed.\n"
        "exit status: 0 ok, 1 an output could not be written, 2 bad usage or input\n",
        out);
}

/* The whole command: argv[0] is only a name (getopt's messages use it). */
int report_main(int argc, char **argv, const char *prog)
{
  static const struct option longopts[] = {
    { "csv", no_argument, NULL, 'c' },
    { "svg", required_argument, NULL, 's' },
    { "summary", required_argument, NULL, 'S' },
    { "time-svg", required_argument, NULL, 'T' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char **summaries = calloc((size_t)argc, sizeof *summaries);
  report_options opt = { .summary_paths = summaries };
  int c;
  if (!summaries) return 2;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 'c': opt.csv = 1; break;
    case 's': opt.svg_path = optarg; break;
    case 'S': summaries[opt.n_summary++] = optarg; break;
    case 'T': opt.time_svg_path = optarg; break;
    case 'h': usage(stdout, prog); free(summaries); return 0;
    default: usage(stderr, prog); free(summaries); return 2;
    }
  }
  if (optind == argc && !opt.n_summary) {
    fprintf(stderr, "%s: no A/B CSV or call log given\n", prog);
    usage(stderr, prog);
    free(summaries);
    return 2;
  }
  opt.ab_paths = (const char **)(argv + optind);
  opt.n_ab = (size_t)(argc - optind);
  int status = report_run(&opt, stdout, stderr);
  free(summaries);
  return status;
}

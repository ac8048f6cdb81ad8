/* gemmshim-report: `gemmshim report` under its older name (report_cli.c). */
#include "report.h"

int main(int argc, char **argv)
{
  return report_main(argc, argv, "gemmshim-report");
}

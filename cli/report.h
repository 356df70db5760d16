/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report.h - verbs of the fdr CLI that live outside main.c */
#ifndef FDR_CLI_REPORT_H
#define FDR_CLI_REPORT_H

int cmd_report(int argc, char **argv);

#endif /* FDR_CLI_REPORT_H */

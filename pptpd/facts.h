/* Session facts from the pptpd-policy pppd plugin: one UNIX datagram
 * socket for the daemon, one datagram per session event (plugin/report.h is
 * the contract). Only datagrams whose sender is the pppd we started for the
 * call they name are believed. */
#ifndef PPTPD_FACTS_H
#define PPTPD_FACTS_H

#include <sys/un.h>

#include "loop.h"

struct server;

#define FACTS_DIR "/run/pptpd"

struct facts {
	struct server *srv;
	int            fd;
	struct loop_fd lf;
	char           path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* Creates FACTS_DIR (0700) or checks that an existing one is a directory
 * of ours that nobody else may enter (the control socket lives there too). */
int  facts_dir_check(char *err, size_t errlen);
/* Creates FACTS_DIR (0700) or checks that an existing one is a directory
 * of ours that nobody else may enter, then binds report.PID.sock in it. */
int  facts_open(struct facts *f, struct server *s, char *err, size_t errlen);
/* After daemon(): rename the socket after the process's pid now (the one
 * pppd's plugin is told, and the one in the pid file). */
int  facts_rename(struct facts *f, char *err, size_t errlen);
/* Handle every report waiting in the socket now. */
void facts_drain(struct facts *f);
void facts_close(struct facts *f);

#endif

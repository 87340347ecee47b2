/* pptpd.conf: Poptop-compatible configuration. */
#ifndef PPTPD_CONF_H
#define PPTPD_CONF_H

#include <netinet/in.h>
#include <stddef.h>

#define CONF_DEFAULT_FILE        "/etc/pptpd.conf"
#define CONF_DEFAULT_OPTIONS     "/etc/ppp/options.pptpd"
#define CONF_DEFAULT_PPP         "/usr/sbin/pppd"
#define CONF_DEFAULT_PIDFILE     "/var/run/pptpd.pid"
#define CONF_DEFAULT_SPEED       "115200"
#define CONF_DEFAULT_CONNECTIONS 100
#define CONF_DEFAULT_STIMEOUT    30     /* seconds; what Windows waits */
#define CONF_ERR_LEN             256

struct conf {
	char          *file;          /* path it was read from */
	char          *option;        /* pppd options file */
	char          *ppp;           /* path of pppd */
	char          *pidfile;
	char          *speed;
	char          *localip;       /* pool specs, parsed by pool_new() */
	char          *remoteip;
	struct in_addr listen;        /* INADDR_ANY by default */
	int            connections;
	int            stimeout;
	int            noipparam;
	int            debug;
	int            logwtmp;
	/* Where each key was set (line number, 0 = default): lets a later
	 * semantic error (e.g. the pool) point at file:line. */
	int            line_localip, line_remoteip;
};

/* Fill `c` with the defaults. */
void conf_init(struct conf *c);
/* Read `path` into `c` (keys override what is already there). Returns 0, or
 * -1 with err holding "file:line: reason". A missing file is an error. */
int  conf_load(struct conf *c, const char *path, char *err, size_t errlen);
void conf_free(struct conf *c);

#endif

/* pptpctl upgrade --wait. pptpd answers the upgrade before its monitor
 * executes the installed binary, so whether that binary took over is seen
 * from here: in /proc (the file the monitor runs) and at the control
 * socket's path (the process that serves it after the exec opens it
 * anew). */
#ifndef CTL_UPWAIT_H
#define CTL_UPWAIT_H

struct upwait;

/* Before the request, on its connection `fd` to the socket at `sock`:
 * who serves it and what it runs. NULL where that cannot be told (said
 * on stderr; then nothing should be asked). */
struct upwait *upwait_new(int fd, const char *sock);

/* After pptpd's "upgrading" answer: wait until the installed binary's
 * worker answers, and print the outcome. pptpctl's exit status: 0 taken
 * over, EXIT_ERROR the running binary carries on (or none answered in
 * time), EXIT_NOT_RUNNING pptpd exited. */
int upwait_run(struct upwait *w);

void upwait_free(struct upwait *w);

#endif

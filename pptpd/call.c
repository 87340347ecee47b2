/* A call: pppd on a pty pair, bridged to the GRE engine.
 *
 *   ACTIVE --(CCRQ | pppd exit | pty closed | control gone)--> ENDING --reap--> freed
 *
 * The address pair goes back to the pool only once pppd has been reaped, so
 * a new call never gets an address whose ppp interface still exists. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "call.h"
#include "ctrl.h"
#include "gre.h"
#include "msg.h"
#include "pool.h"
#include "server.h"

#define CALL_ID_TRIES  64

int
call_pppd_argv(const struct conf *conf, struct in_addr local, struct in_addr remote,
    struct in_addr client, char *argv[CALL_ARGV_MAX], char *buf, size_t buflen)
{
	int argc = 0;
	char client_s[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &client, client_s, sizeof(client_s));

	argv[argc++] = conf->ppp;
	argv[argc++] = "local";
	if (conf->option != NULL) {
		argv[argc++] = "file";
		argv[argc++] = conf->option;
	}
	argv[argc++] = conf->speed;
	if (remote.s_addr != INADDR_ANY) {
		/* Without localip pppd picks its own address: ":REMOTE". */
		char l[INET_ADDRSTRLEN] = "", r[INET_ADDRSTRLEN];
		if (local.s_addr != INADDR_ANY)
			inet_ntop(AF_INET, &local, l, sizeof(l));
		inet_ntop(AF_INET, &remote, r, sizeof(r));
		int n = snprintf(buf, buflen, "%s:%s", l, r);
		if (n < 0 || (size_t)n >= buflen)
			return -1;
		argv[argc++] = buf;
		buf += n + 1;
		buflen -= (size_t)n + 1;
	}
	if ((size_t)snprintf(buf, buflen, "%s", client_s) >= buflen)
		return -1;
	if (!conf->noipparam) {
		argv[argc++] = "ipparam";
		argv[argc++] = buf;
	}
	argv[argc++] = "remotenumber";
	argv[argc++] = buf;
	argv[argc] = NULL;
	return argc;
}

static int
call_pick_id(struct server *s, uint16_t *id)
{
	for (int i = 0; i < CALL_ID_TRIES; i++) {
		uint16_t r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint16_t)(random() & 0xffff);
		if (r != 0 && !gre_engine_has_call(s->gre, r)) {
			*id = r;
			return 0;
		}
	}
	/* The table is crowded: any free id will do. */
	for (uint32_t r = 1; r <= UINT16_MAX; r++)
		if (!gre_engine_has_call(s->gre, (uint16_t)r)) {
			*id = (uint16_t)r;
			return 0;
		}
	return -1;
}

/* In the child: the pty slave becomes pppd's controlling terminal and its
 * stdin/stdout; nothing else of ours leaks into it. */
static void __attribute__((noreturn))
call_exec_pppd(int slave, char **argv)
{
	loop_child_reset();
	setsid();
	ioctl(slave, TIOCSCTTY, 0);
	if (dup2(slave, STDIN_FILENO) < 0 || dup2(slave, STDOUT_FILENO) < 0)
		_exit(127);
	if (slave > STDERR_FILENO)
		close(slave);
	close_range(STDERR_FILENO + 1, ~0U, 0);
	execv(argv[0], argv);
	_exit(127);
}

static int
call_spawn(struct call *c, const struct conf *conf, const char **reason)
{
	int master, slave;
	struct termios tio;
	char *argv[CALL_ARGV_MAX];
	char buf[128];

	memset(&tio, 0, sizeof(tio));
	cfmakeraw(&tio);   /* echo off before pppd runs: no frame bounces back */
	if (openpty(&master, &slave, NULL, &tio, NULL) < 0) {
		*reason = "cannot open a pty";
		return -1;
	}
	if (call_pppd_argv(conf, c->local_ip, c->remote_ip, c->peer, argv, buf,
	    sizeof(buf)) < 0) {
		*reason = "pppd arguments too long";
		goto fail;
	}
	pid_t pid = fork();
	if (pid < 0) {
		*reason = "cannot fork";
		goto fail;
	}
	if (pid == 0)
		call_exec_pppd(slave, argv);
	close(slave);
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	fcntl(master, F_SETFD, FD_CLOEXEC);
	c->pty = master;
	c->pid = pid;
	return 0;
fail:
	close(master);
	close(slave);
	return -1;
}

static void
call_pty_ready(void *arg, uint32_t events)
{
	struct call *c = arg;
	uint64_t now = loop_now(c->srv->loop);
	if (events & EPOLLOUT)
		gre_call_pty_output(c->gre);
	if (c->state == CALL_ACTIVE && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		gre_call_pty_input(c->gre, now);
}

struct call *
call_new(struct server *s, struct ctrl *ctrl, const struct pptp_msg *ocrq,
    uint8_t *result, uint8_t *error, const char **reason)
{
	struct call *c = calloc(1, sizeof(*c));
	*result = PPTP_OCRP_GENERAL_ERROR;
	*error = PPTP_ERR_NO_RESOURCE;
	if (c == NULL) {
		*reason = "out of memory";
		return NULL;
	}
	c->srv = s;
	c->ctrl = ctrl;
	c->peer = ctrl_peer_addr(ctrl);
	c->peer_id = ocrq->u.ocrq.call_id;
	c->pty = -1;
	c->pty_lf.fd = -1;
	if (call_pick_id(s, &c->id) < 0) {
		*reason = "no free Call ID";
		goto fail;
	}
	if (s->pool != NULL && pool_alloc(s->pool, &c->local_ip, &c->remote_ip) < 0) {
		*reason = "address pool exhausted";
		goto fail;
	}
	if (call_spawn(c, s->conf, reason) < 0)
		goto fail_pool;
	c->gre = gre_call_new(s->gre, c->id, c->peer_id, c->peer, c->pty, c);
	if (c->gre == NULL) {
		*reason = "cannot set up GRE for the call";
		goto fail_pppd;
	}
	gre_call_set_window(c->gre, ocrq->u.ocrq.window);
	if (loop_fd_add(s->loop, &c->pty_lf, c->pty, EPOLLIN, call_pty_ready, c) < 0) {
		*reason = "cannot watch the pty";
		gre_call_free(c->gre);
		goto fail_pppd;
	}
	c->started_ms = loop_now(s->loop);
	c->state = CALL_ACTIVE;
	TAILQ_INSERT_TAIL(&s->calls, c, s_entry);
	log_msg(LOG_INFO, "call %u/%u %s: started pppd %d for %s", c->id, c->peer_id,
	    ctrl_peer_str(ctrl), (int)c->pid, inet_ntoa(c->remote_ip));
	return c;

fail_pppd:
	/* pppd has been forked: it is reaped like any other, the call stays
	 * on the server's list until then. */
	close(c->pty);
	c->pty = -1;
	c->ctrl = NULL;
	c->state = CALL_ENDING;
	kill(c->pid, SIGKILL);
	TAILQ_INSERT_TAIL(&s->calls, c, s_entry);
	return NULL;
fail_pool:
	if (s->pool != NULL)
		pool_release(s->pool, c->remote_ip);
fail:
	free(c);
	return NULL;
}

static void
call_free(void *p)
{
	free(p);
}

static void
call_finish(struct call *c)
{
	struct server *s = c->srv;
	loop_timer_cancel(s->loop, &c->kill_timer);
	loop_timer_cancel(s->loop, &c->end_timer);
	if (s->pool != NULL && c->remote_ip.s_addr != INADDR_ANY)
		pool_release(s->pool, c->remote_ip);
	TAILQ_REMOVE(&s->calls, c, s_entry);
	loop_defer_free(s->loop, call_free, c);
	if (s->stopping && TAILQ_EMPTY(&s->calls) && s->nctrls == 0)
		loop_stop(s->loop);
}

static void
call_kill(void *arg)
{
	struct call *c = arg;
	log_msg(LOG_WARNING, "call %u/%u: pppd %d ignored SIGTERM, killing it",
	    c->id, c->peer_id, (int)c->pid);
	kill(c->pid, SIGKILL);
}

void
call_end(struct call *c, uint8_t cdn_result, const char *reason)
{
	struct server *s = c->srv;
	if (c->state != CALL_ACTIVE)
		return;
	c->state = CALL_ENDING;
	struct gre_stats st;
	gre_call_stats(c->gre, &st);
	log_msg(LOG_INFO, "call %u/%u %s: ended after %llu s: %s (rx %llu pkts, "
	    "tx %llu pkts)", c->id, c->peer_id, inet_ntoa(c->peer),
	    (unsigned long long)(loop_now(s->loop) - c->started_ms) / 1000,
	    reason, (unsigned long long)st.rx_packets,
	    (unsigned long long)st.tx_packets);
	if (c->ctrl != NULL) {
		ctrl_call_ended(c->ctrl, c, cdn_result, PPTP_ERR_NONE, reason);
		c->ctrl = NULL;
	}
	gre_call_free(c->gre);
	c->gre = NULL;
	loop_fd_del(s->loop, &c->pty_lf);
	close(c->pty);
	c->pty = -1;
	if (c->pid > 0) {
		kill(c->pid, SIGTERM);
		loop_timer_set(s->loop, &c->kill_timer, CALL_KILL_GRACE_MS, call_kill, c);
	} else {
		call_finish(c);
	}
}

void
call_reaped(struct call *c, int status)
{
	char why[64];
	c->pid = 0;
	if (c->state == CALL_ACTIVE) {
		if (WIFEXITED(status))
			snprintf(why, sizeof(why), "pppd exited with status %d",
			    WEXITSTATUS(status));
		else
			snprintf(why, sizeof(why), "pppd killed by signal %d",
			    WTERMSIG(status));
		call_end(c, PPTP_CDN_LOST_CARRIER, why);
		return;   /* call_end finished it: pid is 0 */
	}
	call_finish(c);
}

void
call_set_accm(struct call *c, uint32_t send_accm, uint32_t recv_accm)
{
	if (c->state == CALL_ACTIVE)
		gre_call_set_accm(c->gre, send_accm, recv_accm);
}

static void
call_pty_gone(void *arg)
{
	call_end(arg, PPTP_CDN_LOST_CARRIER, "pppd hung up the line");
}

void
call_pty_closed(struct call *c, int err)
{
	(void)err;
	if (c->state != CALL_ACTIVE || loop_timer_armed(&c->end_timer))
		return;
	/* Stop polling a dead pty, which would report EOF forever. */
	loop_fd_del(c->srv->loop, &c->pty_lf);
	loop_timer_set(c->srv->loop, &c->end_timer, 0, call_pty_gone, c);
}

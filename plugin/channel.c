/*
 * channel.c -- pptpd's kernel data path: the kernel's PPTP channel
 * (AF_PPPOX, PX_PROTO_PPTP; Linux drivers/net/ppp/pptp.c, module pptp)
 * as pppd's channel, in place of the tty pptpd would otherwise give it.
 *
 * pptpd has answered the call and starts pppd without a tty, with
 * `pptpd-kernel` (channel.h). Parsing the option makes our channel
 * pppd's: pppd then calls our connect(), which takes the PPTP socket
 * pptpd opened, bound to our Call ID and local address and connected to
 * the peer's before it answered (`pptpd-kernel-fd`), or without that
 * option opens, binds and connects one itself. From then on the kernel
 * carries the call's GRE in both directions, and pppd attaches the
 * socket's PPP channel to a unit like any other (generic_establish_ppp
 * asks for its index with PPPIOCGCHAN).
 *
 * The channel is synchronous: no ACCM, and the kernel puts the address and
 * control fields on every frame (a peer must take them even when it
 * negotiated ACFC), so the line settings pppd hands a tty have nothing to
 * apply to here.
 */
#include "plugin/pppd-compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>   /* before the kernel's headers, which defer to it */
#include <linux/if_pppox.h>
#include <linux/ppp-ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin/channel.h"
#include "plugin/fdarg.h"

#define PLUGIN "pptpd-policy"
#define CHANNEL_FIELDS 4
/* "pptp-call-65535" and its NUL. */
#define CHANNEL_DEVNAM_MAX 16

struct channel_spec {
	uint16_t       our_id, peer_id;
	struct in_addr local, peer;
};

static struct channel_spec spec;
static char *opt_kernel;           /* the option's text, for pppd's dump */
static char *opt_kernel_fd;
static int given_fd = -1;          /* pptpd's socket, until connect takes it */
static int chan_fd = -1;

static int set_kernel(char **argv);
static int set_kernel_fd(char **argv);

static option_t channel_options[] = {
	{ .name = "pptpd-kernel", .type = o_special, .addr = (void *)set_kernel,
	  .description = "pptpd: carry this call on the kernel's PPTP channel "
	  "(OUR-ID,PEER-ID,LOCAL-ADDR,PEER-ADDR)",
	  .flags = OPT_PRIV | OPT_DEVNAM | OPT_A2STRVAL, .addr2 = &opt_kernel },
	{ .name = "pptpd-kernel-fd", .type = o_special,
	  .addr = (void *)set_kernel_fd,
	  .description = "pptpd: the call's PPTP socket, already connected, "
	  "is this inherited descriptor",
	  .flags = OPT_PRIV | OPT_A2STRVAL, .addr2 = &opt_kernel_fd },
	{ .name = NULL }
};

/* A Call ID: decimal, min..65535. */
static int
parse_id(const char *s, unsigned min, uint16_t *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* "OUR,PEER,LOCAL,PEER-ADDR" into sp; NULL, or what is wrong. */
static const char *
parse_spec(const char *text, struct channel_spec *sp)
{
	char buf[96], *field[CHANNEL_FIELDS], *save = NULL;
	int n = 0;

	if (strlen(text) >= sizeof(buf))
		return "too long";
	strcpy(buf, text);
	for (char *t = strtok_r(buf, ",", &save); t != NULL;
	    t = strtok_r(NULL, ",", &save)) {
		if (n == CHANNEL_FIELDS)
			return "more than four fields";
		field[n++] = t;
	}
	if (n != CHANNEL_FIELDS)
		return "fewer than four fields";
	/* 0 would let the kernel pick our Call ID: not the one the peer has. */
	if (parse_id(field[0], 1, &sp->our_id) < 0)
		return "bad Call ID of ours (1..65535)";
	if (parse_id(field[1], 0, &sp->peer_id) < 0)
		return "bad Call ID of the peer (0..65535)";
	if (inet_pton(AF_INET, field[2], &sp->local) != 1 ||
	    sp->local.s_addr == htonl(INADDR_ANY))
		return "bad local address";
	if (inet_pton(AF_INET, field[3], &sp->peer) != 1 ||
	    sp->peer.s_addr == htonl(INADDR_ANY))
		return "bad peer address";
	return NULL;
}

static int  channel_connect(void);
static void channel_disconnect(void);
static void channel_line_config(int mtu, uint32_t accm, int pcomp, int accomp);
static void channel_nothing(void);

/* pppd (2.4.9's find_option) looks every option given after this channel took
 * over (pptpd-kernel) up in the channel's own list too, without a NULL
 * check: a list that is empty, never none (a +ipv6 after it crashed pppd
 * in parse_args). */
static option_t channel_own_options[] = {
	{ NULL }
};

static struct channel pptp_kernel_channel = {
	.options = channel_own_options,
	.process_extra_options = NULL,
	.check_options = channel_nothing,
	.connect = channel_connect,
	.disconnect = channel_disconnect,
	.establish_ppp = ppp_generic_establish,
	.disestablish_ppp = ppp_generic_disestablish,
	.send_config = channel_line_config,
	.recv_config = channel_line_config,
	.cleanup = channel_disconnect,
	.close = channel_disconnect,
};

static int
set_kernel(char **argv)
{
	const char *why = parse_spec(*argv, &spec);
	char dev[CHANNEL_DEVNAM_MAX];

	if (why != NULL) {
		ppp_option_error(PLUGIN ": pptpd-kernel %s: %s", *argv, why);
		return 0;
	}
	free(opt_kernel);
	if ((opt_kernel = strdup(*argv)) == NULL)
		novm("pptpd-kernel");
	the_channel = &pptp_kernel_channel;
	ppp_set_modem(0);
	/* pppd's name for the device, in its log and scripts' DEVICE. */
	slprintf(dev, sizeof(dev), "pptp-call-%u", spec.our_id);
	ppp_set_devnam(dev);
	return 1;
}

/* A descriptor pptpd left open for us: not one of stdin, stdout, stderr. */
static int
set_kernel_fd(char **argv)
{
	int v = fd_arg_parse(*argv);

	if (v < 0) {
		ppp_option_error(PLUGIN ": pptpd-kernel-fd %s: not a descriptor "
		    "above 2", *argv);
		return 0;
	}
	free(opt_kernel_fd);
	if ((opt_kernel_fd = strdup(*argv)) == NULL)
		novm("pptpd-kernel-fd");
	given_fd = v;
	/* Not for pppd's scripts, even when no pptpd-kernel makes the channel
	 * ours and connect never adopts it. One not open is refused by
	 * connect, which says so. */
	(void)fcntl(v, F_SETFD, FD_CLOEXEC);
	return 1;
}

static void
channel_nothing(void)
{
}

static void
channel_line_config(int mtu, uint32_t accm, int pcomp, int accomp)
{
	(void)mtu; (void)accm; (void)pcomp; (void)accomp;
}

static void
addr_fill(struct sockaddr_pppox *sa, uint16_t call_id, struct in_addr a)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_family = AF_PPPOX;
	sa->sa_protocol = PX_PROTO_PPTP;
	sa->sa_addr.pptp.call_id = call_id;   /* host order, as the kernel keeps it */
	sa->sa_addr.pptp.sin_addr = a;
}

/* Bind our end, connect the peer's: fd, or -1 with *reason set. */
static int
channel_open(const char **reason)
{
	struct sockaddr_pppox sa;
	int fd, err;

	fd = socket(AF_PPPOX, SOCK_STREAM | SOCK_CLOEXEC, PX_PROTO_PPTP);
	if (fd < 0) {
		*reason = "cannot open a PPTP socket (is the pptp module loaded?)";
		return -1;
	}
	addr_fill(&sa, spec.our_id, spec.local);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		*reason = "cannot bind our Call ID and address";
		goto fail;
	}
	addr_fill(&sa, spec.peer_id, spec.peer);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		*reason = "cannot connect to the peer's Call ID and address";
		goto fail;
	}
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* pptpd's socket: it must be the PPTP socket of this call (a wrong one
 * would carry another call's GRE), and pppd's scripts must not inherit it.
 * 0, or -1 with *reason set. */
static int
channel_adopt(int fd, const char **reason)
{
	struct sockaddr_pppox sa;
	socklen_t len = sizeof(sa);

	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		*reason = "pptpd-kernel-fd: no such descriptor";
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    len < sizeof(sa) || sa.sa_family != AF_PPPOX ||
	    sa.sa_protocol != PX_PROTO_PPTP ||
	    sa.sa_addr.pptp.call_id != spec.our_id) {
		*reason = "pptpd-kernel-fd: not the PPTP socket of this call";
		if (errno == 0)
			errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The call's socket, pptpd's or our own; check it is a PPP channel. One
 * exit logs the one reason. */
static int
channel_connect(void)
{
	const char *reason;
	int fd, idx, err;

	if ((fd = given_fd) >= 0) {
		given_fd = -1;   /* ours to close from here on */
		errno = 0;
		if (channel_adopt(fd, &reason) < 0)
			goto fail;
	} else if (opt_kernel_fd != NULL) {
		/* A later link (persist, demand): pptpd's call, and its Call
		 * IDs in our spec, ended with the first one. A socket of our
		 * own from that spec would carry a call that is gone. */
		reason = "pptpd-kernel-fd: the call's socket was used by an "
		    "earlier link";
		errno = ENOTCONN;
		goto fail;
	} else if ((fd = channel_open(&reason)) < 0)
		goto fail;
	if (ioctl(fd, PPPIOCGCHAN, &idx) < 0) {
		reason = "no PPP channel on the socket (PPPIOCGCHAN)";
		goto fail;
	}
	chan_fd = fd;
	char l[INET_ADDRSTRLEN], p[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &spec.local, l, sizeof(l));
	inet_ntop(AF_INET, &spec.peer, p, sizeof(p));
	info(PLUGIN ": kernel PPTP channel %d: call %u at %s to call %u at %s%s",
	    idx, spec.our_id, l, spec.peer_id, p,
	    opt_kernel_fd != NULL ? " (socket from pptpd)" : "");
	return fd;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	error(PLUGIN ": call %u: %s: %s", spec.our_id, reason, strerror(err));
	return -1;
}

static void
channel_disconnect(void)
{
	if (chan_fd >= 0) {
		close(chan_fd);
		chan_fd = -1;
	}
}

void
channel_init(void)
{
	ppp_add_options(channel_options);
}

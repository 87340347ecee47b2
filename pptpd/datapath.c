/* The data path choice: `datapath engine|kernel|auto`. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>   /* before the kernel's header, which then defers to it */
#include <linux/if_pppox.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pptpd/conf.h"
#include "pptpd/datapath.h"
#include "pptpd/kguard.h"
#include "pptpd/log.h"

#define DATAPATH_MODULE "pptp"

int
datapath_kernel_probe(void)
{
	int fd = socket(AF_PPPOX, SOCK_STREAM | SOCK_CLOEXEC, PX_PROTO_PPTP);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void
datapath_addr_fill(struct sockaddr_pppox *sa, uint16_t call_id,
    struct in_addr a)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_family = AF_PPPOX;
	sa->sa_protocol = PX_PROTO_PPTP;
	sa->sa_addr.pptp.call_id = call_id;   /* host order, as the kernel keeps it */
	sa->sa_addr.pptp.sin_addr = a;
}

int
datapath_kernel_open(uint16_t our_id, struct in_addr local, uint16_t peer_id,
    struct in_addr peer, char *why, size_t whylen)
{
	struct sockaddr_pppox sa;
	char addr[INET_ADDRSTRLEN];
	int fd;

	fd = socket(AF_PPPOX, SOCK_STREAM | SOCK_CLOEXEC, PX_PROTO_PPTP);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open a kernel PPTP channel: %s",
		    strerror(errno));
		return -1;
	}
	datapath_addr_fill(&sa, our_id, local);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		inet_ntop(AF_INET, &local, addr, sizeof(addr));
		snprintf(why, whylen, "kernel PPTP channel: cannot bind Call ID "
		    "%u at %s: %s", our_id, addr, strerror(errno));
		goto fail;
	}
	datapath_addr_fill(&sa, peer_id, peer);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		inet_ntop(AF_INET, &peer, addr, sizeof(addr));
		snprintf(why, whylen, "kernel PPTP channel: cannot connect to "
		    "Call ID %u at %s: %s", peer_id, addr, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* `modprobe pptp`, once; whether it worked shows in the next probe. The
 * kernel may load it on its own at the first socket() (module aliases),
 * so this is for systems where that is off. */
static void
datapath_modprobe(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		char *argv[] = { "modprobe", "-q", DATAPATH_MODULE, NULL };
		close_range(STDERR_FILENO + 1, ~0U, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* The kernel path without its GRE guard survives less than the engine:
 * said once at startup, where `datapath kernel` asks for it anyway. */
#define DATAPATH_UNGUARDED "forged GRE with the call's ID from the client's " \
	"address can then kill a session: a sequence number far ahead " \
	"(the kernel adopts it), a burst just ahead of the real stream, a " \
	"payload length short of the datagram"

int
datapath_choose(int conf_datapath, int noplugin, struct kguard **guard,
    char *err, size_t errlen)
{
	char why[256];
	int e;

	*guard = NULL;
	if (conf_datapath == CONF_DATAPATH_ENGINE) {
		log_msg(LOG_INFO, "data path: engine (datapath engine)");
		return 0;
	}
	if (conf_datapath == CONF_DATAPATH_AUTO && noplugin) {
		log_msg(LOG_NOTICE, "data path: engine (datapath auto: the kernel "
		    "path needs the plugin, and 'noplugin' is set)");
		return 0;
	}
	if ((e = datapath_kernel_probe()) != 0) {
		datapath_modprobe();
		e = datapath_kernel_probe();
	}
	if (e != 0) {
		if (conf_datapath == CONF_DATAPATH_KERNEL) {
			snprintf(err, errlen, "datapath kernel: no PPTP channel in "
			    "this kernel (socket(AF_PPPOX, PX_PROTO_PPTP): %s; is the "
			    "'%s' module available?)", strerror(e), DATAPATH_MODULE);
			return -1;
		}
		log_msg(LOG_NOTICE, "data path: engine (datapath auto: no kernel "
		    "PPTP channel: %s)", strerror(e));
		return 0;
	}
	/* Only with its guard is the kernel path as safe as the engine
	 * against forged GRE, so auto takes it only then; `kernel` is the
	 * operator's explicit choice of speed over that. */
	if ((*guard = kguard_open(why, sizeof(why))) != NULL) {
		log_msg(LOG_INFO, "data path: kernel PPTP channel with its GRE "
		    "guard (datapath %s)",
		    conf_datapath == CONF_DATAPATH_AUTO ? "auto" : "kernel");
		return 1;
	}
	if (conf_datapath == CONF_DATAPATH_AUTO) {
		log_msg(LOG_NOTICE, "data path: engine (datapath auto: the kernel "
		    "path's GRE guard %s; without it %s. 'datapath kernel' takes "
		    "the kernel path anyway)", why, DATAPATH_UNGUARDED);
		return 0;
	}
	log_msg(LOG_WARNING, "data path: kernel PPTP channel WITHOUT its GRE "
	    "guard (datapath kernel; the guard %s): %s. 'datapath engine' or "
	    "'auto' survives these", why, DATAPATH_UNGUARDED);
	return 1;
}

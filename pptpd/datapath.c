/* The data path choice: `datapath engine|kernel|auto`. */
#include <errno.h>
#include <netinet/in.h>   /* before the kernel's header, which then defers to it */
#include <linux/if_pppox.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"
#include "datapath.h"
#include "log.h"

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

int
datapath_choose(int conf_datapath, int noplugin, char *err, size_t errlen)
{
	int e;

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
	if (e == 0) {
		log_msg(LOG_INFO, "data path: kernel PPTP channel (datapath %s)",
		    conf_datapath == CONF_DATAPATH_AUTO ? "auto" : "kernel");
		return 1;
	}
	if (conf_datapath == CONF_DATAPATH_KERNEL) {
		snprintf(err, errlen, "datapath kernel: no PPTP channel in this "
		    "kernel (socket(AF_PPPOX, PX_PROTO_PPTP): %s; is the '%s' "
		    "module available?)", strerror(e), DATAPATH_MODULE);
		return -1;
	}
	log_msg(LOG_NOTICE, "data path: engine (datapath auto: no kernel PPTP "
	    "channel: %s)", strerror(e));
	return 0;
}

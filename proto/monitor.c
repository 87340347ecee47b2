/* The monitor-worker records (monitor.h): one table says each type's body
 * length, descriptors and sender; encode and decode read it, and the
 * decoder refuses whatever the table does not allow. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/byteorder.h"
#include "proto/monitor.h"
#include "proto/report.h"

/* fds: the type's descriptors; MON_FDS_BY_FLAGS: CALL_START's,
 * CALL_STARTED's and CALL_RESUME's, which their flags decide. */
#define MON_FDS_BY_FLAGS  (-2)
#define MON_FROM_WORKER   1
#define MON_FROM_MONITOR  2

static const struct {
	const char *name;
	size_t      body;
	int         fds;
	int         from;
} mon_types[MON_TYPE_MAX + 1] = {
	[MON_HELLO]        = { "hello", 4, 0, MON_FROM_WORKER },
	[MON_WELCOME]      = { "welcome", 8, 0, MON_FROM_MONITOR },
	[MON_CONN_HOLD]    = { "conn-hold", 4, 1, MON_FROM_WORKER },
	[MON_CONN_HELD]    = { "conn-held", 4, 0, MON_FROM_MONITOR },
	[MON_CONN_DROP]    = { "conn-drop", 4, 0, MON_FROM_WORKER },
	[MON_CALL_START]   = { "call-start", 16, MON_FDS_BY_FLAGS, MON_FROM_WORKER },
	[MON_CALL_STARTED] = { "call-started", 16, MON_FDS_BY_FLAGS,
	                       MON_FROM_MONITOR },
	[MON_CALL_REFUSED] = { "call-refused", 4 + MON_TEXT, 0, MON_FROM_MONITOR },
	[MON_CALL_HANGUP]  = { "call-hangup", 4, 0, MON_FROM_WORKER },
	[MON_CALL_IFACE]   = { "call-iface", 4 + MON_IFNAME, 0, MON_FROM_WORKER },
	[MON_CHILD_EXIT]   = { "child-exit", 12, 0, MON_FROM_MONITOR },
	[MON_CALL_REAP]    = { "call-reap", 4, 0, MON_FROM_WORKER },
	[MON_ADMIN]        = { "admin", 4, 0, MON_FROM_WORKER },
	[MON_RESULT]       = { "result", 4 + MON_TEXT, 0, MON_FROM_MONITOR },
	[MON_CALL_CLAMPED] = { "call-clamped", 4, 0, MON_FROM_MONITOR },
	[MON_CALL_RATE]    = { "call-rate", 20 + MON_IFNAME, 0, MON_FROM_WORKER },
	[MON_NOTIFY]       = { "notify", 12, 0, MON_FROM_WORKER },
	[MON_CALL_ROUTE6]  = { "call-route6", 4 + MON_PREFIX6 + MON_IFNAME, 0,
	                       MON_FROM_WORKER },
	[MON_CALL_ADDR]    = { "call-addr", 8, 0, MON_FROM_WORKER },
	[MON_RELOAD_FILES] = { "reload-files", 4, 0, MON_FROM_WORKER },
	[MON_FILE]         = { "file", 4 + MON_PATH, 1, MON_FROM_MONITOR },
	[MON_CALL_RESUME]  = { "call-resume", 20, MON_FDS_BY_FLAGS,
	                       MON_FROM_MONITOR },
};

_Static_assert(4 + MON_TEXT <= MON_MAX_BODY && 4 + MON_PATH <= MON_MAX_BODY,
    "MON_MAX_BODY holds every body");

static int
mon_type_ok(unsigned type)
{
	return type >= MON_HELLO && type <= MON_TYPE_MAX;
}

const char *
mon_type_name(unsigned type)
{
	return mon_type_ok(type) ? mon_types[type].name : "?";
}

int
mon_from_worker(unsigned type)
{
	return mon_type_ok(type) && mon_types[type].from == MON_FROM_WORKER;
}

int
mon_fds_of(const struct mon_msg *m)
{
	if (!mon_type_ok(m->type))
		return -1;
	if (mon_types[m->type].fds != MON_FDS_BY_FLAGS)
		return mon_types[m->type].fds;
	if (m->type == MON_CALL_START)
		return 1 + 2 * !!(m->u.call_start.flags & MON_CALL_REPORTS);
	if (m->type == MON_CALL_RESUME)
		return 1 + !!(m->u.call_resume.flags & MON_CALL_REPORTS) +
		    !(m->u.call_resume.flags & MON_CALL_KERNEL);
	return m->u.call_started.flags & MON_CALL_KERNEL ? 0 : 1;
}

/* A string field: printable ASCII up to its NUL, so a log line cannot be
 * forged with it; on the wire (`wire`) zeros after it too, so one record
 * has one encoding. */
static int
mon_text_ok(const char *s, size_t size, int wire)
{
	size_t i = 0;
	while (i < size && s[i] != '\0') {
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
		i++;
	}
	if (i == size)
		return 0;   /* no NUL */
	while (wire && i < size)
		if (s[i++] != '\0')
			return 0;
	return 1;
}

int
mon_path_ok(const char *path)
{
	return path[0] == '/' && mon_text_ok(path, MON_PATH, 0);
}

static void
mon_text_put(uint8_t *p, const char *s, size_t size)
{
	memset(p, 0, size);
	memcpy(p, s, strnlen(s, size - 1));
}

/* CALL_ROUTE6: an add names a /64 and an interface, a delete neither. */
static const char *
mon_route6_check(const struct mon_msg *m, int wire)
{
	static const uint8_t zero[MON_PREFIX6];
	const uint8_t *p = m->u.call_route6.prefix;
	const char *ifname = m->u.call_route6.ifname;

	if (m->u.call_route6.call_id == 0)
		return "call ID 0";
	if (!mon_text_ok(ifname, MON_IFNAME, wire))
		return "interface name not a printable string";
	if (m->u.call_route6.op == MON_ROUTE6_ADD) {
		if (ifname[0] == '\0')
			return "no interface name";
		if (memcmp(p + MON_PREFIX6 / 2, zero, MON_PREFIX6 / 2) != 0)
			return "not a /64";
		return NULL;
	}
	if (m->u.call_route6.op != MON_ROUTE6_DEL)
		return "unknown route op";
	if (ifname[0] != '\0' || memcmp(p, zero, MON_PREFIX6) != 0)
		return "a delete names no prefix or interface";
	return NULL;
}

/* A call the monitor names to the worker (CALL_STARTED, CALL_RESUME):
 * known flags, a Call ID and a pid. */
static const char *
mon_call_check(uint16_t flags, uint16_t call_id, uint32_t pid)
{
	if (flags & ~MON_CALL_FLAGS)
		return "unknown call flags";
	if (call_id == 0 || pid == 0)
		return "call ID or pid 0";
	return NULL;
}

/* What the contract allows in the fields, whichever side built them.
 * NULL, or why not. */
static const char *
mon_fields_check(const struct mon_msg *m, int wire)
{
	switch (m->type) {
	case MON_CALL_START:
		if (m->u.call_start.flags & ~MON_CALL_FLAGS)
			return "unknown call flags";
		if (m->u.call_start.call_id == 0)
			return "call ID 0";
		break;
	case MON_CALL_STARTED:
		return mon_call_check(m->u.call_started.flags,
		    m->u.call_started.call_id, m->u.call_started.pid);
	case MON_CALL_RESUME:
		return mon_call_check(m->u.call_resume.flags,
		    m->u.call_resume.call_id, m->u.call_resume.pid);
	case MON_CALL_REFUSED:
		if (!mon_text_ok(m->u.call_refused.reason, MON_TEXT, wire))
			return "reason not a printable string";
		break;
	case MON_CALL_HANGUP:
		if (m->u.call_hangup.call_id == 0)
			return "call ID 0";
		if (m->u.call_hangup.how < MON_HANGUP_CLEAN ||
		    m->u.call_hangup.how > MON_HANGUP_DROP)
			return "unknown hang-up";
		if (m->u.call_hangup.cause > REPORT_CAUSE_REPLACED)
			return "unknown cause";
		break;
	case MON_CALL_IFACE:
		if (m->u.call_iface.call_id == 0)
			return "call ID 0";
		if (!mon_text_ok(m->u.call_iface.ifname, MON_IFNAME, wire) ||
		    m->u.call_iface.ifname[0] == '\0')
			return "interface name not a printable string";
		break;
	case MON_CHILD_EXIT:
		if (m->u.child_exit.call_id == 0 || m->u.child_exit.pid == 0)
			return "call ID or pid 0";
		break;
	case MON_CALL_REAP:
		if (m->u.call_reap.call_id == 0)
			return "call ID 0";
		break;
	case MON_CALL_CLAMPED:
		if (m->u.call_clamped.call_id == 0 || m->u.call_clamped.mss == 0)
			return "call ID or MSS 0";
		break;
	case MON_NOTIFY:
		if (m->u.notify.state < MON_NOTIFY_STATUS ||
		    m->u.notify.state > MON_NOTIFY_STOPPING)
			return "unknown notify state";
		break;
	case MON_CALL_RATE:
		if (m->u.call_rate.call_id == 0)
			return "call ID 0";
		if (!mon_text_ok(m->u.call_rate.ifname, MON_IFNAME, wire) ||
		    m->u.call_rate.ifname[0] == '\0')
			return "interface name not a printable string";
		break;
	case MON_CALL_ROUTE6:
		return mon_route6_check(m, wire);
	case MON_CALL_ADDR:
		if (m->u.call_addr.call_id == 0 || m->u.call_addr.remote_ip == 0)
			return "call ID or address 0";
		break;
	case MON_ADMIN:
		if (m->u.admin.what < MON_ADMIN_RELOAD ||
		    m->u.admin.what > MON_ADMIN_UPGRADE)
			return "unknown admin request";
		break;
	case MON_FILE:
		if (m->u.file.count == 0 || m->u.file.count > MON_FILES_MAX ||
		    m->u.file.index >= m->u.file.count)
			return "file index or count out of range";
		if (!mon_text_ok(m->u.file.path, MON_PATH, wire) ||
		    m->u.file.path[0] != '/')   /* mon_path_ok, with `wire` */
			return "path not an absolute printable string";
		break;
	case MON_RESULT:
		if (m->u.result.status < MON_OK || m->u.result.status > MON_ERR_CONF)
			return "unknown status";
		if (!mon_text_ok(m->u.result.text, MON_TEXT, wire))
			return "text not a printable string";
		break;
	default:
		break;
	}
	return NULL;
}

static void
mon_body_put(const struct mon_msg *m, uint8_t *b)
{
	switch (m->type) {
	case MON_HELLO:
	case MON_CONN_HOLD:
	case MON_RELOAD_FILES:
		be32_put(b, 0);
		break;
	case MON_FILE:
		be16_put(b, m->u.file.index);
		be16_put(b + 2, m->u.file.count);
		mon_text_put(b + 4, m->u.file.path, MON_PATH);
		break;
	case MON_WELCOME:
		be32_put(b, m->u.welcome.generation);
		be32_put(b + 4, m->u.welcome.calls);
		break;
	case MON_CALL_RESUME:
		be16_put(b, m->u.call_resume.call_id);
		be16_put(b + 2, m->u.call_resume.peer_call_id);
		be16_put(b + 4, m->u.call_resume.flags);
		be16_put(b + 6, 0);
		be32_put(b + 8, m->u.call_resume.pid);
		memcpy(b + 12, &m->u.call_resume.local_ip, 4);
		memcpy(b + 16, &m->u.call_resume.remote_ip, 4);
		break;
	case MON_CONN_HELD:
	case MON_CONN_DROP:
		be32_put(b, m->u.conn.conn);
		break;
	case MON_CALL_START:
		be16_put(b, m->u.call_start.call_id);
		be16_put(b + 2, m->u.call_start.peer_call_id);
		be16_put(b + 4, m->u.call_start.flags);
		be16_put(b + 6, 0);
		memcpy(b + 8, &m->u.call_start.local_ip, 4);
		memcpy(b + 12, &m->u.call_start.remote_ip, 4);
		break;
	case MON_CALL_STARTED:
		be16_put(b, m->u.call_started.call_id);
		be16_put(b + 2, m->u.call_started.flags);
		be32_put(b + 4, m->u.call_started.pid);
		/* addresses stay in network order: copied, not swapped */
		memcpy(b + 8, &m->u.call_started.local_ip, 4);
		memcpy(b + 12, &m->u.call_started.remote_ip, 4);
		break;
	case MON_CALL_REFUSED:
		b[0] = m->u.call_refused.result;
		b[1] = m->u.call_refused.error;
		be16_put(b + 2, 0);
		mon_text_put(b + 4, m->u.call_refused.reason, MON_TEXT);
		break;
	case MON_CALL_HANGUP:
		be16_put(b, m->u.call_hangup.call_id);
		b[2] = m->u.call_hangup.cause;
		b[3] = m->u.call_hangup.how;
		break;
	case MON_CALL_IFACE:
		be16_put(b, m->u.call_iface.call_id);
		be16_put(b + 2, 0);
		mon_text_put(b + 4, m->u.call_iface.ifname, MON_IFNAME);
		break;
	case MON_CHILD_EXIT:
		be16_put(b, m->u.child_exit.call_id);
		be16_put(b + 2, 0);
		be32_put(b + 4, m->u.child_exit.pid);
		be32_put(b + 8, (uint32_t)m->u.child_exit.status);
		break;
	case MON_CALL_REAP:
		be16_put(b, m->u.call_reap.call_id);
		be16_put(b + 2, 0);
		break;
	case MON_ADMIN:
		be16_put(b, m->u.admin.what);
		be16_put(b + 2, 0);
		break;
	case MON_RESULT:
		be32_put(b, (uint32_t)m->u.result.status);
		mon_text_put(b + 4, m->u.result.text, MON_TEXT);
		break;
	case MON_CALL_CLAMPED:
		be16_put(b, m->u.call_clamped.call_id);
		be16_put(b + 2, m->u.call_clamped.mss);
		break;
	case MON_CALL_ADDR:
		be16_put(b, m->u.call_addr.call_id);
		be16_put(b + 2, 0);
		memcpy(b + 4, &m->u.call_addr.remote_ip, 4);
		break;
	case MON_CALL_ROUTE6:
		be16_put(b, m->u.call_route6.call_id);
		be16_put(b + 2, m->u.call_route6.op);
		memcpy(b + 4, m->u.call_route6.prefix, MON_PREFIX6);
		mon_text_put(b + 4 + MON_PREFIX6, m->u.call_route6.ifname, MON_IFNAME);
		break;
	case MON_CALL_RATE:
		be16_put(b, m->u.call_rate.call_id);
		be16_put(b + 2, 0);
		be64_put(b + 4, m->u.call_rate.down);
		be64_put(b + 12, m->u.call_rate.up);
		mon_text_put(b + 20, m->u.call_rate.ifname, MON_IFNAME);
		break;
	case MON_NOTIFY:
		be16_put(b, m->u.notify.state);
		be16_put(b + 2, 0);
		be32_put(b + 4, m->u.notify.sessions);
		be32_put(b + 8, m->u.notify.ctrls);
		break;
	}
}

size_t
mon_encode(const struct mon_msg *m, uint8_t *buf, size_t len)
{
	if (!mon_type_ok(m->type) || mon_fields_check(m, 0) != NULL)
		return 0;
	size_t body = mon_types[m->type].body;
	if (len < MON_HDR_LEN + body)
		return 0;
	be32_put(buf, MON_MAGIC);
	be16_put(buf + 4, MON_VERSION);
	be16_put(buf + 6, (uint16_t)m->type);
	be32_put(buf + 8, m->seq);
	be32_put(buf + 12, (uint32_t)body);
	mon_body_put(m, buf + MON_HDR_LEN);
	return MON_HDR_LEN + body;
}

static void
mon_text_get(char *dst, const uint8_t *p, size_t size)
{
	memcpy(dst, p, size);
}

static void
mon_body_get(struct mon_msg *m, const uint8_t *b)
{
	switch (m->type) {
	case MON_HELLO:
	case MON_CONN_HOLD:
	case MON_RELOAD_FILES:
		break;
	case MON_FILE:
		m->u.file.index = be16_get(b);
		m->u.file.count = be16_get(b + 2);
		mon_text_get(m->u.file.path, b + 4, MON_PATH);
		break;
	case MON_WELCOME:
		m->u.welcome.generation = be32_get(b);
		m->u.welcome.calls = be32_get(b + 4);
		break;
	case MON_CALL_RESUME:
		m->u.call_resume.call_id = be16_get(b);
		m->u.call_resume.peer_call_id = be16_get(b + 2);
		m->u.call_resume.flags = be16_get(b + 4);
		m->u.call_resume.pid = be32_get(b + 8);
		memcpy(&m->u.call_resume.local_ip, b + 12, 4);
		memcpy(&m->u.call_resume.remote_ip, b + 16, 4);
		break;
	case MON_CONN_HELD:
	case MON_CONN_DROP:
		m->u.conn.conn = be32_get(b);
		break;
	case MON_CALL_START:
		m->u.call_start.call_id = be16_get(b);
		m->u.call_start.peer_call_id = be16_get(b + 2);
		m->u.call_start.flags = be16_get(b + 4);
		memcpy(&m->u.call_start.local_ip, b + 8, 4);
		memcpy(&m->u.call_start.remote_ip, b + 12, 4);
		break;
	case MON_CALL_STARTED:
		m->u.call_started.call_id = be16_get(b);
		m->u.call_started.flags = be16_get(b + 2);
		m->u.call_started.pid = be32_get(b + 4);
		memcpy(&m->u.call_started.local_ip, b + 8, 4);
		memcpy(&m->u.call_started.remote_ip, b + 12, 4);
		break;
	case MON_CALL_REFUSED:
		m->u.call_refused.result = b[0];
		m->u.call_refused.error = b[1];
		mon_text_get(m->u.call_refused.reason, b + 4, MON_TEXT);
		break;
	case MON_CALL_HANGUP:
		m->u.call_hangup.call_id = be16_get(b);
		m->u.call_hangup.cause = b[2];
		m->u.call_hangup.how = b[3];
		break;
	case MON_CALL_IFACE:
		m->u.call_iface.call_id = be16_get(b);
		mon_text_get(m->u.call_iface.ifname, b + 4, MON_IFNAME);
		break;
	case MON_CHILD_EXIT:
		m->u.child_exit.call_id = be16_get(b);
		m->u.child_exit.pid = be32_get(b + 4);
		m->u.child_exit.status = (int32_t)be32_get(b + 8);
		break;
	case MON_CALL_REAP:
		m->u.call_reap.call_id = be16_get(b);
		break;
	case MON_ADMIN:
		m->u.admin.what = be16_get(b);
		break;
	case MON_RESULT:
		m->u.result.status = (int32_t)be32_get(b);
		mon_text_get(m->u.result.text, b + 4, MON_TEXT);
		break;
	case MON_CALL_CLAMPED:
		m->u.call_clamped.call_id = be16_get(b);
		m->u.call_clamped.mss = be16_get(b + 2);
		break;
	case MON_CALL_ADDR:
		m->u.call_addr.call_id = be16_get(b);
		memcpy(&m->u.call_addr.remote_ip, b + 4, 4);
		break;
	case MON_CALL_ROUTE6:
		m->u.call_route6.call_id = be16_get(b);
		m->u.call_route6.op = be16_get(b + 2);
		memcpy(m->u.call_route6.prefix, b + 4, MON_PREFIX6);
		mon_text_get(m->u.call_route6.ifname, b + 4 + MON_PREFIX6, MON_IFNAME);
		break;
	case MON_CALL_RATE:
		m->u.call_rate.call_id = be16_get(b);
		m->u.call_rate.down = be64_get(b + 4);
		m->u.call_rate.up = be64_get(b + 12);
		mon_text_get(m->u.call_rate.ifname, b + 20, MON_IFNAME);
		break;
	case MON_NOTIFY:
		m->u.notify.state = be16_get(b);
		m->u.notify.sessions = be32_get(b + 4);
		m->u.notify.ctrls = be32_get(b + 8);
		break;
	}
}

/* The reserved fields of a body: zero, so they can mean something later. */
static int
mon_reserved_zero(enum mon_type type, const uint8_t *b)
{
	switch (type) {
	case MON_HELLO:
	case MON_CONN_HOLD:
	case MON_RELOAD_FILES:
		return be32_get(b) == 0;
	case MON_CALL_REFUSED:
	case MON_CALL_IFACE:
	case MON_CHILD_EXIT:
	case MON_CALL_REAP:
	case MON_ADMIN:
	case MON_CALL_RATE:
	case MON_NOTIFY:
	case MON_CALL_ADDR:
		return be16_get(b + 2) == 0;
	case MON_CALL_START:
	case MON_CALL_RESUME:
		return be16_get(b + 6) == 0;
	default:
		return 1;
	}
}

int
mon_decode(const uint8_t *buf, size_t len, const int *fds, unsigned nfds,
    struct mon_msg *m, const char **reason)
{
	const char *why = NULL;

	memset(m, 0, sizeof(*m));
	if (len < MON_HDR_LEN)
		why = "shorter than a header";
	else if (be32_get(buf) != MON_MAGIC)
		why = "bad magic";
	else if (be16_get(buf + 4) != MON_VERSION)
		why = "another version of the protocol";
	else if (!mon_type_ok(be16_get(buf + 6)))
		why = "unknown type";
	if (why != NULL)
		goto refuse;
	m->type = (enum mon_type)be16_get(buf + 6);
	m->seq = be32_get(buf + 8);
	size_t body = mon_types[m->type].body;
	if (be32_get(buf + 12) != body || len != MON_HDR_LEN + body)
		why = "length not the type's";
	else if (!mon_reserved_zero(m->type, buf + MON_HDR_LEN))
		why = "reserved field not zero";
	if (why != NULL)
		goto refuse;
	mon_body_get(m, buf + MON_HDR_LEN);
	if ((why = mon_fields_check(m, 1)) != NULL)
		goto refuse;
	if (nfds > MON_MAX_FDS || (int)nfds != mon_fds_of(m)) {
		why = "descriptors not the type's";
		goto refuse;
	}
	for (unsigned i = 0; i < nfds; i++)
		m->fds[i] = fds[i];
	m->nfds = nfds;
	return 0;
refuse:
	memset(m, 0, sizeof(*m));
	*reason = why;
	return -1;
}

int
mon_send(int sock, const struct mon_msg *m)
{
	uint8_t buf[MON_MAX_LEN];
	union {
		struct cmsghdr align;
		char           buf[CMSG_SPACE(sizeof(int) * MON_MAX_FDS)];
	} ctl;
	size_t len = mon_encode(m, buf, sizeof(buf));
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (len == 0 || m->nfds > MON_MAX_FDS || (int)m->nfds != mon_fds_of(m)) {
		errno = EINVAL;
		return -1;
	}
	if (m->nfds > 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * m->nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * m->nfds);
		memcpy(CMSG_DATA(c), m->fds, sizeof(int) * m->nfds);
	}
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EMSGSIZE;   /* SEQPACKET sends a record whole or not */
		return -1;
	}
	return 0;
}

/* Every descriptor that came in `mh`'s SCM_RIGHTS, into fds (at most
 * `max`); those beyond are closed. Returns how many there were in all. */
static unsigned
mon_take_fds(struct msghdr *mh, int *fds, unsigned max)
{
	unsigned n = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	    c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n < max)
				fds[n] = fd;
			else
				close(fd);
			n++;
		}
	}
	return n;
}

int
mon_recv(int sock, struct mon_msg *m, const char **reason)
{
	/* One byte more than the longest record: a longer one is seen as
	 * truncated (MSG_TRUNC), not taken for the right length. */
	uint8_t buf[MON_MAX_LEN + 1];
	union {
		struct cmsghdr align;
		/* room for more than we take: extra ones are closed, not lost */
		char           buf[CMSG_SPACE(sizeof(int) * (MON_MAX_FDS + 8))];
	} ctl;
	int fds[MON_MAX_FDS];
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		*reason = strerror(errno);
		return -1;
	}
	unsigned nfds = mon_take_fds(&mh, fds, MON_MAX_FDS);
	unsigned kept = nfds < MON_MAX_FDS ? nfds : MON_MAX_FDS;
	const char *why = NULL;
	if (n == 0 && nfds == 0)
		return 0;
	if (mh.msg_flags & MSG_CTRUNC)
		why = "descriptors cut off";
	else if (mh.msg_flags & MSG_TRUNC)
		why = "longer than any record";
	else if (mon_decode(buf, (size_t)n, fds, nfds, m, &why) == 0)
		return 1;
	for (unsigned i = 0; i < kept; i++)
		close(fds[i]);
	*reason = why;
	errno = EPROTO;   /* refused: not a socket's EAGAIN left from before */
	return -1;
}

void
mon_close_fds(struct mon_msg *m)
{
	for (unsigned i = 0; i < m->nfds && i < MON_MAX_FDS; i++)
		close(m->fds[i]);
	m->nfds = 0;
}

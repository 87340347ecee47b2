# client/: pptp-load, the userspace PPTP client (the Windows-profile test
# client and the load generator), and pptp-echo, its sink/echo service.
# The PPP side (LCP, auth, CCP/MPPE, IPCP, IPV6CP) is client/libppp.a, for
# pptp-load and its unit tests; crypto from libcrypto (client/crypto.h says
# which API and why). The wire formats come from proto/.
PPP_OBJ  := $(addprefix client/,mschap.o mppe.o fsm.o lcp.o auth.o ccp.o \
	ipcp.o ipv6cp.o ppp.o)
LOAD_OBJ := $(addprefix client/,main.o ctrl.o grelink.o session.o stream.o \
	acct.o probe.o ipudp.o report.o)
ECHO_OBJ := $(addprefix client/,pptp-echo.o probe.o acct.o)
# What the unit tests of the session side link (no PPP).
LOAD_TEST_OBJ := $(addprefix client/,ctrl.o acct.o probe.o ipudp.o stream.o)
CLIENT_LIBS := proto/libproto.a common/libcommon.a -lcrypto

client/libppp.a: $(PPP_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
client/pptp-load: $(LOAD_OBJ) client/libppp.a proto/libproto.a common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(LOAD_OBJ) client/libppp.a $(CLIENT_LIBS)
client/pptp-echo: $(ECHO_OBJ) common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(ECHO_OBJ) common/libcommon.a

# Benchmarks: MPPE alone, and the whole send path per packet on one core.
client/bench_mppe: client/bench_mppe.o client/libppp.a proto/libproto.a
	$(CC) $(ALL_LDFLAGS) -o $@ $< client/libppp.a proto/libproto.a -lcrypto
client/bench_load: client/bench_load.o client/grelink.o client/ipudp.o client/libppp.a proto/libproto.a common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $< client/grelink.o client/ipudp.o client/libppp.a $(CLIENT_LIBS)
bench-mppe: client/bench_mppe
	client/bench_mppe
bench-load: client/bench_load
	client/bench_load
.PHONY: bench-mppe bench-load
CLEAN += client/*.o client/libppp.a client/pptp-load client/pptp-echo \
	client/bench_mppe client/bench_load

# pptpd/: the daemon. PPTPD_LIBOBJ is everything but main(), for the unit
# tests that drive its objects.
PPTPD_OBJ := $(patsubst %.c,%.o,$(wildcard pptpd/*.c)) pptpd/bpf/kguard-obj.o
PPTPD_LIBOBJ := $(filter-out pptpd/main.o,$(PPTPD_OBJ))
# The metrics endpoint (pptpd/metrics.c) and sd_notify (pptpd/notify.c);
# MD5 and HMAC-MD5 for RADIUS Disconnect-Requests (pptpd/radius.c).
# libbpf: the kernel path's GRE guard (pptpd/kguard.c). libnftables: TCP
# MSS clamping's table (pptpd/mss.c). libmnl: the IPv6 sessions' routes
# (pptpd/nd.c).
PPTPD_LIBS := gre/libgre.a proto/libproto.a common/libcommon.a \
	-lmicrohttpd -lsystemd -lcrypto -lbpf -lnftables -lmnl -lseccomp

pptpd/pptpd: $(PPTPD_OBJ) gre/libgre.a proto/libproto.a common/libcommon.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(PPTPD_OBJ) $(PPTPD_LIBS)

# The kernel path's GRE guard: its eBPF program (pptpd/bpf/kguard.c, with
# the rules of pptpd/kguard-rule.h) built by clang for the BPF target, with
# the kernel's UAPI headers of this machine's multiarch directory (asm/),
# and embedded in pptpd by an assembler .incbin (pptpd/bpf/kguard-obj.S).
BPF_CLANG  ?= clang
BPF_CFLAGS := -O2 -g -target bpf -Wall -Wextra -Werror -I. \
	-I/usr/include/$(shell gcc -print-multiarch 2>/dev/null)
pptpd/bpf/kguard.bpf.o: pptpd/bpf/kguard.c pptpd/kguard-rule.h
	$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@ $<
pptpd/bpf/kguard-obj.o: pptpd/bpf/kguard-obj.S pptpd/bpf/kguard.bpf.o .build-flags
	$(CC) -c -o $@ $<
CLEAN += pptpd/*.o pptpd/bpf/*.o pptpd/pptpd

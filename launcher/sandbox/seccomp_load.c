/*
 * The command's seccomp filter at run time: the BPF program compiled at
 * build time for the config's variant (seccomp.c, seccomp_gen.c) is
 * installed with seccomp(2) itself, with a notification listener for the
 * creation guard.  Building it with libseccomp at each start cost about
 * 1.5 ms, most of the command's start; loading it costs the kernel's
 * check and JIT only.
 *
 * Which variant is the parent's choice, per run (seccomp_sends): sends go
 * straight to the kernel unless something the command holds or can reach
 * could carry an address out of the sandbox.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <stdio.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/sandbox/sandbox.h"

static const char *seccomp_family(int);
static const char *seccomp_type(int);

enum seccomp_variant
seccomp_variant(const struct sandbox *sb)
{
	/* Without namespaces the guard applies allowAllUnixSockets. */
	if (sb->nons)
		return (enum seccomp_variant)(SECCOMP_NONS |
		    (sb->allow_userns ? SECCOMP_USERNS : 0));
	if (sb->allow_all_unix)
		return (enum seccomp_variant)(SECCOMP_UNIX_ALL |
		    (sb->allow_userns ? SECCOMP_USERNS : 0));
	return (enum seccomp_variant)(SECCOMP_UNIX_LISTED |
	    (sb->sends_kernel ? SECCOMP_SENDS_KERNEL : 0) |
	    (sb->allow_userns ? SECCOMP_USERNS : 0));
}

/* A socket family's name, for -v. */
static const char *
seccomp_family(int f)
{
	return f == AF_UNIX ? "a Unix" : f == AF_INET ? "an IPv4" :
	    f == AF_INET6 ? "an IPv6" : f == AF_NETLINK ? "a netlink" : "a";
}

/* A socket type's name, for -v. */
static const char *
seccomp_type(int t)
{
	return t == SOCK_STREAM ? "stream" : t == SOCK_DGRAM ? "datagram" :
	    t == SOCK_SEQPACKET ? "seqpacket" : t == SOCK_RAW ? "raw" :
	    "non-stream";
}

/*
 * Sends go straight to the kernel only while no socket the command holds
 * or can be handed takes an address out of the sandbox (seccomp.c,
 * seccomp_unix_types): sockets it makes are refused as Unix datagram
 * ones or live in the sandbox's network namespace.  What it holds from
 * the start is descriptors 0-2 (the reaper marks every other
 * close-on-exec): a host UDP or Unix datagram socket there would carry
 * an address to the host, so any socket but an AF_UNIX stream or
 * seqpacket one (libuv's stdio are stream pairs) keeps the guard on
 * sends; so does one that cannot be asked.  What it can be handed, over
 * SCM_RIGHTS, comes from a host socket of allowUnixSockets (any of them
 * keeps the guard) or from the peer of an inherited stream socket,
 * which is the caller's own.
 */
void
seccomp_sends(struct sandbox *sb, size_t nlisted, int datagram)
{
	static const char *const names[] = {
		"standard input", "standard output", "standard error"
	};
	struct stat	st;
	socklen_t	sl;
	int		fd, dom, type;

	sb->sends_kernel = 0;
	if (sb->allow_all_unix) {
		snprintf(sb->sends_why, sizeof(sb->sends_why),
		    "network.allowAllUnixSockets: no Unix socket is checked");
		return;
	}
	if (datagram) {
		snprintf(sb->sends_why, sizeof(sb->sends_why),
		    "network.allowUnixDatagramSockets is true");
		return;
	}
	if (nlisted > 0) {
		snprintf(sb->sends_why, sizeof(sb->sends_why),
		    "network.allowUnixSockets lists sockets, which could "
		    "hand the command others");
		return;
	}
	for (fd = 0; fd < 3; fd++) {
		if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
			continue;
		sl = sizeof(dom);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &sl) == -1)
			dom = -1;
		sl = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) == -1)
			type = -1;
		if (dom == AF_UNIX && (type == SOCK_STREAM ||
		    type == SOCK_SEQPACKET))
			continue;
		snprintf(sb->sends_why, sizeof(sb->sends_why),
		    "%s is %s %s socket", names[fd], seccomp_family(dom),
		    seccomp_type(type));
		return;
	}
	sb->sends_kernel = 1;
	snprintf(sb->sends_why, sizeof(sb->sends_why), "Unix datagram "
	    "sockets refused; network.allowUnixDatagramSockets");
}

void
seccomp_sends_say(const struct sandbox *sb)
{
	enum seccomp_variant	v = seccomp_variant(sb);

	if (v & SECCOMP_NONS)
		log_info("sends: checked by the guard (no namespaces)");
	else if ((v & SECCOMP_UNIX_ALL) || (v & SECCOMP_SENDS_KERNEL))
		log_info("sends: the kernel's (%s)", sb->sends_why);
	else
		log_info("sends: checked by the guard (%s)", sb->sends_why);
}

int
seccomp_apply(const struct sandbox *sb)
{
	const struct seccomp_prog	*p = &seccomp_progs[seccomp_variant(sb)];
	struct sock_fprog		 prog;

	prog.len = p->len;
	prog.filter = (struct sock_filter *)p->insns;
	/* The listener comes close-on-exec: the command never holds it. */
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/*
 * The command's seccomp filter, written with libseccomp's rule API and
 * compiled at build time: the generator (seccomp_gen.c) exports the BPF
 * program of each variant here into the build, and seccomp_load.c loads
 * it with seccomp(2) when the command starts -- no filter is built at
 * run time, and pisbx-run does not load libseccomp (test_seccomp checks
 * that the compiled programs equal what these rules build).  Default
 * allow.
 *
 * Argument width.  The kernel reads an int argument as its low 32 bits;
 * the filter sees the whole 64-bit register, so SCMP_CMP_EQ with AF_UNIX
 * lets AF_UNIX | 1ULL << 32 through.  Every comparison here therefore
 * looks at the low 32 bits only (SCMP_CMP_MASKED_EQ with a mask inside
 * 0xffffffff), and where some values are allowed, every other value of
 * the low 32 bits is refused (seccomp_only32): an unknown or mangled
 * value is refused, or read by the filter exactly as the kernel reads it.
 * Each rule below says why it is width-safe.
 *
 * Refused, and why no build, test suite or package manager needs it:
 *   socket(2) families other than AF_INET, AF_INET6, AF_UNIX and
 *       AF_NETLINK with NETLINK_ROUTE (getifaddrs(3), getaddrinfo's
 *       AI_ADDRCONFIG and ip(8) read the sandbox's own interfaces):
 *       AF_VSOCK reaches the hypervisor, AF_PACKET, AF_ALG,
 *       AF_BLUETOOTH... are kernel attack surface no build uses.  EPERM.
 *       (AF_UNIX paths are a way around the network namespace --
 *       docker.sock, agent sockets -- so every connect goes to the
 *       guard, which lets through only sockets bound during the run and
 *       those of network.allowUnixSockets, and so does every send to an
 *       address unless Unix datagram sockets are refused; abstract names
 *       belong to the sandbox's network namespace.)
 *   socketpair(2) other than AF_UNIX: the only family it exists for.
 *   clone(2)/unshare(2) with CLONE_NEWUSER: a new user namespace is where
 *       most local privilege escalations start.  EPERM (unless the config
 *       sets allowNestedUserNamespaces: the SECCOMP_USERNS variants).
 *   clone3: its flags sit in a struct the filter cannot read (ENOSYS: libc
 *       falls back to clone, whose flags it can).
 *   setns: entering other namespaces.
 *   io_uring_*: I/O the filter cannot see (ENOSYS: programs fall back).
 *   openat2: its flags sit in a struct (ENOSYS: libc falls back to openat).
 *   mount, umount2, pivot_root, the new mount API: the mounts are the
 *       sandbox's walls.
 *   keyctl, add_key, request_key: the user's kernel keyrings are not
 *       namespaced.
 *   ioctl TIOCSTI, TIOCLINUX: pushing input into the terminal the
 *       caller's shell reads after the command (CVE-2017-5226).
 *   bpf: loads programs into the kernel.
 *   perf_event_open: kernel profiling, attack surface and side channels.
 *   userfaultfd: stalls kernel page faults, how exploits win kernel races.
 *   kexec_load, kexec_file_load, reboot: replace or stop the kernel.
 *   init_module, finit_module, delete_module: kernel modules.
 *   open_by_handle_at: opens files by handle past the mount namespace
 *       ("Shocker").
 *   acct, swapon, swapoff, quotactl, quotactl_fd: host-wide process
 *       accounting, swap and quotas.
 *   syslog: the kernel log (kernel addresses).
 *   iopl, ioperm: raw I/O ports.
 *   settimeofday, clock_settime, clock_adjtime: the host's clock.
 *   vhangup: hangs up the terminal of other processes.
 *   chmod, fchmod, fchmodat, fchmodat2 with S_ISUID or S_ISGID in the
 *       mode: nothing made in the sandbox may carry them afterwards (a
 *       root run's `chmod 4755 copy-of-bash` is a root shell for every
 *       local user; cp -p, tar -xp and install -m 4755 fail the same
 *       way).  EPERM.  The guard strips them from the mode of what it
 *       creates (open with O_CREAT, mkdir, mknod).  File capabilities
 *       (setxattr security.capability) and the other security.* and
 *       trusted.* names need capabilities the command does not have.
 *   lookup_dcookie, nfsservctl, uselib, sysfs, ustat, _sysctl,
 *       create_module, get_kernel_syms, query_module: obsolete (ENOSYS).
 *   every system call number this filter does not know (a kernel newer
 *       than libseccomp's table): ENOSYS, so a new way to create a file
 *       or change a mount cannot pass unseen; libc falls back.
 *
 * Without namespaces (SECCOMP_NONS, a container that refuses them): see
 * seccomp_nons -- only TCP and Unix sockets, every connect and send with
 * an address, every listen and every removal to the guard, and no
 * prlimit on another process.
 *
 * Sent to the creation guard (guard.c), which reads the arguments once,
 * decides on the resolved path and performs the call itself: every open
 * that can create, write or truncate (O_CREAT, O_WRONLY, O_RDWR,
 * O_TRUNC), creat, truncate, mkdir, mknod, symlink, link, rename, and
 * bind (a Unix socket path is a new file); unless allowAllUnixSockets,
 * also connect, and sendmsg, sendmmsg and sendto with an address (the
 * guard checks a Unix socket's path and performs the call) -- but for
 * the sends, by default, with namespaces: they go straight to the
 * kernel, and the guard refuses Unix datagram sockets instead
 * (SECCOMP_SENDS_KERNEL, seccomp_unix_types; the parent picks it per
 * run, seccomp_sends).  And umask(2),
 * which the guard lets through (SECCOMP_USER_NOTIF_FLAG_CONTINUE, safe:
 * its one argument is a plain number) after noting the value: the guard
 * creates every file with its caller's umask, and so need not read it
 * from /proc for each creation.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/sandbox/sandbox.h"

#ifndef AF_VSOCK
#define AF_VSOCK	40
#endif
/*
 * Unknown numbers are looked for here: above the dense start of every
 * architecture's table (x86-64 filled its gap with uretprobe, 335),
 * below 512, where x86-64's x32 numbers begin (which the filter kills
 * anyway); a kernel needs 40 more system calls to reach it.
 */
#define SECCOMP_NR_SCAN	300
#define SECCOMP_NR_MAX	512
/* uretprobe: called only from the kernel's own trampoline. */
#define SECCOMP_NR_URETPROBE	335

struct seccomp_refusal {
	const char	*name;
	int		 err;
};

/* Plain refusals: the reasons are in the comment at the top. */
static const struct seccomp_refusal seccomp_refused[] = {
	{ "mount", EPERM }, { "umount", EPERM }, { "umount2", EPERM },
	{ "pivot_root", EPERM }, { "move_mount", EPERM },
	{ "open_tree", EPERM }, { "fsopen", EPERM }, { "fsconfig", EPERM },
	{ "fsmount", EPERM }, { "fspick", EPERM }, { "mount_setattr", EPERM },
	{ "keyctl", EPERM }, { "add_key", EPERM }, { "request_key", EPERM },
	{ "setns", EPERM }, { "bpf", EPERM }, { "perf_event_open", EPERM },
	{ "userfaultfd", EPERM }, { "kexec_load", EPERM },
	{ "kexec_file_load", EPERM }, { "reboot", EPERM },
	{ "init_module", EPERM }, { "finit_module", EPERM },
	{ "delete_module", EPERM }, { "open_by_handle_at", EPERM },
	{ "acct", EPERM }, { "swapon", EPERM }, { "swapoff", EPERM },
	{ "quotactl", EPERM }, { "quotactl_fd", EPERM }, { "syslog", EPERM },
	{ "iopl", EPERM }, { "ioperm", EPERM }, { "settimeofday", EPERM },
	{ "clock_settime", EPERM }, { "clock_adjtime", EPERM },
	{ "vhangup", EPERM },
	{ "clone3", ENOSYS }, { "io_uring_setup", ENOSYS },
	{ "io_uring_enter", ENOSYS }, { "io_uring_register", ENOSYS },
	{ "openat2", ENOSYS }, { "lookup_dcookie", ENOSYS },
	{ "nfsservctl", ENOSYS }, { "uselib", ENOSYS }, { "sysfs", ENOSYS },
	{ "ustat", ENOSYS }, { "_sysctl", ENOSYS }, { "create_module", ENOSYS },
	{ "get_kernel_syms", ENOSYS }, { "query_module", ENOSYS },
};

/* The calls that change a file's mode, and which argument is the mode. */
static const struct {
	const char	*name;
	unsigned int	 arg;
} seccomp_chmods[] = {
	{ "chmod", 1 }, { "fchmod", 1 }, { "fchmodat", 2 }, { "fchmodat2", 2 },
};

/* Handed to the guard whatever their arguments. */
static const char *const seccomp_guarded[] = {
	"creat", "truncate", "mkdir", "mkdirat", "mknod", "mknodat",
	"symlink", "symlinkat", "link", "linkat", "rename", "renameat",
	"renameat2", "bind",
};

/*
 * open(2) flag patterns handed to the guard: (mask, value) pairs on the
 * flags argument, any of which matches.  O_TMPFILE needs a write mode, so
 * it is among them.
 */
static const uint32_t seccomp_open_flags[][2] = {
	{ O_CREAT, O_CREAT },
	{ O_TRUNC, O_TRUNC },
	{ O_ACCMODE, O_WRONLY },
	{ O_ACCMODE, O_RDWR },
	{ O_ACCMODE, O_ACCMODE },	/* 3: read and write permission */
};

static int	seccomp_nr(const char *name);
static int	seccomp_cover(scmp_filter_ctx, uint32_t action, int nr,
		    unsigned int arg, const uint32_t *allowed, size_t n,
		    const struct scmp_arg_cmp *also, uint32_t prefix, int len);
static int	seccomp_only32(scmp_filter_ctx, uint32_t action, int nr,
		    unsigned int arg, const uint32_t *allowed, size_t n,
		    const struct scmp_arg_cmp *also);
static int	seccomp_nons(scmp_filter_ctx);
static int	seccomp_sockets(scmp_filter_ctx, enum seccomp_variant);
static int	seccomp_unix_types(scmp_filter_ctx);
static int	seccomp_rules(scmp_filter_ctx, enum seccomp_variant);

/* The native number of a system call, or -1 when this architecture lacks it. */
static int
seccomp_nr(const char *name)
{
	int	nr = seccomp_syscall_resolve_name(name);

	return nr == __NR_SCMP_ERROR || nr < 0 ? -1 : nr;
}

/*
 * One rule per maximal block of 32-bit values, [prefix, prefix +
 * 2^(32-len)), that holds no allowed value: the block is matched by its
 * top len bits with a mask inside the low 32 bits.  At most about 32
 * rules per allowed value.
 */
static int
seccomp_cover(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int arg,
    const uint32_t *allowed, size_t n, const struct scmp_arg_cmp *also,
    uint32_t prefix, int len)
{
	struct scmp_arg_cmp	cmp[2];
	uint64_t		lo = prefix, hi = lo + (1ULL << (32 - len)) - 1;
	uint64_t		mask;
	size_t			i;
	int			hit = 0;

	for (i = 0; i < n; i++)
		if (allowed[i] >= lo && allowed[i] <= hi)
			hit = 1;
	if (!hit) {
		mask = len == 0 ? 0 : (0xffffffffULL << (32 - len)) &
		    0xffffffffULL;
		cmp[0] = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, mask, prefix);
		if (also != NULL)
			cmp[1] = *also;
		return seccomp_rule_add_array(ctx, action, nr,
		    also != NULL ? 2 : 1, cmp);
	}
	if (len == 32)
		return 0;	/* an allowed value */
	if (seccomp_cover(ctx, action, nr, arg, allowed, n, also, prefix,
	    len + 1) != 0)
		return -1;
	return seccomp_cover(ctx, action, nr, arg, allowed, n, also,
	    prefix | (uint32_t)(1U << (31 - len)), len + 1);
}

/*
 * Refuse (action) every value of argument arg's low 32 bits but the
 * allowed ones, when the optional condition also holds.  Width-safe by
 * construction: the upper 32 bits, which the kernel ignores, are never
 * looked at, and every low half not allowed is refused.
 */
static int
seccomp_only32(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned int arg,
    const uint32_t *allowed, size_t n, const struct scmp_arg_cmp *also)
{
	return seccomp_cover(ctx, action, nr, arg, allowed, n, also, 0, 0);
}

/*
 * socket(2) and listen(2) without namespaces (SECCOMP_NONS): the command
 * is in the host's network namespace, where the only way out is the
 * proxy's loopback listener, reached through the guard.  So socket(2)
 * makes AF_UNIX sockets (their paths are the guard's) and TCP sockets:
 * AF_INET or AF_INET6, type SOCK_STREAM (with SOCK_NONBLOCK and
 * SOCK_CLOEXEC, the only flags the kernel takes there), protocol 0 or
 * IPPROTO_TCP -- not SCTP, whose setsockopt(SCTP_SOCKOPT_CONNECTX)
 * connects without connect(2), nor MPTCP.  No UDP, raw, packet or
 * netlink socket: nothing reaches the host's network without the guard
 * seeing the address.  Every comparison is on the low 32 bits the
 * kernel reads (seccomp_only32); the type and protocol rules hold for
 * the one family their condition compares on its low 32 bits.
 * listen(2) on a TCP socket binds an ephemeral port on every address of
 * the host when the socket is unbound: the guard performs it for Unix
 * sockets only.
 */
static int
seccomp_nons(scmp_filter_ctx ctx)
{
	static const uint32_t	families[] = { AF_INET, AF_INET6, AF_UNIX };
	static const uint32_t	inet[] = { AF_INET, AF_INET6 };
	static const uint32_t	types[] = {
		SOCK_STREAM, SOCK_STREAM | SOCK_NONBLOCK,
		SOCK_STREAM | SOCK_CLOEXEC,
		SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC
	};
	static const uint32_t	protocols[] = { 0, IPPROTO_TCP };
	struct scmp_arg_cmp	fam, setting;
	uint32_t		self[1];
	size_t			i;

	if (seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 0,
	    families, sizeof(families) / sizeof(*families), NULL) != 0)
		return -1;
	for (i = 0; i < sizeof(inet) / sizeof(*inet); i++) {
		fam = SCMP_CMP(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, inet[i]);
		if (seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 1, types, sizeof(types) /
		    sizeof(*types), &fam) != 0 ||
		    seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 2, protocols, sizeof(protocols) /
		    sizeof(*protocols), &fam) != 0)
			return -1;
	}
	if (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(listen), 0) != 0)
		return -1;
	/*
	 * Removals: without a mount namespace no read-only bind keeps a
	 * protected name, and Landlock grants removal per directory; the
	 * guard checks the name (guard/nons.c).
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(unlink), 0) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(unlinkat),
	    0) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(rmdir), 0) != 0)
		return -1;
	/*
	 * prlimit64(pid, resource, new, old) setting another process's
	 * limits: the kernel checks only the user ID, and no Landlock scope
	 * covers it, so every process of the user is in reach here (the
	 * agent, pisbx-run).  A raised core limit and a CPU limit of a
	 * second make one die of SIGXCPU and dump its memory -- its
	 * environment's real credentials -- into its working directory,
	 * the workspace; a hard CPU limit kills it.  The command's own
	 * limits (pid 0, as glibc's setrlimit and bash's ulimit call it)
	 * and reading another's stay.  EPERM.
	 */
	self[0] = 0;
	setting = SCMP_CMP(2, SCMP_CMP_NE, 0);
	return seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64),
	    0, self, 1, &setting);
}

/* socket(2) and socketpair(2): the families and protocols allowed. */
static int
seccomp_sockets(scmp_filter_ctx ctx, enum seccomp_variant v)
{
	static const uint32_t	families[] = {
		AF_INET, AF_INET6, AF_NETLINK, AF_UNIX
	};
	static const uint32_t	pair_families[] = { AF_UNIX };
	static const uint32_t	netlink_protocols[] = { NETLINK_ROUTE };
	struct scmp_arg_cmp	netlink;

	/*
	 * socket(int domain, int type, int protocol): an allow-list on the
	 * low 32 bits of the domain, and for AF_NETLINK (domain compared on
	 * its low 32 bits) of the protocol.  Without namespaces, the
	 * stricter list of seccomp_nons.
	 */
	if (v & SECCOMP_NONS) {
		if (seccomp_nons(ctx) != 0)
			return -1;
	} else {
		if (seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 0, families, sizeof(families) /
		    sizeof(*families), NULL) != 0)
			return -1;
		netlink = SCMP_CMP(0, SCMP_CMP_MASKED_EQ, 0xffffffffu,
		    AF_NETLINK);
		if (seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM),
		    SCMP_SYS(socket), 2, netlink_protocols, 1, &netlink) != 0)
			return -1;
	}
	/* socketpair(int domain, ...): the same allow-list, AF_UNIX only. */
	if (seccomp_only32(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 0,
	    pair_families, 1, NULL) != 0)
		return -1;
	return 0;
}

/*
 * SECCOMP_SENDS_KERNEL: every send goes to the kernel unchecked, which is
 * safe only while the command holds no socket on which an address can
 * leave the sandbox.  With namespaces those are (1) AF_UNIX datagram
 * sockets, whose sendto/sendmsg with a path reach any host datagram
 * socket (journald, /dev/log, a notify socket), connected or not, and
 * (2) sockets of another network namespace.  Every other socket ignores
 * or refuses an address: AF_UNIX SOCK_STREAM says EISCONN or EOPNOTSUPP,
 * a connected SOCK_SEQPACKET goes to its peer (ENOTCONN unconnected),
 * AF_INET, AF_INET6 and AF_NETLINK sockets made here are the sandbox's
 * namespace's, whose only interface is its loopback (TCP fast open to an
 * address connects only there); abstract names are the namespace's too.
 * (2) is the parent's to keep out (seccomp_sends: the inherited
 * descriptors 0-2, allowUnixSockets); (1) is kept out here: socket(2) and
 * socketpair(2) of AF_UNIX with a type other than SOCK_STREAM or
 * SOCK_SEQPACKET go to the guard, which refuses them (SOCK_RAW is one:
 * unix_create makes it SOCK_DGRAM); accept(2) makes only what its
 * listener is.
 *
 * Width: the domain is compared on its low 32 bits; the type on its low
 * nibble, SOCK_TYPE_MASK, which is all __sock_create reads of the type
 * once SOCK_NONBLOCK and SOCK_CLOEXEC are taken off (any other flag bit
 * is EINVAL).  The (mask, value) pairs below cover every nibble but 1
 * (SOCK_STREAM) and 5 (SOCK_SEQPACKET).
 */
static int
seccomp_unix_types(scmp_filter_ctx ctx)
{
	static const uint32_t	types[][2] = {
		{ 0xf, 0 }, { 0xe, 2 }, { 0xf, 4 }, { 0xe, 6 }, { 0x8, 8 },
	};
	struct scmp_arg_cmp	cmp[2];
	size_t			i;

	cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX);
	for (i = 0; i < sizeof(types) / sizeof(*types); i++) {
		cmp[1] = SCMP_A1(SCMP_CMP_MASKED_EQ, types[i][0], types[i][1]);
		if (seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY,
		    SCMP_SYS(socket), 2, cmp) != 0 ||
		    seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY,
		    SCMP_SYS(socketpair), 2, cmp) != 0)
			return -1;
	}
	return 0;
}

static int
seccomp_rules(scmp_filter_ctx ctx, enum seccomp_variant v)
{
	size_t			i;
	int			nr, guarded, kernel;

	if (seccomp_sockets(ctx, v) != 0)
		return -1;

	/*
	 * Unix sockets by address.  allowAllUnixSockets: nothing to see.
	 * Otherwise (the default) every call that names where a socket goes
	 * is the guard's (which socket an fd is, and what an address says,
	 * are out of the filter's sight; the guard decides on the resolved
	 * path: a socket bound during the run, or one of allowUnixSockets).
	 * sendto(int, void *, size_t, int, struct sockaddr *addr, int): a
	 * pointer, NULL exactly when all 64 bits are 0, as the kernel reads
	 * it; send(2) is sendto with NULL.  Without namespaces
	 * (SECCOMP_NONS) they are the guard's whatever allowAllUnixSockets
	 * says: it lets through only the proxy's own address (and Unix
	 * sockets by the same rules).  Any fast path that takes one of these
	 * calls off the guard because a network namespace makes it safe
	 * must leave the SECCOMP_NONS variants alone.
	 *
	 * With no address a socket sends only to the peer a connect (the
	 * guard's) gave it, or fails: EDESTADDRREQ/ENOTCONN unconnected,
	 * EINVAL for TCP fast open (MSG_FASTOPEN with no address), whatever
	 * socket another thread swaps onto the number -- so this holds with
	 * or without a network namespace (run-sendfast.sh tries each).
	 * sendmsg and sendmmsg carry their address in memory: the guard's,
	 * but with SECCOMP_SENDS_KERNEL (seccomp_unix_types).
	 */
	guarded = (v & SECCOMP_UNIX_ALL) == 0 || (v & SECCOMP_NONS) != 0;
	kernel = guarded && (v & SECCOMP_NONS) == 0 &&
	    (v & SECCOMP_SENDS_KERNEL) != 0;
	if (guarded && seccomp_rule_add(ctx, SCMP_ACT_NOTIFY,
	    SCMP_SYS(connect), 0) != 0)
		return -1;
	if (guarded && !kernel &&
	    (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmsg),
	    0) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendmmsg),
	    0) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1,
	    SCMP_A4(SCMP_CMP_NE, 0)) != 0))
		return -1;
	if (kernel && seccomp_unix_types(ctx) != 0)
		return -1;

	/*
	 * ioctl(int fd, unsigned int cmd, ...): cmd is 32 bits to the
	 * kernel, compared on exactly those.
	 */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
	    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX)) != 0)
		return -1;

	/*
	 * chmod(const char *, mode_t mode), fchmod(int, mode_t mode),
	 * fchmodat(int, const char *, mode_t mode) and fchmodat2(..., mode_t
	 * mode, int): the set-user-ID and set-group-ID bits are refused.  The
	 * kernel reads mode as a umode_t, its low 16 bits; each mask tests
	 * one bit inside those, wherever the upper half says.  A libseccomp
	 * that does not know fchmodat2 leaves its number to the rule for
	 * unknown numbers below (ENOSYS; libc falls back to fchmodat).
	 */
	for (i = 0; i < sizeof(seccomp_chmods) / sizeof(*seccomp_chmods);
	    i++) {
		if ((nr = seccomp_nr(seccomp_chmods[i].name)) == -1)
			continue;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
		    SCMP_CMP(seccomp_chmods[i].arg, SCMP_CMP_MASKED_EQ,
		    S_ISUID, S_ISUID)) != 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
		    SCMP_CMP(seccomp_chmods[i].arg, SCMP_CMP_MASKED_EQ,
		    S_ISGID, S_ISGID)) != 0)
			return -1;
	}

	/*
	 * clone(unsigned long flags, ...): the kernel keeps the low 32 bits
	 * (lower_32_bits(clone_flags)); unshare(unsigned long flags) all 64.
	 * Either way the mask tests the one bit, CLONE_NEWUSER, wherever the
	 * kernel reads it.  allowNestedUserNamespaces lifts this rule only:
	 * mount, setns and the rest stay refused inside such a namespace.
	 */
	if ((v & SECCOMP_USERNS) == 0 && (seccomp_rule_add(ctx,
	    SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
	    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) != 0))
		return -1;

	/* No arguments compared: width does not arise. */
	for (i = 0; i < sizeof(seccomp_refused) / sizeof(*seccomp_refused);
	    i++) {
		if ((nr = seccomp_nr(seccomp_refused[i].name)) != -1 &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(seccomp_refused[i].err),
		    nr, 0) != 0)
			return -1;
	}
	for (nr = SECCOMP_NR_SCAN; nr < SECCOMP_NR_MAX; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
		    nr);

		if (name != NULL) {
			free(name);
			continue;
		}
		if (nr != SECCOMP_NR_URETPROBE &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) != 0)
			return -1;
	}

	/*
	 * open(const char *, int flags, ...), openat(int, const char *, int
	 * flags, ...): int flags, each pattern's mask inside the low 32 bits
	 * the kernel reads.
	 */
	for (i = 0; i < sizeof(seccomp_open_flags) /
	    sizeof(*seccomp_open_flags); i++) {
		if (seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(open), 1,
		    SCMP_A1(SCMP_CMP_MASKED_EQ, seccomp_open_flags[i][0],
		    seccomp_open_flags[i][1])) != 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(openat), 1,
		    SCMP_A2(SCMP_CMP_MASKED_EQ, seccomp_open_flags[i][0],
		    seccomp_open_flags[i][1])) != 0)
			return -1;
	}
	/* No arguments compared. */
	for (i = 0; i < sizeof(seccomp_guarded) / sizeof(*seccomp_guarded);
	    i++) {
		if ((nr = seccomp_nr(seccomp_guarded[i])) != -1 &&
		    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0) != 0)
			return -1;
	}
	/* umask(mode_t): noted by the guard and let through (see above). */
	return seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(umask), 0);
}

void *
seccomp_filter_build(enum seccomp_variant v)
{
	scmp_filter_ctx	ctx;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return NULL;
	/* A binary tree of system calls: the list above is long. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0 ||
	    seccomp_rules(ctx, v) != 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

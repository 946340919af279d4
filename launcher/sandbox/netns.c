/*
 * The sandbox's side of the network: bring up lo in the new network
 * namespace, create the proxy's listeners there, and pass them to the
 * parent over the control socket (SCM_RIGHTS).  A listening socket keeps
 * the namespace it was created in, so the parent accepts the sandbox's
 * connections while it dials upstreams from the host's namespace.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/sandbox/sandbox.h"

#define NET_MAXFDS	4

int
net_lo_up(void)
{
	struct ifreq	ifr;
	int		s;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1)
		goto fail;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1)
		goto fail;
	close(s);
	return 0;
fail:
	close(s);
	return -1;
}

int
net_listen_loopback(int port)
{
	struct sockaddr_in	sin;
	int			s, on = 1;

	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(s, 128) == -1) {
		close(s);
		return -1;
	}
	return s;
}

int
net_send_fds(int sock, char tag, const int *fds, int nfds)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(int) * NET_MAXFDS)];
		struct cmsghdr	align;
	} u;
	ssize_t		 n;

	if (nfds > NET_MAXFDS) {
		errno = EINVAL;
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	memset(&u, 0, sizeof(u));
	iov.iov_base = &tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfds > 0) {
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/* Receive one tagged message; returns the number of fds, -1, or 0 at EOF
 * with *tag set to 0. */
int
net_recv_fds(int sock, char *tag, int *fds, int maxfds)
{
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	union {
		char		buf[CMSG_SPACE(sizeof(int) * NET_MAXFDS)];
		struct cmsghdr	align;
	} u;
	ssize_t		 n;
	int		 nfds = 0, i;

	*tag = 0;
	memset(&msg, 0, sizeof(msg));
	iov.iov_base = tag;
	iov.iov_len = 1;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		int	got[NET_MAXFDS];
		int	k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		if (k > NET_MAXFDS)
			k = NET_MAXFDS;
		memcpy(got, CMSG_DATA(cm), sizeof(int) * k);
		for (i = 0; i < k; i++) {
			if (nfds < maxfds)
				fds[nfds++] = got[i];
			else
				close(got[i]);
		}
	}
	return nfds;
}

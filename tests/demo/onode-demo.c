// SPDX-License-Identifier: GPL-2.0
/* onode-demo.c - what an O_NODE open gives, for `make demo` */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "onode.h"

static int open_node(const char *path, int extra)
{
	struct open_how how = { .flags = O_NODE | O_NOACCESS | extra };

	return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

static void show(const char *what, const char *path, int extra)
{
	struct stat st;
	char c;
	int fd = open_node(path, extra);

	if (fd < 0) {
		printf("%-34s open: %s\n", what, strerror(errno));
		return;
	}
	fstat(fd, &st);
	printf("%-34s open: ok  fstat: %s mode %04o  F_GETFL has O_NODE: %s  read: %s\n", what,
	       S_ISFIFO(st.st_mode) ? "fifo" : S_ISCHR(st.st_mode) ? "chr" :
	       S_ISLNK(st.st_mode) ? "symlink" : S_ISDIR(st.st_mode) ? "dir" : "file",
	       st.st_mode & 07777, (fcntl(fd, F_GETFL) & O_NODE) ? "yes" : "no",
	       read(fd, &c, 1) < 0 ? strerror(errno) : "data");
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--probe")) {
		/* Exit 0 only on a kernel that knows O_NODE: openat2 rejects unknown flags. */
		int fd = open_node("/", 0);

		return fd < 0;
	}
	mkfifo("/tmp/demo.fifo", 0600);
	close(open("/tmp/demo.secret", O_CREAT | O_WRONLY, 0000));
	symlink("/nonexistent", "/tmp/demo.dangling");
	show("a fifo nobody writes to", "/tmp/demo.fifo", 0);
	show("a mode 0000 file", "/tmp/demo.secret", 0);
	show("/dev/null", "/dev/null", 0);
	show("a dangling symlink, O_NOFOLLOW", "/tmp/demo.dangling", O_NOFOLLOW);
	show("the same without O_NOFOLLOW", "/tmp/demo.dangling", 0);
	printf("%-34s open: %s\n", "O_NODE with O_RDONLY",
	       syscall(SYS_openat2, AT_FDCWD, "/tmp/demo.secret",
		       &(struct open_how){ .flags = O_NODE | O_RDONLY }, sizeof(struct open_how)) < 0 ?
		       strerror(errno) : "ok");
	return 0;
}

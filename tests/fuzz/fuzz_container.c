// SPDX-License-Identifier: GPL-2.0
/* fuzz_container.c - libFuzzer target: container_from_cgroup() on any path, and what it promises */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"

/*
 * Beyond not crashing or reading out of bounds: a container always has an
 * id, every string comes back terminated, and the cgroup paths the engines
 * make (checked once, before fuzzing) name what they should.
 */
static void fail(const char *what, const char *path)
{
	fprintf(stderr, "fuzz_container: broken promise: %s (path '%s')\n", what, path);
	abort();
}

#define ID "9a5a1c3e0b7d4f2a8c6e1b3d5f7a9c0e2b4d6f8a1c3e5b7d9f0a2c4e6b8d0f1a"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9"
#define UID_ "1f2e3d4c_5b6a_4978_8695_a4b3c2d1e0f9"

static const struct {
	const char *path, *runtime, *id, *pod_uid, *unit;
} known[] = {
	{ "/machine.slice/libpod-" ID ".scope/container", "podman", ID, "", "libpod-" ID ".scope" },
	{ "machine.slice/libpod-conmon-" ID ".scope", NULL, "", "", "libpod-conmon-" ID ".scope" },
	{ "/system.slice/docker-" ID ".scope", "docker", ID, "", "docker-" ID ".scope" },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/cri-containerd-" ID ".scope",
	  "containerd", ID, UID, "cri-containerd-" ID ".scope" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope", "cri-o", ID, UID,
	  "crio-" ID ".scope" },
	{ "/kubepods/burstable/pod" UID "/" ID, "cri", ID, UID, "" },
	{ "/docker/" ID, "docker", ID, "", "" },
	{ "/machine.slice/systemd-nspawn@web.service/payload", "nspawn", "web", "",
	  "systemd-nspawn@web.service" },
	{ "/machine.slice/machine-my\\x2dvm.scope", "machined", "my-vm", "",
	  "machine-my\\x2dvm.scope" },
	{ "/lxc.payload.c1/init.scope", "lxc", "c1", "", "init.scope" },
	{ "/system.slice/cron.service", NULL, "", "", "cron.service" },
	{ "/user.slice/user-1000.slice/session-2.scope", NULL, "", "", "session-2.scope" },
	/* podman in a docker container: the innermost names it */
	{ "/system.slice/docker-" ID ".scope/machine.slice/libpod-" ID2 ".scope", "podman", ID2, "",
	  "libpod-" ID2 ".scope" },
	/* not an id: 65 digits */
	{ "/system.slice/docker-" ID "0.scope", NULL, "", "", "docker-" ID "0.scope" },
	{ "", NULL, "", "", "" },
};

static void check_known(void)
{
	struct container_info c;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		container_from_cgroup(known[i].path, &c);
		if ((c.runtime == NULL) != (known[i].runtime == NULL) ||
		    (c.runtime && strcmp(c.runtime, known[i].runtime)))
			fail("the wrong runtime", known[i].path);
		if (strcmp(c.id, known[i].id))
			fail("the wrong id", known[i].path);
		if (strcmp(c.pod_uid, known[i].pod_uid))
			fail("the wrong pod UID", known[i].path);
		if (strcmp(c.unit, known[i].unit))
			fail("the wrong unit", known[i].path);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	check_known();
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct container_info c;
	char *path = strndup((const char *)data, size);

	if (!path)
		return 0;
	container_from_cgroup(path, &c);
	if (c.runtime && !c.id[0])
		fail("a container without an id", path);
	if (!memchr(c.id, '\0', sizeof(c.id)) || !memchr(c.unit, '\0', sizeof(c.unit)) ||
	    !memchr(c.pod_uid, '\0', sizeof(c.pod_uid)))
		fail("a string not terminated", path);
	free(path);
	return 0;
}

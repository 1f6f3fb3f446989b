/* SPDX-License-Identifier: GPL-2.0 */
/* container.h - the container or unit a cgroup path names (container.c), for events */
#ifndef __NODEFD_CONTAINER_H
#define __NODEFD_CONTAINER_H

/*
 * Container engines name the cgroups they make after the container:
 * machine.slice/libpod-ID.scope (podman), system.slice/docker-ID.scope,
 * kubepods.slice/.../kubepods-QOS-podUID.slice/cri-containerd-ID.scope,
 * machine.slice/systemd-nspawn@NAME.service, and the same under cgroupfs
 * drivers (docker/ID, kubepods/QOS/podUID/ID).  These functions read a
 * path as a string; nothing is looked up, so a path recorded at an event
 * names its container after the cgroup is gone.
 */

#include <stddef.h>

#define CONTAINER_ID_MAX 128	/* bytes of an id or a machine name, with its NUL */
#define CONTAINER_UNIT_MAX 256	/* bytes of a systemd unit name, with its NUL */

struct container_info {
	const char *runtime;	/* "podman", "docker", "containerd", "cri-o", "cri", "nspawn",
				 * "machined", "lxc"; NULL: no container */
	char id[CONTAINER_ID_MAX];	/* the engine's id, or the machine's name */
	char pod_uid[40];	/* the Kubernetes pod's UID, "" when the path holds none */
	char unit[CONTAINER_UNIT_MAX]; /* the innermost systemd unit (.service, .scope), or "" */
};

/*
 * What the cgroup path @path (relative to the hierarchy's root, with or
 * without a leading '/') names: the innermost container on it, the pod
 * that holds it, the innermost unit.  Always fills @c.
 */
void container_from_cgroup(const char *path, struct container_info *c);

#endif /* __NODEFD_CONTAINER_H */

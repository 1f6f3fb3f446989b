/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* onode.h - O_NODE and O_NOACCESS for user space built against older headers */
#ifndef __ONODE_H
#define __ONODE_H

/*
 * The values come from kernel-config/patches/0001-*.patch and must stay in
 * step with it.  Only the asm-generic layout (x86, arm64, riscv, ...) is
 * given: the architectures with their own O_* layout get their own value
 * there, and guessing one here would be worse than failing to build.
 */
#if defined(__alpha__) || defined(__hppa__) || defined(__sparc__)
#error "onode.h: O_NODE has an architecture-specific value here; take it from the kernel's uapi headers"
#endif

#ifndef O_NOACCESS
#define O_NOACCESS 00000003
#endif

#ifndef O_NODE
#define O_NODE 040000000
#endif

#endif /* __ONODE_H */

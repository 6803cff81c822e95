/* The jail's seccomp filter: compiled with libseccomp in the parent, once
 * per runtime, exported as classic BPF and handed to the child, which loads
 * it as the last step before execve. Default allow, with a deny list at
 * least as strict as Docker's default profile for an unprivileged
 * container; foreign architectures (i386, x32) kill the process. */
#include <errno.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/jail/jail.h"

/* Denied with EPERM, whatever their arguments. */
static const char *const denied_syscalls[] = {
    /* file systems and the mount table */
    "mount", "umount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr", "quotactl", "quotactl_fd", "nfsservctl",
    /* namespaces: no way into or out of new ones */
    "unshare", "setns",
    /* kernel keyring */
    "keyctl", "add_key", "request_key",
    /* kernel attack surface with a history of exploits */
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "lookup_dcookie", "fanotify_init", "kcmp",
    /* other processes' memory */
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise",
    /* the machine itself */
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "create_module", "query_module", "get_kernel_syms", "reboot", "swapon", "swapoff", "acct",
    "iopl", "ioperm", "syslog", "vhangup", "uselib", "_sysctl", "sysfs",
    /* file handles bypass path permission checks */
    "open_by_handle_at", "name_to_handle_at",
    /* clocks */
    "settimeofday", "clock_settime", "clock_settime64", "clock_adjtime", "clock_adjtime64",
    "adjtimex", "stime",
    /* NUMA placement (CAP_SYS_NICE in Docker's profile) */
    "mbind", "migrate_pages", "move_pages", "set_mempolicy",
};

/* Namespace flags that clone() may not carry. */
static const unsigned long clone_ns_flags[] = {
    CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
    CLONE_NEWCGROUP,
#ifdef CLONE_NEWTIME
    CLONE_NEWTIME,
#endif
};

static int add_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                    const struct scmp_arg_cmp *args, eb_error **err) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR)
    return 0; /* not a syscall on this architecture */
  int r = seccomp_rule_add_array(ctx, action, nr, n, args);
  if (r < 0 && r != -EDOM)
    return eb_error_set(err, -r, "seccomp rule for %s", name);
  return 0;
}

/* personality() takes only the values Docker's profile allows: PER_LINUX,
 * PER_LINUX32, the UNAME26 variants and the query 0xffffffff. libseccomp
 * cannot say "none of these values" (one comparison per argument and rule),
 * so this small filter is written by hand and stacked on the other. Other
 * architectures are left to the first filter, which kills them. */
static unsigned short personality_filter(struct sock_filter *f, uint32_t audit_arch, int nr) {
  unsigned short n = 0;
  const uint32_t allowed[] = {PER_LINUX, PER_LINUX32, UNAME26, UNAME26 | PER_LINUX32, 0xffffffffu};
  const uint32_t lo = offsetof(struct seccomp_data, args[0]);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint32_t arg_lo = lo, arg_hi = lo + 4;
#else
  const uint32_t arg_lo = lo + 4, arg_hi = lo;
#endif
  /* 7 loads and checks, one test per allowed value, then the two returns. */
  const unsigned short allow_at = (unsigned short)(7 + EB_ARRAY_SIZE(allowed));
  const unsigned short deny_at = (unsigned short)(allow_at + 1);
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 0, (unsigned char)(allow_at - n - 1));
  n++;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, (unsigned char)(allow_at - n - 1));
  n++;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_hi);
  f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (unsigned char)(deny_at - n - 1));
  n++;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_lo);
  for (size_t i = 0; i < EB_ARRAY_SIZE(allowed) - 1; i++, n++) /* the last one falls through */
    f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, allowed[i], (unsigned char)(allow_at - n - 1), 0);
  f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, allowed[EB_ARRAY_SIZE(allowed) - 1], 0, 1);
  n++;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); /* allow_at */
  f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                        SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)); /* deny_at */
  return n;
}

int jail_seccomp_compile(jail_seccomp *out, eb_error **err) {
  memset(out, 0, sizeof(*out));
  int ret = 0;
  int memfd = -1;
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return eb_error_set(err, ENOMEM, "seccomp_init");
  /* Syscalls of another architecture (i386 through int 0x80, x32) do not
   * match the native filter: kill the process. */
  int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (r < 0) {
    ret = eb_error_set(err, -r, "seccomp bad-arch action");
    goto out;
  }
  /* A binary tree over syscall numbers rather than a linear chain: fewer
   * instructions per syscall for the program, and for the kernel when it
   * precomputes its per-syscall cache at load time (once per execution). */
  r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (r < 0) {
    ret = eb_error_set(err, -r, "seccomp optimize attribute");
    goto out;
  }
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (size_t i = 0; i < EB_ARRAY_SIZE(denied_syscalls); i++)
    if ((ret = add_rule(ctx, eperm, denied_syscalls[i], 0, NULL, err)) < 0)
      goto out;

  for (size_t i = 0; i < EB_ARRAY_SIZE(clone_ns_flags); i++) {
    struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_MASKED_EQ, clone_ns_flags[i], clone_ns_flags[i]);
    if ((ret = add_rule(ctx, eperm, "clone", 1, &a, err)) < 0)
      goto out;
  }
  /* clone3 passes its flags in memory, where a filter cannot look: answer
   * ENOSYS so that libc falls back to clone(), which is checked above. */
  if ((ret = add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err)) < 0)
    goto out;

  /* Pushing bytes into a terminal's input queue (and the console's). */
  {
    struct scmp_arg_cmp a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    if ((ret = add_rule(ctx, eperm, "ioctl", 1, &a, err)) < 0)
      goto out;
    struct scmp_arg_cmp b = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
    if ((ret = add_rule(ctx, eperm, "ioctl", 1, &b, err)) < 0)
      goto out;
  }
  memfd = memfd_create("execbox-seccomp", MFD_CLOEXEC);
  if (memfd < 0) {
    ret = eb_error_set(err, errno, "memfd for seccomp export");
    goto out;
  }
  r = seccomp_export_bpf(ctx, memfd);
  if (r < 0) {
    ret = eb_error_set(err, -r, "export seccomp filter");
    goto out;
  }
  struct stat st;
  if (fstat(memfd, &st) < 0 || st.st_size <= 0 ||
      st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
      st.st_size / (off_t)sizeof(struct sock_filter) > 0xffff) {
    ret = eb_error_set(err, EB_ERR_SANDBOX, "exported seccomp filter has a bad size");
    goto out;
  }
  out->filter = malloc((size_t)st.st_size);
  if (out->filter == NULL) {
    ret = eb_error_set(err, ENOMEM, "seccomp filter");
    goto out;
  }
  if (pread(memfd, out->filter, (size_t)st.st_size, 0) != st.st_size) {
    ret = eb_error_set(err, EB_ERR_SANDBOX, "read back seccomp filter");
    free(out->filter);
    out->filter = NULL;
    goto out;
  }
  out->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
  out->personality_len =
      personality_filter(out->personality, seccomp_arch_native(),
                         seccomp_syscall_resolve_name("personality"));
out:
  if (memfd >= 0)
    close(memfd);
  seccomp_release(ctx);
  return ret;
}

void jail_seccomp_free(jail_seccomp *s) {
  free(s->filter);
  memset(s, 0, sizeof(*s));
}

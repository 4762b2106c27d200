//! The seccomp filter of sandboxed commands: no Unix-domain sockets of their own. Landlock
//! confines paths, but `connect` to a pathname socket (tmux's, the session bus, docker.sock,
//! an ssh agent) is not a file access it sees, and an abstract socket has no path at all: a
//! command that can open one drives a process outside the sandbox. `socket(AF_UNIX, …)` fails
//! with `EACCES` (`socketpair`, which reaches nothing, still works), and so does `io_uring_setup`,
//! which could open sockets without the `socket` system call.

/// The filter for this architecture, or `None` where none is written (the check says so).
pub(crate) fn deny_unix_sockets() -> Option<Vec<libc::sock_filter>> {
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "x86_64")]
    const SOCKET: u32 = 41;
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    #[cfg(target_arch = "aarch64")]
    const SOCKET: u32 = 198;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return None;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        const IO_URING_SETUP: u32 = 425; // the same number on both
        const X32_BIT: u32 = 0x4000_0000;
        // struct seccomp_data: nr at 0, arch at 4, args[0] (low half, little-endian) at 16.
        let ld =
            |k: u32| libc::sock_filter { code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, jt: 0, jf: 0, k };
        let jeq = |k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        };
        let jge = |k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt,
            jf,
            k,
        };
        let ret = |k: u32| libc::sock_filter { code: (libc::BPF_RET | libc::BPF_K) as u16, jt: 0, jf: 0, k };
        let deny = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;
        Some(vec![
            ld(4),                           // 0: arch
            jeq(ARCH, 1, 0),                 // 1: another ABI (i386 on x86_64) → deny
            ret(deny),                       // 2
            ld(0),                           // 3: nr
            jge(X32_BIT, 5, 0),              // 4: x32 → deny
            jeq(IO_URING_SETUP, 4, 0),       // 5: → deny
            jeq(SOCKET, 0, 2),               // 6: socket → look at the family; else allow
            ld(16),                          // 7: args[0]
            jeq(libc::AF_UNIX as u32, 1, 0), // 8
            ret(libc::SECCOMP_RET_ALLOW),    // 9
            ret(deny),                       // 10
        ])
    }
}

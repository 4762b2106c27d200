//! The spawner's only `unsafe`: what a child does between `fork` and `exec`, and the probes
//! `agent-min sandbox check` makes. Everything a child needs is prepared in the agent before
//! the fork; the child only makes raw system calls (no allocation, no locks).
#![allow(unsafe_code)] // the spawner's system calls between fork and exec (its `sys` module)

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Which process group / session the child gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// The agent's own (curl, git, the editor: they end with their request).
    Inherit,
    /// A process group of its own, so a timeout or Ctrl-C stops all it started.
    Own,
    /// A session of its own: also no controlling terminal (no `TIOCSTI` into the person's).
    Session,
}

/// A read-only bind mount: the path, and the mount flags it already has (a user namespace may
/// not drop `nosuid`, `nodev`, … when remounting).
pub(crate) struct ReadOnly {
    /// NUL-terminated path.
    pub path: CString,
    /// `MS_NOSUID | MS_NODEV | …` as found.
    pub locked: libc::c_ulong,
}

/// What the child does before `exec`, in this order.
pub(crate) struct ChildSetup {
    /// 1. Its process group or session.
    pub group: Group,
    /// 2. Killed (`SIGKILL`) when the agent's spawning thread ends (`PR_SET_PDEATHSIG`).
    pub die_with_agent: bool,
    /// 3. A watchdog (a grandchild outside the group and any sandbox) that kills the whole
    ///    group when the agent dies, even by `kill -9` (needs `group != Inherit`).
    pub watchdog: bool,
    /// 4. A descriptor (opened close-on-exec) the program is to inherit.
    pub inherit_fd: Option<i32>,
    /// 5. A new network namespace (loopback down).
    pub unshare_net: bool,
    /// `uid_map` / `gid_map` lines when a user namespace is needed (not root).
    pub id_maps: Option<(String, String)>,
    /// 6. A new mount namespace in which these paths are bound read-only,
    pub read_only: Vec<ReadOnly>,
    ///    and these directories (`/proc/ID` of other processes holding a secret in their
    ///    environment, and of each of their threads) are covered with an empty read-only tmpfs
    ///    (one that is gone by then is skipped).
    pub masked: Vec<CString>,
    /// 7. The Landlock ruleset (also sets `no_new_privs`).
    pub ruleset: Option<landlock::RulesetCreated>,
    /// 8. A seccomp filter.
    pub seccomp: Option<Vec<libc::sock_filter>>,
    /// 9. Resource limits: (resource, soft limit, hard limit).
    pub limits: &'static [(rustix::process::Resource, u64, u64)],
}

impl ChildSetup {
    /// Nothing but the defaults of `std::process::Command`.
    pub(crate) fn plain() -> ChildSetup {
        ChildSetup {
            group: Group::Inherit,
            die_with_agent: false,
            watchdog: false,
            inherit_fd: None,
            unshare_net: false,
            id_maps: None,
            read_only: Vec::new(),
            masked: Vec::new(),
            ruleset: None,
            seccomp: None,
            limits: &[],
        }
    }
}

/// `prctl`'s unused and "on" arguments, as the `unsigned long` the kernel reads.
const NIL: libc::c_ulong = 0;
const ON: libc::c_ulong = 1;

fn check(r: libc::c_int) -> std::io::Result<()> {
    if r == -1 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Installs `setup` to run in the child after `fork`.
pub(crate) fn before_exec(cmd: &mut Command, setup: ChildSetup) {
    let agent = std::process::id() as libc::pid_t;
    let uid = rustix::process::geteuid().as_raw();
    let mut setup = Some(setup);
    // SAFETY: the closure runs in the forked child of a possibly multi-threaded process, where
    // only async-signal-safe work is allowed: it makes raw system calls (setsid, setpgid, prctl,
    // fork, waitpid, close_range, pidfd_open, poll, kill, _exit, unshare, mount, open/write of
    // /proc files, landlock_restrict_self, seccomp, setrlimit) on integers and on paths, strings and BPF
    // programs prepared before the fork, and allocates nothing on the success path; `take`
    // moves the prepared values out without allocating.
    unsafe {
        cmd.pre_exec(move || {
            let Some(s) = setup.take() else { return Ok(()) };
            match s.group {
                Group::Inherit => {}
                Group::Own => check(libc::setpgid(0, 0))?,
                Group::Session => check(libc::setsid())?,
            }
            if s.die_with_agent {
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, NIL, NIL, NIL))?;
                if libc::getppid() != agent {
                    libc::_exit(1); // the agent died before the line above took effect
                }
            }
            if s.watchdog && s.group != Group::Inherit {
                start_watchdog(agent, libc::getpid())?;
            }
            if let Some(fd) = s.inherit_fd {
                check(libc::fcntl(fd, libc::F_SETFD, 0))?;
            }
            let mut flags = 0;
            if s.unshare_net {
                flags |= libc::CLONE_NEWNET;
            }
            let new_ns = !s.read_only.is_empty() || !s.masked.is_empty();
            if new_ns {
                flags |= libc::CLONE_NEWNS;
            }
            if flags != 0 {
                let userns = uid != 0;
                if userns {
                    flags |= libc::CLONE_NEWUSER;
                }
                check(libc::unshare(flags))?;
                if let (true, Some((uid_map, gid_map))) = (userns, &s.id_maps) {
                    // The agent is non-dumpable, which makes its `/proc/self` files root's; the
                    // child (about to exec, which resets it anyway) must own them to map its ids.
                    check(libc::prctl(libc::PR_SET_DUMPABLE, ON, NIL, NIL, NIL))?;
                    write_proc(c"/proc/self/setgroups", b"deny")?;
                    write_proc(c"/proc/self/uid_map", uid_map.as_bytes())?;
                    write_proc(c"/proc/self/gid_map", gid_map.as_bytes())?;
                }
            }
            if new_ns {
                let none = std::ptr::null::<libc::c_char>();
                check(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
                for ro in &s.read_only {
                    let p = ro.path.as_ptr();
                    check(libc::mount(p, p, none, libc::MS_BIND | libc::MS_REC, std::ptr::null()))?;
                    let f = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | ro.locked;
                    check(libc::mount(none, p, none, f, std::ptr::null()))?;
                }
                for m in &s.masked {
                    let f = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                    let r = libc::mount(c"none".as_ptr(), m.as_ptr(), c"tmpfs".as_ptr(), f, std::ptr::null());
                    // A process that ended since it was found has no file left to cover.
                    if r != 0 && *libc::__errno_location() != libc::ENOENT {
                        check(r)?;
                    }
                }
            }
            if let Some(ruleset) = s.ruleset {
                ruleset.restrict_self().map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
            }
            if let Some(filter) = &s.seccomp {
                check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, ON, NIL, NIL, NIL))?;
                let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut _ };
                check(libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    &prog as *const libc::sock_fprog as libc::c_ulong,
                ))?;
            }
            for &(resource, soft, hard) in s.limits {
                let limit = rustix::process::Rlimit { current: Some(soft), maximum: Some(hard) };
                rustix::process::setrlimit(resource, limit)?;
            }
            Ok(())
        });
    }
}

/// Forks (twice, so it is nobody's child but init's) a process that waits for the agent to
/// end and then kills process group `group`; it leaves on its own once the group is empty.
/// It is started before any sandbox is applied, outside the group: a command can neither
/// signal it (Landlock's signal scope) nor take it down with its group.
///
/// # Safety
/// Call only in a forked child, before `exec`.
// SAFETY: an `unsafe fn` for its callers (see `# Safety`); its body only makes system calls on
// integers.
unsafe fn start_watchdog(agent: libc::pid_t, group: libc::pid_t) -> std::io::Result<()> {
    let first = libc::fork();
    if first == -1 {
        return Err(std::io::Error::last_os_error());
    }
    if first > 0 {
        let mut status = 0;
        while libc::waitpid(first, &mut status, 0) == -1 {
            if *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        return Ok(());
    }
    // The intermediate child: fork the watchdog and leave at once.
    if libc::fork() != 0 {
        libc::_exit(0);
    }
    // The watchdog. No descriptor of the agent's stays open here (pipes would never reach EOF).
    libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
    libc::setpgid(0, 0);
    let pidfd = libc::syscall(libc::SYS_pidfd_open, agent, 0u32) as libc::c_int;
    if pidfd < 0 && *libc::__errno_location() == libc::ESRCH {
        libc::kill(-group, libc::SIGKILL); // the agent is already gone
        libc::_exit(0);
    }
    loop {
        // Without pidfds (before Linux 5.3) the poll is only a pause and the agent is looked for
        // by pid.
        let mut pfd = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
        let ended = libc::poll(&mut pfd, 1, 500) > 0 && pidfd >= 0
            || pidfd < 0 && libc::kill(agent, 0) == -1 && *libc::__errno_location() == libc::ESRCH;
        if ended {
            break;
        }
        if libc::kill(-group, 0) == -1 && *libc::__errno_location() == libc::ESRCH {
            libc::_exit(0); // the group ended first
        }
    }
    libc::kill(-group, libc::SIGKILL);
    libc::_exit(0)
}

/// Writes `data` to a `/proc/self` file with raw system calls (no allocation).
///
/// # Safety
/// Call only in a forked child, before `exec` (it is safe anywhere, but only needed there).
// SAFETY: an `unsafe fn` for its callers (see `# Safety`); it passes `path`, a valid C string,
// and `data`'s own pointer and length to open(2) and write(2).
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    check(fd)?;
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    libc::close(fd);
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The highest Landlock ABI the kernel offers (0: none).
pub(crate) fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: with a NULL attribute pointer, size 0 and the VERSION flag the call only returns
    // an integer; no memory is read or written.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    r.max(0)
}

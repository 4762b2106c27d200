//! HTTP through a `curl` subprocess: the binary never opens a socket itself.
//!
//! The request body goes to curl on stdin (`--data-binary @-`). The headers, which carry the API
//! key, and the URL, which may carry a token, go through an inherited pipe as curl's config
//! (`-K /dev/fd/N`), so neither is on any process's argv nor in any file. curl is killed with the agent (`PR_SET_PDEATHSIG`). `-D -` makes curl write the response headers to stdout before the body, so
//! the status and headers (e.g. `retry-after`) are read from the protocol, not guessed from the
//! body. `-N` turns off curl's output buffering so each SSE chunk arrives as it is sent.
#![allow(unsafe_code)] // the key's pipe (pipe2, fcntl, OwnedFd::from_raw_fd) and curl's child set-up

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, ChildStdout, Stdio};

use crate::run::spawn;
use crate::run::ui::interrupt;

/// One HTTP POST to make.
pub(crate) struct Request<'a> {
    /// Full URL.
    pub url: &'a str,
    /// Header lines as (name, value); may contain secrets.
    pub headers: &'a [(String, String)],
    /// The request body.
    pub body: &'a [u8],
    /// Seconds allowed to connect.
    pub connect_timeout: u32,
    /// Seconds without a single byte received before curl gives up.
    pub idle_timeout: u32,
}

/// Why curl could not give us a response.
#[derive(Debug)]
pub(crate) enum CurlError {
    /// `curl` is not installed or not on PATH.
    Missing,
    /// Spawning or talking to curl failed.
    Io(io::Error),
    /// curl exited with an error (couldn't connect, timed out, …): its exit code and message.
    Failed {
        /// curl's exit code.
        code: i32,
        /// curl's own error line.
        message: String,
    },
}

impl std::fmt::Display for CurlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CurlError::Missing => write!(
                f,
                "`curl` was not found on PATH; agent-min talks HTTP only through curl — install it (e.g. `apt-get install curl`)"
            ),
            CurlError::Io(e) => write!(f, "running curl failed: {e}"),
            CurlError::Failed { code, message } => {
                write!(f, "curl failed (exit {code}): {}", message.trim())
            }
        }
    }
}

/// A response being streamed from curl.
pub(crate) struct Response {
    /// HTTP status code of the final response.
    pub status: u16,
    /// Response headers of the final response (names lower-cased).
    pub headers: Vec<(String, String)>,
    child: Child,
    stdout: BufReader<ChildStdout>,
    _guard: interrupt::Guard,
}

impl Response {
    /// The first header with this (lower-case) name.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// curl's process id (for a caller's own deadline; valid until `finish` or `abort`).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads the next chunk of the body; `Ok(0)` at its end.
    pub(crate) fn read_chunk(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stdout.read(buf)
    }

    /// Waits until body bytes can be read without blocking, or `until` passes; false then.
    pub(crate) fn wait_readable(&mut self, until: std::time::Instant) -> bool {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        loop {
            if !self.stdout.buffer().is_empty() {
                return true;
            }
            let Some(left) = until.checked_duration_since(std::time::Instant::now()) else { return false };
            let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
            let mut fds = [PollFd::new(self.stdout.get_ref(), PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => return false,
                Ok(_) => return true, // data, end of stream or an error: the read will tell
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return true,
            }
        }
    }

    /// Reads the whole remaining body (for error responses), at most `limit` bytes.
    pub(crate) fn read_rest(&mut self, limit: usize) -> Vec<u8> {
        let mut v = Vec::new();
        let _ = (&mut self.stdout).take(limit as u64).read_to_end(&mut v);
        v
    }

    /// Waits for curl after the body ended; an error if curl reports one (e.g. the connection
    /// dropped mid-stream).
    pub(crate) fn finish(mut self) -> Result<(), CurlError> {
        let status = self.child.wait().map_err(CurlError::Io)?;
        if status.success() {
            return Ok(());
        }
        Err(failure(&mut self.child, status.code().unwrap_or(-1)))
    }

    /// Stops reading: kills curl (used once the first tool block has closed).
    pub(crate) fn abort(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn failure(child: &mut Child, code: i32) -> CurlError {
    let mut message = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut message);
    }
    let message = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim_start_matches("curl: ").to_string();
    CurlError::Failed { code, message }
}

/// Starts the request and reads the response status and headers.
pub(crate) fn post(req: &Request<'_>) -> Result<Response, CurlError> {
    send(req, true, None)
}

/// A POST that a cancelled turn does not stop (it is still killed with the agent): an MCP
/// notification, above all the `notifications/cancelled` a cancel itself sends — as part of
/// the turn, its curl was killed as it started, and the server's tool ran on.
pub(crate) fn post_beyond_turn(req: &Request<'_>) -> Result<Response, CurlError> {
    send(req, true, Some(&Killer::default()))
}

/// A GET of `req.url` (the body is not sent): status and headers, then the body as [`post`]'s.
pub(crate) fn get(req: &Request<'_>) -> Result<Response, CurlError> {
    send(req, false, None)
}

/// A GET that outlives turns (an MCP server's event stream): as [`get`], but not stopped when
/// a turn is cancelled (it is still killed with the agent), and killable from another thread
/// with `killer` from the moment curl starts, headers or not.
pub(crate) fn get_stream(req: &Request<'_>, killer: &Killer) -> Result<Response, CurlError> {
    send(req, false, Some(killer))
}

/// A long request's curl, killable from another thread until it is reaped. Whoever reaps curl
/// calls [`Killer::reaped`] first, so a kill never reaches a pid the system gave another
/// process since.
#[derive(Debug, Default)]
pub(crate) struct Killer(std::sync::Mutex<(Option<u32>, bool)>);

impl Killer {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Option<u32>, bool)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// curl started as `pid` (killed at once if [`Killer::kill`] came first).
    fn started(&self, pid: u32) {
        let mut s = self.lock();
        if s.1 {
            interrupt::send_signal(pid as i32, libc::SIGKILL);
        } else {
            s.0 = Some(pid);
        }
    }

    /// curl is about to be waited for: no kill from now on.
    pub(crate) fn reaped(&self) {
        self.lock().0 = None;
    }

    /// Kills curl if it runs, and any curl started later with this killer.
    pub(crate) fn kill(&self) {
        let mut s = self.lock();
        s.1 = true;
        if let Some(pid) = s.0.take() {
            interrupt::send_signal(pid as i32, libc::SIGKILL);
        }
    }
}

fn send(req: &Request<'_>, post: bool, killer: Option<&Killer>) -> Result<Response, CurlError> {
    let of_turn = killer.is_none();
    // The headers and the URL go to curl as a config read from an inherited pipe, never on its
    // command line, which every process of the user can read (`/proc/PID/cmdline`): the key
    // is in a header, and a URL may hold a token (an MCP server's, a base URL's user info).
    let mut config = String::new();
    for (name, value) in req.headers {
        if name.contains(['\r', '\n']) || value.contains(['\r', '\n']) {
            return Err(CurlError::Io(io::Error::other(format!(
                "header {name} contains a line break; check the API key / header value"
            ))));
        }
        config.push_str(&format!("header = {}\n", config_quoted(&format!("{name}: {value}"))));
    }
    // An empty `Expect:` stops curl from waiting for `100 Continue` before sending large bodies.
    config.push_str("header = \"Expect:\"\n");
    if req.url.contains(|c: char| c.is_control()) {
        return Err(CurlError::Io(io::Error::other(format!("the URL {:?} contains a control character", req.url))));
    }
    config.push_str(&format!("url = {}\n", config_quoted(req.url)));
    let headers = headers_pipe(config.as_bytes()).map_err(CurlError::Io)?;
    let headers_fd = headers.as_raw_fd();
    let curl = spawn::find_program("curl").ok_or(CurlError::Missing)?;
    let mut cmd =
        spawn::command(curl, spawn::Policy::Curl { headers_fd }).map_err(|e| CurlError::Io(io::Error::other(e)))?;
    // `-q` must come first: no ~/.curlrc (a `verbose` there would print the key's header).
    // `-g`: a URL's `[1-3]` and `{a,b}` are characters, never curl's globs (an MCP server names
    // the URL it is sent messages at; a glob would turn one message into hundreds of requests).
    cmd.args(["-q", "-sS", "-N", "-g", "-D", "-", "--suppress-connect-headers"])
        .args(if post { &["-X", "POST", "--data-binary", "@-"][..] } else { &["-G"][..] })
        .arg("--connect-timeout")
        .arg(req.connect_timeout.to_string())
        .args(["--speed-limit", "1", "--speed-time"])
        .arg(req.idle_timeout.to_string())
        .arg("-K")
        .arg(format!("/dev/fd/{headers_fd}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The spawner keeps the key out of curl's environment (it goes through the header pipe
    // only), makes curl die with the agent (spawned from the main thread, alive as long as the
    // process) and lets it alone inherit the pipe.
    let child = cmd.spawn();
    drop(headers); // curl has its own copy of the read end
    let mut child =
        child.map_err(|e| if e.kind() == io::ErrorKind::NotFound { CurlError::Missing } else { CurlError::Io(e) })?;
    let guard = interrupt::track_pid(child.id());
    if of_turn {
        interrupt::part_of_turn(child.id() as i32);
    }
    if let Some(k) = killer {
        k.started(child.id());
    }
    {
        let mut stdin = child.stdin.take().expect("piped stdin");
        // curl reads all of `@-` before connecting, so writing it all here cannot deadlock.
        if let Err(e) = stdin.write_all(if post { req.body } else { b"" }) {
            if e.kind() != io::ErrorKind::BrokenPipe {
                return Err(CurlError::Io(e));
            }
        }
    }
    let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    match read_head(&mut stdout) {
        Ok(Some((status, headers))) => Ok(Response { status, headers, child, stdout, _guard: guard }),
        Ok(None) => {
            if let Some(k) = killer {
                k.reaped();
            }
            let code = child.wait().map_err(CurlError::Io)?.code().unwrap_or(-1);
            Err(failure(&mut child, code))
        }
        Err(e) => {
            if let Some(k) = killer {
                k.reaped();
            }
            let _ = child.kill();
            let _ = child.wait();
            Err(CurlError::Io(e))
        }
    }
}

/// `text` as a value in a curl config file: in double quotes, in which curl reads `\\`, `\"`
/// and `\t` as escapes (a line break was refused before).
fn config_quoted(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"").replace('\t', "\\t");
    format!("\"{escaped}\"")
}

/// A pipe holding `text`, its write end closed: the read end, close-on-exec, numbered 3 or
/// higher (so the child's stdin/stdout/stderr can never land on it). curl's config (the headers
/// and the URL) reaches it this way, never through a file or argv: nothing holding the key
/// exists on disk, even after a kill -9.
fn headers_pipe(text: &[u8]) -> io::Result<OwnedFd> {
    // The whole text is written before curl starts: it must fit in the pipe's buffer.
    if text.len() > 16 * 1024 {
        return Err(io::Error::other("request headers too large"));
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the two-element array with new descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    std::fs::File::from(w).write_all(text)?;
    // SAFETY: F_DUPFD_CLOEXEC only creates a new descriptor.
    let fd = unsafe { libc::fcntl(r.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just created by fcntl.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A status code and its headers.
type Head = (u16, Vec<(String, String)>);

/// Reads header blocks until a final one: not 1xx, not a proxy's `200 Connection established`.
/// `None` if stdout ended first.
fn read_head(r: &mut impl BufRead) -> io::Result<Option<Head>> {
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let status_line = String::from_utf8_lossy(&line).trim().to_string();
        if status_line.is_empty() {
            continue;
        }
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad HTTP status line {status_line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line)? == 0 {
                return Ok(None);
            }
            let l = String::from_utf8_lossy(&line);
            let l = l.trim_end_matches(['\r', '\n']);
            if l.is_empty() {
                break;
            }
            if let Some((n, v)) = l.split_once(':') {
                headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        // A proxy's answer to CONNECT is not the server's (curl is told to suppress it; this
        // is for a curl that still prints it).
        let connect = status == 200 && status_line.to_ascii_lowercase().contains("connection established");
        if !(100..200).contains(&status) && !connect {
            return Ok(Some((status, headers)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Headers and the URL reach the server as given through curl's config (quotes,
    /// backslashes and tabs in them escaped), real curl against a socket on 127.0.0.1.
    #[test]
    fn headers_and_url_from_the_config_arrive_as_given() {
        use std::io::BufRead;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = io::BufReader::new(stream.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                head.push(line.trim_end().to_string());
            }
            (&stream).write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok").unwrap();
            head
        });
        let headers = vec![("x-odd".to_string(), "a \"quoted\" \\path\\ and\ttab".to_string())];
        let url = format!("http://127.0.0.1:{port}/p?q=%22x%22&r=[1]");
        let req = Request { url: &url, headers: &headers, body: b"", connect_timeout: 5, idle_timeout: 5 };
        let mut resp = get(&req).unwrap();
        assert_eq!(resp.read_rest(100), b"ok");
        let head = server.join().unwrap();
        assert_eq!(head[0], "GET /p?q=%22x%22&r=[1] HTTP/1.1", "{head:?}");
        assert!(head.iter().any(|h| h == "x-odd: a \"quoted\" \\path\\ and\ttab"), "{head:?}");
        assert!(!head.iter().any(|h| h.to_ascii_lowercase().starts_with("expect")), "{head:?}");
    }

    #[test]
    fn head_skips_100_continue_and_reads_headers() {
        let raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Type: text/event-stream\r\n\r\nbody";
        let mut r = io::Cursor::new(&raw[..]);
        let (status, headers) = read_head(&mut r).unwrap().unwrap();
        assert_eq!(status, 429);
        assert!(headers.contains(&("retry-after".into(), "3".into())));
        let mut rest = String::new();
        r.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "body");
    }

    #[test]
    fn head_skips_a_proxys_connect_response() {
        let raw = b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n\r\n{}";
        let mut r = io::Cursor::new(&raw[..]);
        let (status, headers) = read_head(&mut r).unwrap().unwrap();
        assert_eq!(status, 401);
        assert!(headers.contains(&("content-type".into(), "application/json".into())));
        let raw = b"HTTP/1.0 200 Connection Established\r\nProxy-agent: squid\r\n\r\nHTTP/2 200\r\nx: y\r\n\r\n";
        let (status, headers) = read_head(&mut io::Cursor::new(&raw[..])).unwrap().unwrap();
        assert_eq!((status, headers), (200, vec![("x".into(), "y".into())]));
    }

    #[test]
    fn head_reads_http2_status() {
        let mut r = io::Cursor::new(&b"HTTP/2 200\r\nx: y\r\n\r\n"[..]);
        assert_eq!(read_head(&mut r).unwrap().unwrap().0, 200);
    }

    #[test]
    fn head_none_when_nothing_came() {
        let mut r = io::Cursor::new(&b""[..]);
        assert!(read_head(&mut r).unwrap().is_none());
    }
}

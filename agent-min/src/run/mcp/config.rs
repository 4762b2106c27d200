//! Cline's MCP settings format (`cline_mcp_settings.json`): `{"mcpServers": {NAME: {...}}}`, as
//! typed structs ([`Settings`], [`ServerSettings`]); a bad file is an error naming the file, the
//! server and the field.
//!
//! Stdio servers: `command`, `args`, `env`, `cwd`; remote ones: `url`, `headers` with
//! `"type": "streamableHttp"`. Common to both: `disabled`, `autoApprove` (tool names), `timeout`
//! (seconds, at least 1; Cline's default 60). `${env:NAME}` is expanded as Cline does, except
//! that the agent's API keys are never expanded into a server's config. The Cline CLI's shape,
//! with the type and its fields under `"transport"` (`{"transport": {"type": "stdio",
//! "command": …}}`, its `mcp/config-loader.ts`), is read too.

use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::run::ui::redact;

/// A settings file: the servers by name, in the file's order.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub(crate) struct Settings {
    /// The servers.
    #[serde(rename = "mcpServers")]
    pub mcp_servers: indexmap::IndexMap<String, ServerSettings>,
}

/// One server's settings as Cline writes them; every field may be absent or `null`, and fields
/// Cline has and agent-min does not use are ignored, as Cline ignores them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase", expecting = "an object of the server's settings")]
pub(crate) struct ServerSettings {
    /// `stdio`, `sse` or `streamableHttp`.
    #[serde(rename = "type", deserialize_with = "string")]
    pub ty: Option<String>,
    /// The older spelling of `type`: `stdio`, `sse` or `http`.
    #[serde(deserialize_with = "string")]
    pub transport_type: Option<String>,
    /// A stdio server's program.
    #[serde(deserialize_with = "string")]
    pub command: Option<String>,
    /// Its arguments (`None`: absent or `null`, which Cline's prompt tells from `[]`).
    #[serde(deserialize_with = "optional_strings")]
    pub args: Option<Vec<String>>,
    /// Variables added to its environment, in the file's order.
    #[serde(deserialize_with = "string_map")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub env: Vec<(String, String)>,
    /// Its working directory.
    #[serde(deserialize_with = "string")]
    pub cwd: Option<String>,
    /// A remote server's endpoint.
    #[serde(deserialize_with = "string")]
    pub url: Option<String>,
    /// Extra request headers.
    #[serde(deserialize_with = "string_map")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub headers: Vec<(String, String)>,
    /// Configured but not started.
    #[serde(deserialize_with = "boolean")]
    pub disabled: bool,
    /// Tools that run without asking.
    #[serde(deserialize_with = "strings")]
    pub auto_approve: Vec<String>,
    /// Seconds per tool call, at least 1 (Cline's default 60).
    #[serde(deserialize_with = "seconds")]
    pub timeout: Option<f64>,
    /// agent-min's (Cline ignores it): seconds the server may take to start and list its tools.
    #[serde(deserialize_with = "seconds")]
    pub startup_timeout: Option<f64>,
    /// The Cline CLI's shape: `type`, `command`, `args`, `cwd`, `env`, `url` and `headers`
    /// under one object, which then alone says how the server is reached (the CLI's schema
    /// drops those fields written beside it).
    pub transport: Option<Box<ServerSettings>>,
}

impl ServerSettings {
    /// The transport's fields in place of those beside it; whether there was a transport.
    fn lifted(self) -> (ServerSettings, bool) {
        let Some(t) = self.transport else { return (self, false) };
        let t = *t;
        let (ty, command, args, cwd, url, env, headers) = (t.ty, t.command, t.args, t.cwd, t.url, t.env, t.headers);
        (
            ServerSettings { ty, transport_type: None, command, args, cwd, url, env, headers, transport: None, ..self },
            true,
        )
    }
}

// Each field's reader says, in Cline's words, what the field must be; `null` is absence.

fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(serde::de::Error::custom(format!("must be a string, got {v}"))),
    }
}

fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(v) => Err(serde::de::Error::custom(format!("must be true or false, got {v}"))),
    }
}

fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                v => Err(serde::de::Error::custom(format!("must be a list of strings; {v} is not a string"))),
            })
            .collect(),
        Some(v) => Err(serde::de::Error::custom(format!("must be a list of strings, got {v}"))),
    }
}

fn optional_strings<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => strings(v).map(Some).map_err(serde::de::Error::custom),
    }
}

fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .into_iter()
            .map(|(name, v)| match v {
                Value::String(s) => Ok((name, s)),
                v => Err(serde::de::Error::custom(format!("the value of {name:?} must be a string, got {v}"))),
            })
            .collect(),
        Some(v) => Err(serde::de::Error::custom(format!("must be an object of strings, got {v}"))),
    }
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(t) => match t.as_f64() {
            Some(s) if s.is_finite() && s >= 1.0 => Ok(Some(s)),
            _ => Err(serde::de::Error::custom(format!("must be a number of seconds, at least 1, got {t}"))),
        },
    }
}

/// Cline's `DEFAULT_MCP_TIMEOUT_SECONDS`.
pub(crate) const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its (minimal) environment.
        env: Vec<(String, String)>,
        /// Its working directory (default: the agent's).
        cwd: Option<PathBuf>,
    },
    /// A remote server at `url`, through curl: streamable HTTP, or HTTP+SSE.
    Http {
        /// The endpoint (for SSE, the event stream's).
        url: String,
        /// Extra request headers (e.g. `Authorization`).
        headers: Vec<(String, String)>,
        /// The older HTTP+SSE transport (`"type": "sse"`, or a `url` without a type).
        sse: bool,
    },
}

/// One server of a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerConfig {
    /// Its name (the key under `mcpServers`); what the model passes as `server_name`.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Stdio or HTTP.
    pub kind: Kind,
    /// `disabled`: configured but not started.
    pub disabled: bool,
    /// `autoApprove`: tools that run without asking.
    pub auto_approve: Vec<String>,
    /// A repository's `autoApprove`, not honoured: its tools are asked about as any other (Cline
    /// reads `autoApprove` from the person's own settings only), and the consent names them.
    pub auto_approve_ignored: Vec<String>,
    /// `timeout`: per tool call.
    pub timeout: Duration,
    /// `startupTimeout` (agent-min's; Cline ignores it): how long the server may take to start
    /// and list its tools; `None`: the run's `--mcp-startup-timeout`.
    pub startup_timeout: Option<Duration>,
    /// The command line, or the URL, as the file writes it: its `${env:…}` not expanded.
    pub written: String,
}

impl ServerConfig {
    /// The command line in Cline's form (`command arg1 arg2`), or the URL — as written: a value
    /// a variable gives, which may be a password, is not shown. (Cline's prompt shows them
    /// expanded: its `readAndValidateMcpSettingsFile` expands the settings it then stores.)
    pub(crate) fn command_line(&self) -> &str {
        &self.written
    }
}

impl ServerConfig {
    /// What decides what the server runs, for the person asked to start it: the program and
    /// each argument as a shell would read them (quoted, control characters escaped, so a
    /// newline cannot push the rest out of sight), the variables set for it (a `PATH` may
    /// name another program than the one shown, `NODE_OPTIONS` load code) and its working
    /// directory; for HTTP, the URL and the names of the headers sent (their values may be
    /// keys).
    pub(crate) fn consent_lines(&self) -> Vec<String> {
        match &self.kind {
            Kind::Stdio { command, args, env, cwd } => {
                let mut words = vec![shell_word(command)];
                words.extend(args.iter().map(|a| shell_word(a)));
                let mut lines = vec![format!("{}: {}", self.name, words.join(" "))];
                if !env.is_empty() {
                    let vars: Vec<String> =
                        env.iter().map(|(k, v)| format!("{}={}", shell_word(k), shell_word(v))).collect();
                    lines.push(format!("    with the environment: {}", vars.join(" ")));
                }
                if let Some(dir) = cwd {
                    lines.push(format!("    in the directory: {}", shell_word(&dir.display().to_string())));
                }
                self.ignored_line(lines)
            }
            Kind::Http { url, headers, .. } => {
                let mut lines = vec![format!("{}: {}", self.name, shell_word(url))];
                if !headers.is_empty() {
                    let names: Vec<String> = headers.iter().map(|(k, _)| shell_word(k)).collect();
                    lines.push(format!("    with the headers: {}", names.join(", ")));
                }
                self.ignored_line(lines)
            }
        }
    }

    /// `lines` with the repository's `autoApprove` named as not honoured, if it gave one.
    fn ignored_line(&self, mut lines: Vec<String>) -> Vec<String> {
        if !self.auto_approve_ignored.is_empty() {
            let names: Vec<String> = self.auto_approve_ignored.iter().map(|t| shell_word(t)).collect();
            lines.push(format!(
                "    its autoApprove is not honoured from a repository's settings (each call is asked; list them in your own settings to run them unasked): {}",
                names.join(", ")
            ));
        }
        lines
    }
}

/// `s` as one shell word: as it is when plain, else in single quotes, or `$'…'` with escapes
/// when it holds a control character.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_string();
    }
    if !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Parses settings text; `file` names it in errors.
pub(crate) fn parse(text: &str, file: &Path) -> Result<Vec<ServerConfig>, String> {
    parse_from(text, file, Whose::Person)
}

/// [`parse`] for the workspace's own settings file: its `${env:…}` may not name a variable
/// the sandbox withholds (a repository's file would send the person's token to a server of
/// its choosing).
pub(crate) fn parse_workspace(text: &str, file: &Path) -> Result<Vec<ServerConfig>, String> {
    parse_from(text, file, Whose::Repository)
}

/// Whose settings file is read.
#[derive(Clone, Copy, PartialEq)]
enum Whose {
    /// The person's own (`--mcp-config`, the user's config directory).
    Person,
    /// The repository's (`.cline/mcp.json`).
    Repository,
}

fn parse_from(text: &str, file: &Path, whose: Whose) -> Result<Vec<ServerConfig>, String> {
    let f = file.display();
    // Cline reads an empty file or a bare `{}` as "no MCP servers" (`readAndValidateMcpSettingsFile`).
    if matches!(text.trim(), "" | "{}") {
        return Ok(Vec::new());
    }
    let root: Value = serde_json::from_str(text)
        .map_err(|e| format!("{f}: not valid JSON ({e}); expected {{\"mcpServers\": {{...}}}}"))?;
    match root.get("mcpServers") {
        None => {
            return Err(format!(
                "{f}: no \"mcpServers\" object; expected {{\"mcpServers\": {{\"NAME\": {{\"command\": ...}}}}}}"
            ))
        }
        // serde would read an array as a struct's fields in order: only objects are settings.
        Some(Value::Object(servers)) => {
            if let Some((name, _)) = servers.iter().find(|(_, v)| !v.is_object()) {
                return Err(format!("{f}: server \"{name}\": its settings must be an object"));
            }
        }
        Some(_) => return Err(format!("{f}: \"mcpServers\" must be an object mapping server names to their settings")),
    }
    let settings: Settings = serde_path_to_error::deserialize(&root).map_err(|e| {
        use serde_path_to_error::Segment;
        let keys: Vec<String> =
            e.path().iter().map(|s| if let Segment::Map { key } = s { key.clone() } else { s.to_string() }).collect();
        match keys.as_slice() {
            [_, name] => format!("{f}: server \"{name}\": its settings must be an object"),
            [_, name, field @ ..] => format!("{f}: server \"{name}\": field \"{}\": {}", field.join("."), e.inner()),
            _ => format!("{f}: {}", e.inner()),
        }
    })?;
    settings.mcp_servers.into_iter().map(|(name, s)| server(&name, s, file, whose)).collect()
}

fn server(name: &str, s: ServerSettings, file: &Path, whose: Whose) -> Result<ServerConfig, String> {
    let (s, nested) = s.lifted();
    let under = if nested { "transport." } else { "" };
    let at =
        |field: &str, what: &str| format!("{}: server \"{name}\": field \"{under}{field}\": {what}", file.display());
    let expand = |s: &str, at: &dyn Fn(&str, &str) -> String, field: &str| expand(s, at, field, whose);
    if name.trim().is_empty() || name.chars().any(char::is_control) {
        return Err(format!("{}: a server name must be non-empty printable text, got {name:?}", file.display()));
    }
    // Without a type, a `command` is stdio and a `url` SSE, as Cline's schema reads them,
    // whatever `transportType` says — except its `http`, the older spelling of streamable HTTP
    // (Cline's schema means it so, but tries its SSE shape first and ends up SSE).
    let ty = match (s.ty, s.transport_type.as_deref()) {
        (Some(t), _) => Some(t),
        (None, Some("http")) if s.command.is_none() => Some("streamableHttp".to_string()),
        (None, _) => None,
    };
    // Cline's prompt: `${command}${args ? ` ${args.join(" ")}` : ""}`, here unexpanded.
    let written = match (&s.command, &s.url, &s.args) {
        (Some(c), _, Some(args)) => format!("{c} {}", args.join(" ")),
        (Some(c), ..) => c.clone(),
        (None, Some(url), _) => url.clone(),
        (None, None, _) => String::new(),
    };
    let kind =
        match (ty.as_deref(), s.command, s.url) {
            (Some("stdio") | None, Some(command), _) => {
                if command.trim().is_empty() {
                    return Err(at("command", "must not be empty"));
                }
                let cwd = s.cwd.map(|c| expand(&c, &at, "cwd").map(PathBuf::from));
                let mut env = Vec::new();
                for (k, val) in s.env {
                    let val = expand(&val, &at, "env")?;
                    env.push((k, val));
                }
                let args = s.args.iter().flatten().map(|a| expand(a, &at, "args")).collect::<Result<_, _>>()?;
                Kind::Stdio { command: expand(&command, &at, "command")?, args, env, cwd: cwd.transpose()? }
            }
            (Some("stdio"), None, _) => return Err(at("command", "is required for a stdio server")),
            (ty @ (Some("streamableHttp" | "sse") | None), _, Some(url)) => {
                let url = expand(&url, &at, "url")?;
                if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(char::is_whitespace) {
                    return Err(at("url", "URL must be a valid URL format (http:// or https://)"));
                }
                let mut headers = Vec::new();
                for (k, val) in s.headers {
                    if k.contains(['\r', '\n', ':']) || val.contains(['\r', '\n']) {
                        return Err(at("headers", &format!("header {k:?} contains a line break or a colon")));
                    }
                    headers.push((k, expand(&val, &at, "headers")?));
                }
                // A `url` without a type is SSE, Cline's first choice for it.
                Kind::Http { url, headers, sse: ty != Some("streamableHttp") }
            }
            (Some(ty @ ("streamableHttp" | "sse")), _, None) => {
                return Err(at("url", &format!("is required for a server of type \"{ty}\"")))
            }
            (None, None, None) => return Err(at(
                "command",
                "missing: give \"command\" (a stdio server) or \"url\" (with \"type\": \"streamableHttp\" or \"sse\")",
            )),
            (Some(_), ..) => return Err(at("type", "Server type must be one of: 'stdio', 'sse', or 'streamableHttp'")),
        };
    Ok(ServerConfig {
        name: name.to_string(),
        file: file.to_path_buf(),
        kind,
        disabled: s.disabled,
        // A repository may not approve its own server's tools: what a run writes, or a cloned
        // project, would have them run unasked once the person agreed to start the server.
        auto_approve: if whose == Whose::Person { s.auto_approve.clone() } else { Vec::new() },
        auto_approve_ignored: if whose == Whose::Repository { s.auto_approve } else { Vec::new() },
        timeout: crate::run::clock::clamped_secs(s.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS as f64)),
        startup_timeout: s.startup_timeout.map(crate::run::clock::clamped_secs),
        written,
    })
}

/// Cline's `${env:NAME}` expansion (an unset variable stays as written), from the variables the
/// agent was started with — those the sandbox withholds from commands too (a server's token:
/// the settings name it for that server). The agent's API keys are refused: they must never
/// reach a server.
fn expand(s: &str, at: &dyn Fn(&str, &str) -> String, field: &str, whose: Whose) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${env:") {
        let Some(end) = rest[i..].find('}') else { break };
        let name = rest[i + 6..i + end].trim();
        out.push_str(&rest[..i]);
        if redact::KEY_VARS.contains(&name) {
            return Err(at(
                field,
                &format!("refusing to pass ${{env:{name}}} to an MCP server: the agent's API keys never leave it"),
            ));
        }
        // Any variable: a name tells nothing of its value (`PGPASSWORD`, `DATABASE_URL`,
        // `GITHUB_PAT` passed a KEY/SECRET/TOKEN rule), and the consent shows a header's name
        // only; a server started by a repository's settings gets the default environment.
        if whose == Whose::Repository {
            return Err(at(
                field,
                &format!("refusing ${{env:{name}}} in the repository's settings: a repository may not send your environment (your secrets among it) to a server; configure this server in your own settings (--mcp-config, or mcp.json in agent-min's config directory)"),
            ));
        }
        match redact::withheld(name) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[i..i + end + 1]),
        }
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consent_shows_the_environment_the_directory_and_quoted_words() {
        let server = ServerConfig {
            name: "docs".into(),
            written: String::new(),
            file: PathBuf::from("/w/.cline/mcp.json"),
            kind: Kind::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "pkg@1".into(), "true\n(that is all)".into(), "it's".into()],
                env: vec![
                    ("PATH".into(), "/w/.bin:/usr/bin".into()),
                    ("NODE_OPTIONS".into(), "--require ./x.js".into()),
                ],
                cwd: Some(PathBuf::from("/w/sub dir")),
            },
            disabled: false,
            auto_approve: Vec::new(),
            auto_approve_ignored: vec!["write_file".into()],
            timeout: Duration::from_secs(60),
            startup_timeout: None,
        };
        assert_eq!(
            server.consent_lines(),
            [
                r"docs: npx -y pkg@1 $'true\n(that is all)' 'it'\''s'",
                "    with the environment: PATH=/w/.bin:/usr/bin NODE_OPTIONS='--require ./x.js'",
                "    in the directory: '/w/sub dir'",
                "    its autoApprove is not honoured from a repository's settings (each call is asked; list them in your own settings to run them unasked): write_file",
            ]
        );
        assert!(server.consent_lines().iter().all(|l| !l.contains('\n')));
    }

    fn p(text: &str) -> Result<Vec<ServerConfig>, String> {
        parse(text, Path::new("/cfg/mcp.json"))
    }

    #[test]
    fn a_repositorys_auto_approve_is_not_honoured_but_named() {
        let text = r#"{"mcpServers": {"fs": {"command": "npx", "autoApprove": ["write_file"]}}}"#;
        let own = parse(text, Path::new("/cfg/mcp.json")).unwrap();
        assert_eq!(
            (own[0].auto_approve.as_slice(), own[0].auto_approve_ignored.len()),
            (["write_file".to_string()].as_slice(), 0)
        );
        let repo = parse_workspace(text, Path::new("/w/.cline/mcp.json")).unwrap();
        assert!(repo[0].auto_approve.is_empty(), "a repository's settings approve no tool");
        assert!(repo[0].consent_lines().last().unwrap().ends_with("run them unasked): write_file"));
    }

    #[test]
    fn reads_clines_stdio_and_http_shapes() {
        let s = p(r#"{"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"A": "1"},
                   "autoApprove": ["read_file"], "timeout": 5},
            "web": {"type": "streamableHttp", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer t"}, "disabled": true}
        }}"#)
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "fs");
        assert_eq!(s[0].command_line(), "npx -y server-filesystem /tmp");
        assert_eq!(s[0].auto_approve, ["read_file"]);
        assert_eq!(s[0].timeout, Duration::from_secs(5));
        assert!(!s[0].disabled);
        assert!(matches!(&s[0].kind, Kind::Stdio { env, .. } if env == &[("A".to_string(), "1".to_string())]));
        assert_eq!(s[1].timeout, Duration::from_secs(60), "Cline's default");
        assert!(s[1].disabled);
        assert!(matches!(&s[1].kind, Kind::Http { headers, .. } if headers[0].1 == "Bearer t"));
    }

    /// The Cline CLI writes `cline_mcp_settings.json` with each server's transport nested.
    #[test]
    fn reads_the_cline_clis_nested_transport_shape() {
        let s = p(r#"{"mcpServers": {
            "docs": {"transport": {"type": "stdio", "command": "node", "args": ["srv.js"], "cwd": "/srv", "env": {"A": "1"}}},
            "remote": {"transport": {"type": "streamableHttp", "url": "https://mcp.example.com", "headers": {"X": "y"}}, "disabled": true},
            "old": {"transport": {"type": "sse", "url": "http://h/sse"}, "timeout": 9}
        }}"#)
        .unwrap();
        assert_eq!(s[0].command_line(), "node srv.js");
        let want = Kind::Stdio {
            command: "node".into(),
            args: vec!["srv.js".into()],
            env: vec![("A".into(), "1".into())],
            cwd: Some(PathBuf::from("/srv")),
        };
        assert_eq!(s[0].kind, want);
        let remote =
            Kind::Http { url: "https://mcp.example.com".into(), headers: vec![("X".into(), "y".into())], sse: false };
        assert_eq!((&s[1].kind, s[1].disabled), (&remote, true));
        assert!(matches!(&s[2].kind, Kind::Http { sse: true, .. }) && s[2].timeout == Duration::from_secs(9));
        // The transport alone says how the server is reached.
        let s = p(
            r#"{"mcpServers": {"x": {"type": "stdio", "command": "c", "transport": {"type": "sse", "url": "http://h/sse"}}}}"#,
        );
        assert!(matches!(&s.unwrap()[0].kind, Kind::Http { sse: true, .. }));
        // Errors say where in it.
        let e = p(r#"{"mcpServers": {"docs": {"transport": {"type": "stdio"}}}}"#).unwrap_err();
        assert!(e.contains("server \"docs\": field \"transport.command\": is required for a stdio server"), "{e}");
        let e = p(r#"{"mcpServers": {"docs": {"transport": {"type": "stdio", "command": "c", "args": "a"}}}}"#)
            .unwrap_err();
        assert!(e.contains("server \"docs\": field \"transport.args\": must be a list of strings"), "{e}");
        let e = p(r#"{"mcpServers": {"docs": {"transport": "stdio"}}}"#).unwrap_err();
        assert!(
            e.contains(
                "field \"transport\": invalid type: string \"stdio\", expected an object of the server's settings"
            ),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_file_the_server_and_the_field() {
        let e = p(r#"{"mcpServers": {"db": {"command": "x", "args": "not-a-list"}}}"#).unwrap_err();
        assert_eq!(e, "/cfg/mcp.json: server \"db\": field \"args\": must be a list of strings, got \"not-a-list\"");
        let e = p(r#"{"mcpServers": {"db": {"command": "x", "timeout": 0.5}}}"#).unwrap_err();
        assert!(e.contains("server \"db\": field \"timeout\": must be a number of seconds, at least 1"), "{e}");
        // A `url` without a type is SSE, as in Cline; `transportType` is the older spelling.
        let sse = |json: &str| match &p(json).unwrap()[0].kind {
            Kind::Http { sse, .. } => *sse,
            k => panic!("{k:?}"),
        };
        assert!(sse(r#"{"mcpServers": {"db": {"url": "http://h/sse"}}}"#));
        assert!(sse(r#"{"mcpServers": {"db": {"type": "sse", "url": "http://h/sse", "command": "x"}}}"#));
        assert!(sse(r#"{"mcpServers": {"db": {"transportType": "sse", "url": "http://h/sse"}}}"#));
        assert!(sse(r#"{"mcpServers": {"db": {"transportType": "stdio", "url": "http://h/sse"}}}"#));
        let stdio = p(r#"{"mcpServers": {"db": {"transportType": "sse", "command": "x", "url": "http://h/sse"}}}"#);
        assert!(matches!(stdio.unwrap()[0].kind, Kind::Stdio { .. }), "a command without a type is stdio");
        assert!(!sse(r#"{"mcpServers": {"db": {"type": "streamableHttp", "url": "http://h/mcp"}}}"#));
        assert!(!sse(r#"{"mcpServers": {"db": {"transportType": "http", "url": "http://h/mcp"}}}"#));
        let e = p(r#"{"mcpServers": {"db": {"type": "sse", "command": "x"}}}"#).unwrap_err();
        assert!(e.contains("field \"url\": is required for a server of type \"sse\""), "{e}");
        let e = p(r#"{"mcpServers": {"db": {"type": "websocket", "command": "x"}}}"#).unwrap_err();
        assert!(e.contains("Server type must be one of"), "{e}");
        // Cline's "no MCP servers": an empty file, a bare `{}`.
        for empty in ["", " \n", "{}", "\n{}\n", r#"{"mcpServers": {}}"#] {
            assert!(p(empty).unwrap().is_empty(), "{empty:?}");
        }
        let e = p(r#"{"servers": {}}"#).unwrap_err();
        assert!(e.starts_with("/cfg/mcp.json: no \"mcpServers\""), "{e}");
        let e = p("{").unwrap_err();
        assert!(e.starts_with("/cfg/mcp.json: not valid JSON"), "{e}");
        let e = p(r#"{"mcpServers": {"db": {"env": {"A": 1}, "command": "x"}}}"#).unwrap_err();
        assert!(e.contains("field \"env\": the value of \"A\" must be a string"), "{e}");
        let e = p(r#"{"mcpServers": {"db": ["x"]}}"#).unwrap_err();
        assert_eq!(e, "/cfg/mcp.json: server \"db\": its settings must be an object");
        let e = p(r#"{"mcpServers": {"db": {"command": "x", "disabled": "yes"}}}"#).unwrap_err();
        assert_eq!(e, "/cfg/mcp.json: server \"db\": field \"disabled\": must be true or false, got \"yes\"");
        // Fields agent-min does not use are ignored, as Cline ignores them; `null` is absence.
        let s =
            p(r#"{"mcpServers": {"db": {"command": "x", "alwaysAllow": [], "cwd": null, "timeout": null}}}"#).unwrap();
        assert_eq!(s[0].timeout, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
    }

    #[test]
    fn env_references_expand_but_never_to_an_api_key() {
        std::env::set_var("AGENT_MIN_TEST_MCP_DIR", "/data");
        let s = p(r#"{"mcpServers": {"a": {"command": "srv", "args": ["${env:AGENT_MIN_TEST_MCP_DIR}/x", "${env:AGENT_MIN_UNSET_VAR}"]}}}"#)
            .unwrap();
        assert!(matches!(&s[0].kind, Kind::Stdio { args, .. } if args == &["/data/x", "${env:AGENT_MIN_UNSET_VAR}"]));
        let e =
            p(r#"{"mcpServers": {"a": {"command": "srv", "env": {"K": "${env:ANTHROPIC_API_KEY}"}}}}"#).unwrap_err();
        assert!(e.contains("field \"env\": refusing to pass ${env:ANTHROPIC_API_KEY}"), "{e}");
    }

    /// A token the sandbox withheld from the environment (its name looks secret) is still the
    /// person's to give a server from their own settings, as Cline expands every variable —
    /// never from a repository's; the prompt's command line is the one written (Cline's shows
    /// it expanded: here a password a variable gives never reaches the model).
    #[test]
    fn a_withheld_variable_expands_and_the_prompt_shows_the_command_as_written() {
        redact::withhold("AGENT_MIN_TEST_TRACKER_TOKEN", "tok-withheld-1234");
        redact::withhold("AGENT_MIN_TEST_PGPASS", "hunter2");
        let s = p(r#"{"mcpServers": {
            "tracker": {"type": "streamableHttp", "url": "http://h/mcp", "headers": {"Authorization": "Bearer ${env:AGENT_MIN_TEST_TRACKER_TOKEN}"}},
            "db": {"command": "npx", "args": ["pg", "postgresql://u:${env:AGENT_MIN_TEST_PGPASS}@db/app"]},
            "bare": {"command": "srv", "args": []},
            "none": {"command": "srv"}
        }}"#)
        .unwrap();
        assert!(matches!(&s[0].kind, Kind::Http { headers, .. } if headers[0].1 == "Bearer tok-withheld-1234"));
        assert!(matches!(&s[1].kind, Kind::Stdio { args, .. } if args[1] == "postgresql://u:hunter2@db/app"));
        assert_eq!(s[1].command_line(), "npx pg postgresql://u:${env:AGENT_MIN_TEST_PGPASS}@db/app");
        assert_eq!(s[2].command_line(), "srv ", "Cline's prompt for []: the command, a space");
        assert_eq!(s[3].command_line(), "srv");
        // A repository names no variable, whatever its name: `PGPASSWORD` in a header went
        // to the repository's URL, shown as "with the headers: X".
        for (field, var) in [("headers", "AGENT_MIN_TEST_TRACKER_TOKEN"), ("headers", "PGPASSWORD")] {
            let repo = format!(
                r#"{{"mcpServers": {{"t": {{"type": "streamableHttp", "url": "http://h/mcp", "headers": {{"X": "${{env:{var}}}"}}}}}}}}"#
            );
            let e = parse_workspace(&repo, Path::new("/w/.cline/mcp.json")).unwrap_err();
            assert!(
                e.contains(&format!("field \"{field}\": refusing ${{env:{var}}} in the repository's settings")),
                "{e}"
            );
        }
        for (field, server) in [
            ("url", r#"{"type": "streamableHttp", "url": "http://h/mcp?k=${env:DATABASE_URL}"}"#),
            ("env", r#"{"command": "srv", "env": {"DB": "${env:DATABASE_URL}"}}"#),
            ("args", r#"{"command": "srv", "args": ["${env:HOME}"]}"#),
        ] {
            let repo = format!(r#"{{"mcpServers": {{"t": {server}}}}}"#);
            let e = parse_workspace(&repo, Path::new("/w/.cline/mcp.json")).unwrap_err();
            assert!(e.contains(&format!("field \"{field}\": refusing ${{env:")), "{field}: {e}");
        }
    }
}

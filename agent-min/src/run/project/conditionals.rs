//! Conditional rules: Cline's `rule-conditionals.ts` and `RuleContextBuilder.ts`.
//!
//! A rule whose frontmatter has `paths:` applies only when a path of the current request
//! matches one of its globs (picomatch with `dot: true`, here `globset` with `*` stopping at
//! `/`, and the patterns rewritten where picomatch reads them otherwise). The request's paths
//! (gathered by `context`) are normalised, deduplicated, capped at 100 and sorted, as Cline
//! builds them.

use globset::GlobBuilder;

use super::frontmatter::Value;

/// Most candidate paths considered (`MAX_RULE_PATH_CANDIDATES`).
pub(crate) const MAX_CANDIDATES: usize = 100;

/// Whether a rule with frontmatter `data` applies to a request touching `paths`
/// (`evaluateRuleConditionals`): unknown keys are ignored; `paths` must match.
pub(crate) fn passes(data: &[(String, Value)], paths: &[String]) -> bool {
    data.iter().all(|(key, value)| key != "paths" || paths_pass(value, paths))
}

fn paths_pass(value: &Value, candidates: &[String]) -> bool {
    // Not a list of non-empty strings: the conditional is ignored (fail-open).
    let Value::List(items) = value else { return true };
    let mut patterns = Vec::new();
    for item in items {
        match item {
            Value::Str(s) if !s.is_empty() => patterns.push(s.trim()),
            _ => return true,
        }
    }
    patterns.retain(|p| !p.is_empty());
    // `paths: []` matches nothing; so does a request without any path.
    if patterns.is_empty() || candidates.is_empty() {
        return false;
    }
    patterns.iter().any(|p| matches_any(p, candidates))
}

/// Whether `picomatch(pattern, { dot: true })` matches one of `candidates`, in what globset
/// does not do alike: a leading `./` is dropped, leading `!`s negate (an odd number of them;
/// `!(…)` is an extglob, which globset does not know), and `dir/**` matches `dir` itself.
fn matches_any(pattern: &str, candidates: &[String]) -> bool {
    let mut p = pattern;
    let mut negated = false;
    while let Some(rest) = p.strip_prefix('!').filter(|r| !r.starts_with('(')) {
        negated = !negated;
        p = rest;
    }
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let glob = |p: &str| {
        GlobBuilder::new(p).literal_separator(true).backslash_escape(true).build().map(|g| g.compile_matcher()).ok()
    };
    let mut matchers = Vec::new();
    for p in picomatch_forms(p) {
        let Some(whole) = glob(&p) else { return false };
        matchers.push(whole);
        matchers.extend(p.strip_suffix("/**").filter(|d| !d.is_empty()).and_then(glob));
    }
    // A path said with a trailing slash (a folder: Cline's path finder keeps it): picomatch
    // matches it as the folder against a pattern ending in a star (`src/*`, `packages/**`),
    // where globset's `*` would match the empty name after the slash (`src/components/*`).
    let ends_in_star = p.ends_with('*');
    let folder = |c: &'_ String| -> String {
        match c.strip_suffix('/') {
            Some(dir) if ends_in_star && !dir.is_empty() => dir.to_string(),
            _ => c.clone(),
        }
    };
    candidates.iter().any(|c| matchers.iter().any(|m| m.is_match(folder(c))) != negated)
}

/// Globset patterns that together match what picomatch matches with `pattern`, where their
/// syntaxes part: a pattern `**.ext` without a slash matches at any depth (picomatch makes it
/// `.*?\.ext`); a range `{a..c}` is the class `[a-c]` (its ends sorted, joined by `-`, and
/// left as the text `a..c` when that class is not a valid one: picomatch's `expandRange`);
/// and a brace group with an empty alternative (`{,src/}a.ts`), which globset does not take, is
/// expanded into one pattern per alternative.
fn picomatch_forms(pattern: &str) -> Vec<String> {
    let mut p = pattern.to_string();
    if p.starts_with("**.") && !p.contains('/') {
        p = format!("**/*{}", &p[2..]);
    }
    let p = expand_ranges(&p);
    let mut out = Vec::new();
    expand_empty_alternatives(p, &mut out);
    out
}

/// `{A..B}` (no comma, no nested brace) as picomatch's `expandRange` writes it.
fn expand_ranges(p: &str) -> String {
    static RANGE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RANGE.get_or_init(|| regex::Regex::new(r"\{([^{},]*\.\.[^{},]*)\}").unwrap());
    re.replace_all(p, |c: &regex::Captures<'_>| {
        let mut args: Vec<&str> = c[1].split("..").collect();
        args.sort_unstable();
        let class = format!("[{}]", args.join("-"));
        if regex::Regex::new(&class).is_ok() {
            class
        } else {
            c[1].to_string()
        }
    })
    .into_owned()
}

/// Most patterns one glob is expanded into.
const MAX_FORMS: usize = 64;

/// `p` with each brace group that has an empty alternative (innermost first, no nesting
/// inside it) replaced by each of its alternatives in turn, into `out`.
fn expand_empty_alternatives(p: String, out: &mut Vec<String>) {
    let group = (|| {
        let mut open = None;
        for (i, ch) in p.char_indices() {
            match ch {
                '{' => open = Some(i),
                '}' => {
                    let start = open?;
                    let inner = &p[start + 1..i];
                    if inner.split(',').any(str::is_empty) && inner.contains(',') {
                        return Some((start, i));
                    }
                    open = None;
                }
                _ => {}
            }
        }
        None
    })();
    let Some((start, end)) = group.filter(|_| out.len() < MAX_FORMS) else {
        out.push(p);
        return;
    };
    for alt in p[start + 1..end].split(',') {
        expand_empty_alternatives(format!("{}{alt}{}", &p[..start], &p[end + 1..]), out);
    }
}

/// The request's candidate paths: from the latest user text and from the tool calls' `path`s
/// (as the model wrote them), normalised to workspace-relative POSIX paths.
pub(crate) fn candidates(user_text: &str, tool_paths: &[String], root: &std::path::Path) -> Vec<String> {
    let mut raw = extract_path_like_strings(user_text);
    // A tool's path as Cline's tool messages carry it (`getReadablePath`), `..` and `.` resolved.
    raw.extend(tool_paths.iter().map(|p| readable(root, &p.replace('\\', "/"))));
    let mut out: Vec<String> = Vec::new();
    for c in raw {
        let mut p = c.replace('\\', "/");
        if let Ok(rel) = std::path::Path::new(&p).strip_prefix(root) {
            p = rel.to_string_lossy().into_owned();
        }
        while let Some(rest) = p.strip_prefix("./") {
            p = rest.to_string();
        }
        let p = p.strip_prefix('/').unwrap_or(&p).to_string();
        if p.is_empty() || out.contains(&p) {
            continue;
        }
        out.push(p);
        if out.len() >= MAX_CANDIDATES {
            break;
        }
    }
    out.sort();
    out
}

/// Cline's `getReadablePath(cwd, path)`, lexically: the path resolved against `root` (`.`, `..`
/// and doubled slashes gone); relative to `root` inside it, the root itself as its folder's
/// name, absolute outside it.
fn readable(root: &std::path::Path, path: &str) -> String {
    use std::path::Component;
    let mut abs = std::path::PathBuf::from("/");
    for c in root.join(path).components() {
        match c {
            Component::Normal(s) => abs.push(s),
            Component::ParentDir => {
                abs.pop();
            }
            _ => {}
        }
    }
    if abs == root {
        return root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    }
    match abs.strip_prefix(root) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => abs.to_string_lossy().into_owned(),
    }
}

/// Cline's `extractPathLikeStrings`: tokens that look like `dir/file` or `name.ext`, outside
/// fenced code and URLs, relative, without `..`, in order, deduplicated.
pub(crate) fn extract_path_like_strings(text: &str) -> Vec<String> {
    static FENCES: std::sync::OnceLock<(regex::Regex, regex::Regex)> = std::sync::OnceLock::new();
    let (fence, url) = FENCES
        .get_or_init(|| (regex::Regex::new(r"(?s)```.*?```").unwrap(), regex::Regex::new(r"\b\w+://\S+").unwrap()));
    let text = fence.replace_all(text, " ");
    let text = url.replace_all(&text, " ");
    let mut out: Vec<String> = Vec::new();
    for token in tokens(&text) {
        let t = token.strip_prefix("./").unwrap_or(token);
        if t.len() > 300 || t.starts_with('/') || t.contains("..") || out.iter().any(|o| o == t) {
            continue;
        }
        out.push(t.to_string());
    }
    out
}

fn is_path_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

/// The token regex with its lookahead, matched as JavaScript's backtracking matcher does:
/// at each boundary, the first alternative (with a slash) longest first, then the second.
fn tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let boundary_before = |i: usize| i == 0 || b"([{\"'`".contains(&b[i - 1]) || (b[i - 1] as char).is_whitespace();
    let boundary_after =
        |i: usize| i == b.len() || b")]}\"'`,.;:!?".contains(&b[i]) || (b[i] as char).is_ascii_whitespace();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !boundary_before(i) || !(is_path_char(b[i]) || b[i] == b'/') {
            i += 1;
            continue;
        }
        let mut run = i;
        while run < b.len() && (is_path_char(b[run]) || b[run] == b'/') && run - i < 1000 {
            run += 1;
        }
        let found = (i + 1..=run)
            .rev()
            .find(|&e| with_slash(&b[i..e]) && boundary_after(e))
            .or_else(|| (i + 1..=run).rev().find(|&e| with_extension(&b[i..e]) && boundary_after(e)));
        match found {
            Some(e) => {
                out.push(&text[i..e]);
                i = e;
            }
            None => i += 1,
        }
    }
    out
}

/// `[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?`
fn with_slash(s: &[u8]) -> bool {
    let s = s.strip_suffix(b"/").unwrap_or(s);
    let parts: Vec<&[u8]> = s.split(|&c| c == b'/').collect();
    parts.len() >= 2 && parts.iter().all(|p| !p.is_empty() && p.iter().all(|&c| is_path_char(c)))
}

/// `[A-Za-z0-9_.-]+\.[A-Za-z0-9]{1,10}`
fn with_extension(s: &[u8]) -> bool {
    if !s.iter().all(|&c| is_path_char(c)) {
        return false;
    }
    // Some dot with 1..=10 alphanumerics after it to the end and something before it.
    (1..s.len()).any(|d| {
        s[d] == b'.' && (1..=10).contains(&(s.len() - d - 1)) && s[d + 1..].iter().all(u8::is_ascii_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> Value {
        Value::List(v.iter().map(|s| Value::Str(s.to_string())).collect())
    }
    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cline_conditional_cases() {
        let paths = |v: Value| vec![("paths".to_string(), v)];
        assert!(passes(&[], &[]), "no paths key: universal");
        assert!(!passes(&paths(list(&[])), &owned(&["src/index.ts"])), "paths: [] matches nothing");
        assert!(!passes(&paths(list(&["src/**"])), &[]), "no evidence: not activated");
        assert!(passes(&paths(list(&["src/**", "apps/**"])), &owned(&["src/index.ts"])));
        assert!(passes(&paths(Value::Str("src/**".into())), &[]), "not a list: ignored");
        assert!(passes(&paths(list(&[""])), &[]), "an empty string: ignored");
        assert!(passes(&[("owner".into(), Value::Other)], &[]), "unknown keys are ignored");
    }

    #[test]
    fn globs_follow_picomatch_with_dot() {
        let p = |g: &str, c: &str| passes(&[("paths".to_string(), list(&[g]))], &owned(&[c]));
        assert!(p("src/**", "src/a/b/c.ts"));
        assert!(p("*.md", "README.md"));
        assert!(!p("*.md", "docs/README.md"), "* does not cross /");
        assert!(p("**/*.md", "docs/README.md"));
        assert!(p("**/*", ".github/workflows/ci.yml"), "dot: true");
        assert!(p("src/{a,b}.ts", "src/b.ts"));
        assert!(!p("src/**", "lib/src/a.ts"));
    }

    #[test]
    fn globs_follow_picomatch_where_globset_differs() {
        // Each checked against picomatch 4 with `{ dot: true }`.
        let p = |g: &str, c: &str| passes(&[("paths".to_string(), list(&[g]))], &owned(&[c]));
        assert!(p("src/components/**", "src/components"), "dir/** matches dir");
        assert!(p("src/a.ts/**", "src/a.ts"));
        assert!(!p("src/components/**", "src/comp"));
        assert!(p("./src/**", "src/a.ts"), "a leading ./ is dropped");
        assert!(p("!src/**", "lib/a.ts") && !p("!src/**", "src/a.ts"), "! negates");
        assert!(p("!!src/**", "src/a.ts"), "twice is not negated");
        assert!(p("src/**/*.ts", "src/a.ts"));
        assert!(!p("src/*", "src/a/b"));
    }

    /// A folder said with its trailing slash, checked with picomatch 4.0.7 and `{ dot: true }`
    /// in node. (Not followed: its quirks for other patterns, `src/*.md` refusing `src/x.md/`
    /// where `**/*.ts` takes `src/a.ts/`.)
    #[test]
    fn a_folders_trailing_slash_matches_as_in_picomatch() {
        let p = |g: &str, c: &str| passes(&[("paths".to_string(), list(&[g]))], &owned(&[c]));
        for (g, c, want) in [
            ("src/*", "src/components/", true),
            ("src/components/*", "src/components/", false),
            ("src/**/*", "src/", false),
            ("packages/*", "packages/api/", true),
            ("packages/**", "packages/api/", true),
            ("src/**", "src/", true),
            ("src/*/", "src/components/", true),
            ("src/*/", "src/components", false),
            ("src/components", "src/components/", false),
            ("src", "src/", false),
            ("*", "a/", true),
            ("src/components/", "src/components/", true),
            ("src/components/*", "src/components/x/", true),
            ("src/**/*", "src/a/b/", true),
            ("src/{a,b}", "src/a/", false),
        ] {
            assert_eq!(p(g, c), want, "{g} against {c}");
        }
    }

    /// Checked with picomatch 4.0.3 and `{ dot: true }` in node.
    #[test]
    fn leading_double_stars_ranges_and_empty_alternatives_match_as_in_picomatch() {
        let p = |g: &str, c: &str| passes(&[("paths".to_string(), list(&[g]))], &owned(&[c]));
        for (g, c, want) in [
            ("**.md", "docs/README.md", true),
            ("**.md", "README.md", true),
            ("**.md", ".x.md", true),
            ("src/**.ts", "src/a/b.ts", false),
            ("src/**.ts", "src/b.ts", true),
            ("file{1..3}.ts", "file2.ts", true),
            ("file{1..3}.ts", "file4.ts", false),
            ("file{1..12}.ts", "file12.ts", false),
            ("file{1..12}.ts", "file2.ts", true),
            ("file{01..03}.ts", "file02.ts", false),
            ("file{01..03}.ts", "file01..03.ts", true),
            ("{z..x}", "y", true),
            ("{,src/}a.ts", "a.ts", true),
            ("{,src/}a.ts", "src/a.ts", true),
            ("{a,}.ts", ".ts", true),
            ("x/{,y/}z", "x/y/z", true),
            ("x/{,y/}z", "x/w/z", false),
        ] {
            assert_eq!(p(g, c), want, "{g} {c}");
        }
    }

    #[test]
    fn cline_extract_cases() {
        let x = extract_path_like_strings;
        assert_eq!(x("edit apps/web/src/App.tsx and packages/foo/src"), ["apps/web/src/App.tsx", "packages/foo/src"]);
        assert_eq!(x("Does foo.md exist? If not, create foo.md"), ["foo.md"]);
        assert!(x("Please create foo and then update bar").is_empty());
        assert_eq!(x("see https://example.com/a/b and edit src/index.ts"), ["src/index.ts"]);
        let fenced = "Please update src/index.ts\n\n```ts\n// example code\nconst p = 'apps/web/src/App.tsx'\n// also: packages/foo/src\n```\n\nThanks!";
        assert_eq!(x(fenced), ["src/index.ts"]);
        assert_eq!(
            x("```\nSee https://example.com/a/b and src/index.ts\n```\nBut edit docs/readme.md"),
            ["docs/readme.md"]
        );
        let trace = "Error: boom\n    at foo (src/index.ts:12:3)\n    at bar (apps/web/src/App.tsx:5:1)";
        assert_eq!(x(trace), ["src/index.ts", "apps/web/src/App.tsx"]);
        assert_eq!(x("fix ./src/a.rs, not /etc/passwd or ../up.txt"), ["src/a.rs"]);
    }

    #[test]
    fn candidates_are_normalised_deduplicated_and_sorted() {
        let root = std::path::Path::new("/ws");
        let c = candidates("look at src/b.ts", &owned(&["./src/b.ts", "/ws/lib/a.rs", "docs\\x.md"]), root);
        assert_eq!(c, ["docs/x.md", "lib/a.rs", "src/b.ts"]);
        // As Cline's getReadablePath gives a tool's path: resolved, then relative.
        let c = candidates("", &owned(&["src/../web/app.tsx", "web/./b.tsx", "web//c.tsx", "../out/d.ts", "."]), root);
        assert_eq!(c, ["out/d.ts", "web/app.tsx", "web/b.tsx", "web/c.tsx", "ws"]);
    }
}

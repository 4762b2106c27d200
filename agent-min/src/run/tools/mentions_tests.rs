//! Cline's own expectations (`shared/__tests__/context-mentions.test.ts` for the regex,
//! `core/mentions/index.test.ts` for the texts), on real files instead of stubs.

use super::*;
use crate::run::test_files::git;

/// The first match's text (with its `@`), as `mentionRegex.exec(input)[0]`.
fn first(input: &str) -> Option<&str> {
    find(input).first().map(|&(a, e)| &input[a..e])
}

fn all(input: &str) -> Vec<&str> {
    find(input).into_iter().map(|(a, e)| &input[a..e]).collect()
}

#[test]
fn the_regex_matches_as_clines_tests_say() {
    let same = [
        "@/C:\\folder\\file.txt",
        "@/C:\\Users\\name\\path\\to\\文件夹\\file.txt",
        "@/path123/file-name_2.0.txt",
        "@/usr/local/bin/file",
        "@//etc/host",
        "@http://example.com",
        "@https://example.com/path/to/file.html",
        "@ftp://server.example.com/file.zip",
        "@abcdef1234567890abcdef1234567890abcdef12",
        "@problems",
        "@git-changes",
        "@terminal",
        "@/path/with/file#hash%percent.txt",
        "@/path/with/file@symbol$dollar.txt",
        "@/C:\\folder+plus\\file(parens)[]brackets.txt",
        "@/путь/к/файлу.txt",
        "@abcdef1",
        "@abcdef12",
        "@file://localhost/path/to/file",
        "@ssh://git@github.com/repo",
        "@https://example.com?q=test&p=1",
        "@http://localhost:3000",
        "@https://user:pass@example.com",
        "@https://example.com/",
        "@\"/path with space.txt\"",
        "@\"/path/ends/with-space \"",
        "@\"/ path-starts-with-space.txt\"",
        "@\"/path with space.txt!\"",
        "@/\"path/file.txt",
        "@/path\"/file\".tar.gz",
        "@/",
        "@\"/\"",
        "@/path/file...txt",
        "@frontend:/src/index.ts",
    ];
    for input in same {
        assert_eq!(first(input), Some(input), "{input}");
    }
    let cut = [
        ("@/path with spaces/file.txt", "@/path"),
        ("@/C:\\folder\\file.txt invalid suffix", "@/C:\\folder\\file.txt"),
        ("@/path/file.txt.", "@/path/file.txt"),
        ("@problems:", "@problems"),
        ("@terminal;", "@terminal"),
        ("@/path/file.txt!?", "@/path/file.txt"),
        ("@problems...", "@problems"),
        ("@git-changes,", "@git-changes"),
        ("@\"/path with space.txt!\"!", "@\"/path with space.txt!\""),
        ("@/path/file.txt\trest", "@/path/file.txt"),
        ("@/path/file.txt\nrest", "@/path/file.txt"),
        ("@/path/file.txt\rrest", "@/path/file.txt"),
        ("Check both @/unix/path and @/C:\\windows\\path for details.", "@/unix/path"),
    ];
    for (input, want) in cut {
        assert_eq!(first(input), Some(want), "{input}");
    }
    let none = [
        "C:\\folder\\file.txt",
        "@",
        "@ C:\\file.txt",
        "@'/path/file.tar.gz'",
        "@abcdef",
        "@abcdef1234567890abcdef1234567890abcdef123",
        "@ghijklm",
        "@ABCDEF1",
        "@problemsolver",
        "@terminals",
        "@git-changeset",
        "@problem",
        "@git-change",
    ];
    for input in none {
        assert_eq!(first(input), None, "{input}");
    }
    let text = "Check @/path/file1.txt and @/C:\\folder\\file2.txt and report any @problems to @git-changes";
    assert_eq!(all(text), ["@/path/file1.txt", "@/C:\\folder\\file2.txt", "@problems", "@git-changes"]);
    assert_eq!(all("Review @problems, and @git-changes."), ["@problems", "@git-changes"]);
    assert_eq!(
        all("Multiple: @/file1.txt, and @/C:\\file2.txt; and @terminal?"),
        ["@/file1.txt", "@/C:\\file2.txt", "@terminal"]
    );
    assert_eq!(
        all("See @/docs/README.md, check @problems, and visit @https://example.com."),
        ["@/docs/README.md", "@problems", "@https://example.com"]
    );
    assert_eq!(
        all("// TODO: Fix @problems in @/src/index.js (see @git-changes)"),
        ["@problems", "@/src/index.js", "@git-changes"]
    );
    // No boundary before the `@` (JavaScript's regex has none either).
    assert_eq!(all("mail me@/tmp/x"), ["@/tmp/x"]);
}

fn workspace(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let p = d.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    }
    d
}

fn parse(d: &tempfile::TempDir, text: &str) -> String {
    let root = d.path().canonicalize().unwrap();
    let e = expand(&root, text);
    format!("{}{}", e.words, e.blocks)
}

#[test]
fn files_folders_and_errors_read_as_in_clines_tests() {
    let d = workspace(&[
        ("src/index.ts", b"console.log('Hello World');"),
        ("path with spaces/file.txt", b"spaced"),
        ("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("dir/index.ts", b"export const main = () => {};"),
        ("dir/README.md", b"# Source Code"),
        ("dir/utils/x.ts", b"nested"),
        ("dir/blob.bin", b"a\0b"),
        ("file1.txt", b"Content 1"),
        ("file2.txt", b"Content 2"),
    ]);
    assert_eq!(
        parse(&d, "Check @/src/index.ts for details"),
        "Check 'src/index.ts' (see below for file content) for details\n\n<file_content path=\"src/index.ts\">\nconsole.log('Hello World');\n</file_content>"
    );
    assert_eq!(
        parse(&d, "Open @\"/path with spaces/file.txt\""),
        "Open 'path with spaces/file.txt' (see below for file content)\n\n<file_content path=\"path with spaces/file.txt\">\nspaced\n</file_content>"
    );
    assert_eq!(
        parse(&d, "Check @/image.png"),
        "Check 'image.png' (see below for file content)\n\n<file_content path=\"image.png\">\n(Binary file, unable to display content)\n</file_content>"
    );
    let root = d.path().canonicalize().unwrap();
    assert_eq!(
        parse(&d, "Check @/missing.txt"),
        format!("Check 'missing.txt' (see below for file content)\n\n<file_content path=\"missing.txt\">\nError fetching content: Failed to access path \"missing.txt\": ENOENT: no such file or directory, stat '{}/missing.txt'\n</file_content>", root.display())
    );
    // libuv's byte order: upper case first.
    assert_eq!(
        parse(&d, "Look in @/dir/ folder"),
        "Look in 'dir/' (see below for folder content) folder\n\n<folder_content path=\"dir/\">\n├── README.md\n├── blob.bin\n├── index.ts\n└── utils/\n\n<file_content path=\"dir/README.md\">\n# Source Code\n</file_content>\n\n<file_content path=\"dir/index.ts\">\nexport const main = () => {};\n</file_content>\n</folder_content>"
    );
    assert_eq!(
        parse(&d, "Check @/file1.txt and @/file2.txt"),
        "Check 'file1.txt' (see below for file content) and 'file2.txt' (see below for file content)\n\n<file_content path=\"file1.txt\">\nContent 1\n</file_content>\n\n<file_content path=\"file2.txt\">\nContent 2\n</file_content>"
    );
    assert_eq!(
        parse(&d, "Check @/file1.txt and again @/file1.txt!"),
        "Check 'file1.txt' (see below for file content) and again 'file1.txt' (see below for file content)!\n\n<file_content path=\"file1.txt\">\nContent 1\n</file_content>"
    );
    assert_eq!(parse(&d, "This is plain text without any mentions"), "This is plain text without any mentions");
    assert_eq!(parse(&d, ""), "");
    // Without an editor or a browser: as written.
    assert_eq!(
        parse(&d, "See @terminal and @problems at @https://example.com"),
        "See @terminal and @problems at @https://example.com"
    );
    // The bare root is never expanded; a workspace prefix is shown, its path read here.
    assert_eq!(parse(&d, "all of @/"), "all of '' (see below for file content)");
    assert_eq!(
        parse(&d, "Check @frontend:/file1.txt"),
        "Check 'frontend:file1.txt' (see below for file content)\n\n<file_content path=\"file1.txt\">\nContent 1\n</file_content>"
    );
}

#[test]
fn nothing_outside_the_workspace_nor_behind_clineignore_is_read() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), "TOP SECRET").unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir_all(ws.join("keys")).unwrap();
    std::fs::write(ws.join(".clineignore"), "keys/\n.env\n").unwrap();
    std::fs::write(ws.join(".env"), "PASSWORD=hunter2").unwrap();
    std::fs::write(ws.join("keys/id"), "PRIVATE").unwrap();
    std::fs::write(ws.join("ok.txt"), "fine").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), ws.join("link.txt")).unwrap();
    let root = ws.canonicalize().unwrap();
    for text in ["@/../secret.txt", "@//etc/hostname", "@/link.txt", "@/.env", "@/keys/id", "@/keys/"] {
        let e = expand(&root, text);
        assert!(e.blocks.contains("Error fetching content: "), "{text}: {}", e.blocks);
        assert!(
            !e.blocks.contains("TOP SECRET") && !e.blocks.contains("hunter2") && !e.blocks.contains("PRIVATE"),
            "{text}"
        );
    }
    assert!(expand(&root, "@/../secret.txt").blocks.contains("outside the workspace"));
    assert!(expand(&root, "@/.env").blocks.contains("Access to .env is blocked by the .clineignore file settings"));
    // A folder lists an ignored entry locked, without its content.
    let e = expand(&root, "@/ws-root");
    assert!(e.blocks.contains("ENOENT"));
    let e = expand(&root, "@\"/\"");
    assert!(e.blocks.contains("ok.txt") && e.blocks.contains("fine"), "{}", e.blocks);
    assert!(e.blocks.contains("🔒 .env") && !e.blocks.contains("hunter2"), "{}", e.blocks);
}

#[test]
fn binary_as_isbinaryfile_tells_it() {
    assert!(!is_binary(b""));
    assert!(!is_binary("plain text, ünïcödé, 文件".as_bytes()));
    assert!(is_binary(b"%PDF-1.7\n"));
    assert!(is_binary(b"abc\0def"));
    assert!(!is_binary(b"\xef\xbb\xbfwith a BOM"));
    assert!(is_binary(&[0x80u8; 64]));
    assert!(!is_binary(b"mostly text with one \x80 stray byte in a long enough line of text here"));
    // isbinaryfile compares the share as a JavaScript number: 52 of 512 bytes is 10.16 %, over 10.
    let mut latin1 = vec![b'a'; 460];
    latin1.extend([0x80u8; 52]);
    assert!(is_binary(&latin1));
    latin1[460] = b'a';
    assert!(!is_binary(&latin1), "51 of 512 is 9.96 %");
}

#[test]
fn truncation_keeps_clines_lines() {
    let text: Vec<String> = (0..600).map(|i| i.to_string()).collect();
    let out = truncate_output(&text.join("\n"));
    let lines: Vec<&str> = out.split('\n').collect();
    assert_eq!(lines[99], "99");
    assert_eq!(lines[101], "[...100 lines omitted...]");
    assert_eq!(lines.last(), Some(&"599"));
    assert_eq!(truncate_output("a\nb"), "a\nb");
}

#[test]
fn git_changes_and_commits_as_cline_gives_them() {
    let d = workspace(&[("a.txt", b"one\n")]);
    let root = d.path().canonicalize().unwrap();
    assert_eq!(
        expand(&root, "Review @git-changes").blocks,
        "\n\n<git_working_state>\nNot a git repository\n</git_working_state>"
    );
    git(&root, &["init", "-q"]);
    assert_eq!(
        expand(&root, "@git-changes").blocks,
        "\n\n<git_working_state>\nWorking directory changes (new repository):\n\n?? a.txt\n\n</git_working_state>"
    );
    git(&root, &["add", "a.txt"]);
    git(&root, &["commit", "-q", "-m", "first", "-m", "the body"]);
    let e = expand(&root, "Review @git-changes");
    assert_eq!(e.words, "Review Working directory changes (see below for details)");
    assert_eq!(e.blocks, "\n\n<git_working_state>\nNo changes in working directory\n</git_working_state>");
    // A filter the repository configures never runs, whatever its name (a `-c` key is cut at
    // its first `=`).
    let marker = root.join("filter-ran");
    git(&root, &["config", "filter.evil.clean", &format!("touch {} && cat", marker.display())]);
    git(&root, &["config", "filter.x=y.clean", &format!("touch {} && cat", marker.display())]);
    std::fs::write(root.join(".gitattributes"), "*.txt filter=evil\na.txt filter=x=y\n").unwrap();
    std::fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(root.join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(root.join("secret.txt"), "hunter2\n").unwrap();
    let e = expand(&root, "Review @git-changes");
    assert!(!marker.exists(), "the repository's filter ran");
    assert!(e.blocks.starts_with("\n\n<git_working_state>\nWorking directory changes:\n\n"), "{}", e.blocks);
    assert!(e.blocks.contains(" M a.txt\n") && e.blocks.contains("+two"), "{}", e.blocks);
    assert!(!e.blocks.contains("secret.txt") && !e.blocks.contains("hunter2"), "{}", e.blocks);
    let hash = git(&root, &["rev-parse", "HEAD"]).trim().to_string();
    let short = &hash[..7];
    let e = expand(&root, &format!("See commit @{short}"));
    assert_eq!(e.words, format!("See commit Git commit '{short}' (see below for commit info)"));
    let info = e.blocks.strip_prefix(&format!("\n\n<git_commit hash=\"{short}\">\nCommit: ")).expect(&e.blocks);
    assert!(info.contains(&format!("({hash})\nAuthor: T\nDate: ")), "{info}");
    assert!(
        info.contains("\n\nMessage: first\n\nDescription:\nthe body\n\nFiles Changed:\na.txt | 1 +\n 1 file changed"),
        "{info}"
    );
    assert!(info.contains("\n\nFull Changes:\n\ndiff --git a/a.txt b/a.txt"), "{info}");
    assert!(info.ends_with("+one\n</git_commit>"), "{info}");
    let e = expand(&root, "@deadbeef1");
    assert!(e.blocks.contains("Failed to get commit info: Command failed: git rev-parse"), "{}", e.blocks);
    // A blob's hash is not a commit: `git show` would print it, `.clineignore` or not.
    git(&root, &["add", "secret.txt"]);
    git(&root, &["commit", "-q", "-m", "secret"]);
    let blob = git(&root, &["rev-parse", "HEAD:secret.txt"]).trim().to_string();
    let e = expand(&root, &format!("see @{}", &blob[..10]));
    assert!(!e.blocks.contains("hunter2"), "{}", e.blocks);
    assert!(e.blocks.contains("Failed to get commit info"), "{}", e.blocks);
}

#[test]
fn a_repository_whose_work_tree_is_elsewhere_shows_nothing_of_it() {
    let outside = workspace(&[("id_rsa", b"SECRET-KEY\n")]);
    let d = workspace(&[("a.txt", b"one\n")]);
    let root = d.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["config", "core.worktree", &outside.path().canonicalize().unwrap().display().to_string()]);
    let e = expand(&root, "Review @git-changes");
    assert!(!e.blocks.contains("SECRET-KEY") && !e.blocks.contains("id_rsa"), "{}", e.blocks);
    assert_eq!(e.blocks, "\n\n<git_working_state>\nNot a git repository\n</git_working_state>");
}

#[test]
fn a_long_run_of_punctuation_is_scanned_once() {
    // Each offset of the run used to scan the rest of it for the closing lookahead: 400k dots
    // took minutes. The lookahead is now found once, from the end.
    let text = format!("@/{}x and @/{}", ".".repeat(400_000), "!".repeat(400_000));
    let found = all(&text);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].len(), 400_003);
    assert_eq!(found[1], "@/", "the lazy match closes at once, before the punctuation");
}

/// An editor's file: its mention takes the editor's text, not the file on disk; one not
/// mentioned follows the mentions' blocks. A mention is written so the regex reads it back.
#[test]
fn a_file_an_editor_sent_is_the_text_its_mention_takes() {
    let d = workspace(&[("a.rs", b"on disk"), ("b.rs", b"bravo")]);
    let root = d.path().canonicalize().unwrap();
    let given = [("a.rs".to_string(), "unsaved".to_string()), ("/x/c.rs".to_string(), "charlie".to_string())];
    let e = expand_with(&root, "Fix @/a.rs and @/b.rs", &given);
    assert_eq!(e.words, "Fix 'a.rs' (see below for file content) and 'b.rs' (see below for file content)");
    assert_eq!(
        e.blocks,
        "\n\n<file_content path=\"a.rs\">\nunsaved\n</file_content>\
         \n\n<file_content path=\"b.rs\">\nbravo\n</file_content>\
         \n\n<file_content path=\"/x/c.rs\">\ncharlie\n</file_content>"
    );
    assert_eq!(mention_of("a.rs", " where"), Some("@/a.rs".to_string()));
    assert_eq!(mention_of("a.rs", "."), Some("@/a.rs".to_string()));
    assert_eq!(mention_of("my a.rs", " x"), Some("@\"/my a.rs\"".to_string()));
    assert_eq!(mention_of("a.", " x"), Some("@\"/a.\"".to_string()));
    assert_eq!(mention_of("a.rs", "x"), None);
    assert_eq!(mention_of("my \"a\".rs", " x"), None);
}

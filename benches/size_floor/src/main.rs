//! Uses each crate the way agent-min does (so the linker keeps what agent-min keeps): a regex,
//! a walk filtered by a glob, a line search of each file, a JSON value read and written.

use grep_regex::RegexMatcher;
use grep_searcher::{sinks::UTF8, Searcher};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, pattern, text, glob, json] = &args[..] else {
        eprintln!("usage: size-floor PATTERN TEXT GLOB JSON");
        std::process::exit(2);
    };
    let re = regex::Regex::new(pattern).expect("regex");
    println!("{}", re.is_match(text));
    let matcher = RegexMatcher::new(pattern).expect("regex");
    let glob = globset::Glob::new(glob).expect("glob").compile_matcher();
    for entry in ignore::WalkBuilder::new(".").build().flatten() {
        if glob.is_match(entry.path()) {
            let _ = Searcher::new().search_path(
                &matcher,
                entry.path(),
                UTF8(|n, line| {
                    print!("{n}:{line}");
                    Ok(true)
                }),
            );
        }
    }
    let v: serde_json::Value = serde_json::from_str(json).expect("json");
    println!("{}", serde_json::to_string(&v).expect("json"));
}

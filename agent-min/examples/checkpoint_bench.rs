//! Benchmark of checkpoints: a 10,000-file workspace in which one file changes
//! between checkpoints. Prints the median, fastest and slowest time of a checkpoint, and how
//! much the shadow repository grows per change (it should grow with the change, not with the
//! workspace).
//!
//! ```sh
//! cargo run --release -p agent-min --example checkpoint_bench [FILES] [ROUNDS]
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use agent_min::run::checkpoints::shadow::Shadow;

fn main() {
    let mut args = std::env::args().skip(1);
    let files: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(30);
    let root = std::env::temp_dir().join(format!("agent-min-checkpoint-bench-{}", std::process::id()));
    let (ws, state) = (root.join("ws"), root.join("state"));
    for i in 0..files {
        let dir = ws.join(format!("src/mod{:03}", i % 100));
        std::fs::create_dir_all(&dir).expect("create the workspace");
        let body: String = (0..8).map(|l| format!("fn f{i}_{l}() -> u32 {{ {i} * {l} }}\n")).collect();
        std::fs::write(dir.join(format!("file{i:05}.rs")), body).expect("write a file");
    }
    let ws = ws.canonicalize().expect("workspace path");

    let t = Instant::now();
    let shadow = Shadow::open(&state, &ws).unwrap_or_else(|e| panic!("{e}"));
    let first = {
        let _held = shadow.lock().expect("lock");
        shadow.snapshot("first", None, false).expect("first checkpoint").expect("taken")
    };
    let first_time = t.elapsed();
    let size_after_first = shadow.disk_bytes();

    let mut times = Vec::with_capacity(rounds);
    let mut last = first.hash.clone();
    let changed = ws.join("src/mod007/file00007.rs");
    for round in 0..rounds {
        let mut text = std::fs::read_to_string(&changed).expect("read");
        text.push_str(&format!("// change {round}\n"));
        std::fs::write(&changed, text).expect("write");
        let t = Instant::now();
        let _held = shadow.lock().expect("lock");
        let taken = shadow.snapshot("one file changed", Some(&last), false).expect("checkpoint").expect("taken");
        times.push(t.elapsed());
        assert_eq!(taken.files.len(), 1, "exactly one file changed");
        last = taken.hash;
    }
    let size_after = shadow.disk_bytes();
    let unchanged = {
        let t = Instant::now();
        let _held = shadow.lock().expect("lock");
        shadow.snapshot("nothing changed", Some(&last), false).expect("checkpoint");
        t.elapsed()
    };
    let ws_bytes = du(&ws);
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("workspace: {files} files, {:.1} MiB on disk", ws_bytes as f64 / (1 << 20) as f64);
    println!("first checkpoint (shadow repository created, every file added): {:.0} ms", ms(first_time));
    println!(
        "checkpoint with one file changed, {rounds} rounds: median {:.1} ms, fastest {:.1} ms, slowest {:.1} ms",
        ms(times[rounds / 2]),
        ms(times[0]),
        ms(times[rounds - 1])
    );
    println!("checkpoint with nothing changed: {:.1} ms", ms(unchanged));
    println!(
        "shadow repository: {:.1} MiB after the first checkpoint; +{:.1} KiB per one-file checkpoint ({} KiB over {rounds})",
        size_after_first as f64 / (1 << 20) as f64,
        (size_after - size_after_first) as f64 / 1024.0 / rounds as f64,
        (size_after - size_after_first) / 1024
    );
    let _ = std::fs::remove_dir_all(&root);
}

fn du(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::symlink_metadata(p) else { return 0 };
    if !m.is_dir() {
        return m.blocks() * 512;
    }
    std::fs::read_dir(p).map(|es| es.flatten().map(|e| du(&e.path())).sum()).unwrap_or(0)
}

//! Benchmark of checkpoints: what an edit turn's checkpoint costs in a small
//! and a large workspace, and their ratio — the goal is that it costs the change, not the
//! workspace (at most 1.6x from 2,000 to 40,000 files). An edit turn: one file rewritten, then
//! the checkpoint of the path the edit tool wrote. The two workspaces take turns, round after
//! round, so a machine's changing load weighs on both alike. For contrast, the checkpoint after
//! a command (the whole workspace scanned) with one file changed and with nothing changed, and
//! how much the shadow repository grows per change (with the change, not with the workspace).
//!
//! ```sh
//! cargo run --release -p agent-min --example checkpoint_bench [SMALL] [LARGE] [ROUNDS]
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_min::run::checkpoints::shadow::{Scope, Shadow};

/// The goal: an edit turn in the large workspace costs at most this many times the small one's.
const GOAL: f64 = 1.6;

/// One workspace, its shadow repository, and its series.
struct Bench {
    files: usize,
    ws: PathBuf,
    shadow: Shadow,
    last: String,
    first: Duration,
    edits: Vec<Duration>,
    scans: Vec<Duration>,
}

impl Bench {
    fn new(root: &Path, files: usize) -> Bench {
        let (ws, state) = (root.join(format!("ws{files}")), root.join(format!("state{files}")));
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
        Bench { files, ws, shadow, last: first.hash, first: t.elapsed(), edits: Vec::new(), scans: Vec::new() }
    }

    /// One file rewritten, then a checkpoint of `scope` (`None`: the whole workspace).
    fn turn(&mut self, round: usize, paths_only: bool) -> Duration {
        let changed = self.ws.join("src/mod007/file00007.rs");
        let mut text = std::fs::read_to_string(&changed).expect("read");
        text.push_str(&format!("// change {round}\n"));
        std::fs::write(&changed, text).expect("write");
        let wrote = [changed];
        let scope = if paths_only { Scope::Paths(&wrote) } else { Scope::All };
        let t = Instant::now();
        let _held = self.shadow.lock().expect("lock");
        let taken = self.shadow.snapshot_of(scope, "one file changed", Some(&self.last), false).expect("checkpoint");
        let took = t.elapsed();
        let taken = taken.expect("taken");
        assert_eq!(taken.files.len(), 1, "exactly one file changed");
        self.last = taken.hash;
        took
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let small: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let large: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(40_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(30).max(1);
    let root = std::env::temp_dir().join(format!("agent-min-checkpoint-bench-{}", std::process::id()));
    let mut benches = [Bench::new(&root, small), Bench::new(&root, large)];
    let before = benches.iter().map(|b| b.shadow.disk_bytes()).collect::<Vec<_>>();
    for round in 0..rounds {
        for b in benches.iter_mut() {
            let took = b.turn(round, true);
            b.edits.push(took);
        }
    }
    let grown = benches.iter().zip(&before).map(|(b, n)| b.shadow.disk_bytes().saturating_sub(*n)).collect::<Vec<_>>();
    let scan_rounds = rounds.div_ceil(3);
    for round in 0..scan_rounds {
        for b in benches.iter_mut() {
            let took = b.turn(rounds + round, false);
            b.scans.push(took);
        }
    }
    for (b, grown) in benches.iter_mut().zip(grown) {
        let unchanged = {
            let t = Instant::now();
            let _held = b.shadow.lock().expect("lock");
            b.shadow.snapshot("nothing changed", Some(&b.last), false).expect("checkpoint");
            t.elapsed()
        };
        let mut edits = b.edits.clone();
        let mut scans = b.scans.clone();
        println!("{} files, {:.1} MiB on disk:", b.files, du(&b.ws) as f64 / (1 << 20) as f64);
        println!("  first checkpoint (every file added): {:.0} ms", ms(b.first));
        println!(
            "  edit turn (the path written), {rounds} rounds: median {:.1} ms (fastest {:.1}, slowest {:.1})",
            ms(median(&mut edits)),
            ms(edits[0]),
            ms(edits[rounds - 1])
        );
        println!(
            "  after a command (whole workspace), one file changed, {scan_rounds} rounds: median {:.1} ms; nothing changed: {:.1} ms",
            ms(median(&mut scans)),
            ms(unchanged)
        );
        println!(
            "  shadow repository: +{:.1} KiB per edit turn ({} KiB over {rounds})",
            grown as f64 / 1024.0 / rounds as f64,
            grown / 1024
        );
    }
    let [a, b] = &mut benches;
    let ratio = median(&mut b.edits).as_secs_f64() / median(&mut a.edits).as_secs_f64();
    let verdict = if ratio <= GOAL { "PASS" } else { "FAIL" };
    println!("edit turn, {large} vs {small} files: {ratio:.2}x (goal at most {GOAL}x): {verdict}");
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

//! Snapshot + diff of a 500-tool server, end to end through the CLI: two snapshots
//! (baseline and a candidate with one breaking change) and the classified diff.
//! Run with `bench/run.sh`. `BENCH_TOOLS` sets the tool count (default 500).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let tools: usize = std::env::var("BENCH_TOOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let mcpspec = PathBuf::from(env!("CARGO_BIN_EXE_mcpspec"));
    let server = mcpspec.with_file_name("mcpspec-example-server");
    assert!(
        server.exists(),
        "build the example server first: cargo build --release --workspace"
    );
    let dir = std::env::temp_dir().join(format!("mcpspec-contract-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut best = Duration::MAX;
    let mut parts = (Duration::ZERO, Duration::ZERO);
    for round in 0..3 {
        let started = Instant::now();
        let base = dir.join(format!("base-{round}"));
        let cand = dir.join(format!("cand-{round}"));
        let extra = tools.saturating_sub(6).to_string();
        snapshot(
            &mcpspec,
            &format!("{} --extra-tools {extra} --page-size 100", server.display()),
            &base,
        );
        snapshot(
            &mcpspec,
            &format!(
                "{} --extra-tools {extra} --page-size 100 --change add-required-param",
                server.display()
            ),
            &cand,
        );
        let snap = started.elapsed();
        let d = Instant::now();
        let out = Command::new(&mcpspec)
            .arg("diff")
            .arg(&base)
            .arg(&cand)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "the candidate has one breaking change"
        );
        let total = started.elapsed();
        if total < best {
            best = total;
            parts = (snap, d.elapsed());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("tools: {tools} (pages of 100, each list traversed until two traversals agree)");
    println!(
        "two snapshots: {:.3}s, diff: {:.3}s, total: {:.3}s (best of 3)",
        parts.0.as_secs_f64(),
        parts.1.as_secs_f64(),
        best.as_secs_f64()
    );
}

fn snapshot(mcpspec: &Path, server: &str, out: &Path) {
    let status = Command::new(mcpspec)
        .args([
            "snapshot",
            "--stdio",
            server,
            "--era",
            "2026-07-28",
            "--out",
        ])
        .arg(out)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

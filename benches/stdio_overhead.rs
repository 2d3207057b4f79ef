//! Engine overhead over stdio: N `tools/call` requests through `mcpspec run` (one
//! scenario of N steps, each with an expectation) versus a minimal raw client that
//! writes the same lines and reads the replies, against the same example server.
//!
//! Run with `bench/run.sh` (builds the release binaries first). `BENCH_REQUESTS`
//! sets N (default 10000), `BENCH_ROUNDS` the repetitions (default 3; best is kept).
#![allow(unsafe_code, reason = "the raw client waits with libc::poll")]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let requests: usize = env_or("BENCH_REQUESTS", 10_000);
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let mcpspec = PathBuf::from(env!("CARGO_BIN_EXE_mcpspec"));
    // `BENCH_SERVER` swaps in another server command (e.g. a wrapper pinning it to a CPU).
    let server = std::env::var_os("BENCH_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| mcpspec.with_file_name("mcpspec-example-server"));
    assert!(
        server.exists(),
        "build the example server first: cargo build --release --workspace"
    );

    let dir = std::env::temp_dir().join(format!("mcpspec-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("bench.yaml");
    std::fs::write(&scenario, scenario_text(requests)).unwrap();

    let mut engine = Vec::new();
    let mut raw = Vec::new();
    // `BENCH_ONLY=raw` or `BENCH_ONLY=engine` runs one side (for profiling with `perf stat`).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    for _ in 0..rounds {
        if only != "engine" {
            raw.push(raw_loop(&server, requests));
        }
        if only == "tokio" {
            engine.push(tokio_loop(&server, requests));
            continue;
        }
        if only == "poll" {
            engine.push(poll_loop(&server, requests));
            continue;
        }
        if only != "raw" {
            engine.push(engine_run(&mcpspec, &server, &scenario));
        }
    }
    if !only.is_empty() {
        let times = if only == "raw" { &raw } else { &engine };
        let best = times.iter().min().unwrap();
        println!("{only}: {:.3}s (best of {rounds})", best.as_secs_f64());
        if let Some(r) = raw.iter().min().filter(|_| only != "raw") {
            println!(
                "raw: {:.3}s, ratio {:.3}",
                r.as_secs_f64(),
                best.as_secs_f64() / r.as_secs_f64()
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let best = |v: &[Duration]| *v.iter().min().unwrap();
    let median = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    let (e, r) = (best(&engine), best(&raw));
    println!("requests: {requests}, rounds: {rounds} (best of each)");
    println!(
        "raw line-in/line-out client: {:>8.3}s  ({:.1} µs/request)",
        r.as_secs_f64(),
        r.as_secs_f64() * 1e6 / requests as f64
    );
    println!(
        "mcpspec run:                 {:>8.3}s  ({:.1} µs/request)",
        e.as_secs_f64(),
        e.as_secs_f64() * 1e6 / requests as f64
    );
    println!(
        "ratio mcpspec / raw: {:.3} (of the medians: {:.3})",
        e.as_secs_f64() / r.as_secs_f64(),
        median(&engine).as_secs_f64() / median(&raw).as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn scenario_text(n: usize) -> String {
    let mut s = String::from("scenario: bench\neras: [2026-07-28]\nsteps:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  - name: call {i}\n    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: \"hi {i}\" }} }} }}\n    expect:\n      - {{ path: \"$.content[0].text\", equals: \"hi {i}\" }}\n"
        ));
    }
    s
}

fn engine_run(mcpspec: &PathBuf, server: &PathBuf, scenario: &PathBuf) -> Duration {
    let started = Instant::now();
    let out = Command::new(mcpspec)
        .arg("run")
        .arg(scenario)
        .arg("--stdio")
        .arg(server)
        .arg("--era")
        .arg("2026-07-28")
        .env("NO_COLOR", "1")
        .output()
        .expect("mcpspec runs");
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "mcpspec failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    elapsed
}

/// The baseline: spawn, discover, then N requests written and read one at a time.
fn raw_loop(server: &PathBuf, n: usize) -> Duration {
    let started = Instant::now();
    let (mut child, mut stdin, stdout) = spawn_server(server);
    let mut stdout = BufReader::new(stdout);
    let mut line = String::new();
    stdin.write_all(discover_line().as_bytes()).unwrap();
    stdin.flush().unwrap();
    stdout.read_line(&mut line).unwrap();
    let mut request = String::new();
    for i in 1..=n {
        // One write per line, as any sensible client does (`writeln!` on the unbuffered
        // pipe would make a syscall per formatted piece).
        request_line(&mut request, i);
        stdin.write_all(request.as_bytes()).unwrap();
        stdin.flush().unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        check_reply(&line, i);
    }
    drop(stdin);
    let _ = child.wait();
    started.elapsed()
}

/// The server with piped stdin and stdout (stderr discarded), as the std raw clients use it.
fn spawn_server(
    server: &PathBuf,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::process::ChildStdout,
) {
    let mut child = Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdin, stdout)
}

/// Experiment: the raw loop on a current-thread tokio runtime with a reader task + channel.
#[allow(dead_code)]
fn tokio_loop(server: &PathBuf, n: usize) -> Duration {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let started = Instant::now();
        let mut child = tokio::process::Command::new(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        // As mcpspec: the exchange reads the reply itself, under a deadline.
        let mut reader = tokio::io::BufReader::new(stdout);
        let mut line = String::new();
        stdin.write_all(discover_line().as_bytes()).await.unwrap();
        reader.read_line(&mut line).await.unwrap();
        let mut msg = String::new();
        for i in 1..=n {
            request_line(&mut msg, i);
            stdin.write_all(msg.as_bytes()).await.unwrap();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            line.clear();
            tokio::time::timeout_at(deadline, reader.read_line(&mut line))
                .await
                .unwrap()
                .unwrap();
            check_reply(&line, i);
        }
        drop(stdin);
        let _ = child.wait().await;
        started.elapsed()
    })
}

/// Experiment: the raw loop waiting with poll(2) (with a timeout) before each read.
/// Unix only (poll(2)); elsewhere `BENCH_ONLY=poll` says so.
#[cfg(unix)]
#[allow(dead_code)]
fn poll_loop(server: &PathBuf, n: usize) -> Duration {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let started = Instant::now();
    let (mut child, mut stdin, mut stdout) = spawn_server(server);
    let fd = stdout.as_raw_fd();
    let mut buf: Vec<u8> = Vec::with_capacity(65536);
    let mut chunk = vec![0u8; 65536];
    let mut next_line = |buf: &mut Vec<u8>| -> String {
        loop {
            if let Some(i) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                return String::from_utf8(line).unwrap();
            }
            let mut pfd = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, 30_000) };
            let k = stdout.read(&mut chunk).unwrap();
            buf.extend_from_slice(&chunk[..k]);
        }
    };
    stdin.write_all(discover_line().as_bytes()).unwrap();
    next_line(&mut buf);
    let mut request = String::new();
    for i in 1..=n {
        request_line(&mut request, i);
        stdin.write_all(request.as_bytes()).unwrap();
        let line = next_line(&mut buf);
        check_reply(&line, i);
    }
    drop(stdin);
    let _ = child.wait();
    started.elapsed()
}

#[cfg(not(unix))]
fn poll_loop(_server: &PathBuf, _n: usize) -> Duration {
    panic!("BENCH_ONLY=poll: the poll(2) experiment runs on Unix only")
}

/// The `_meta` every modern request carries, exactly as mcpspec writes it (so the server
/// does the same work for both clients).
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpspec","version":"0.1.0"}}"#;

/// The raw clients' first line.
fn discover_line() -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\",\"params\":{{{META}}}}}\n"
    )
}

/// Request `i` of the raw clients, into `out` (one write per line).
fn request_line(out: &mut String, i: usize) {
    out.clear();
    std::fmt::Write::write_fmt(
        out,
        format_args!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hi {i}\"}},{META}}}}}\n"
        ),
    )
    .unwrap();
}

/// A reply must echo the request's text.
fn check_reply(line: &str, i: usize) {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], format!("hi {i}"));
}

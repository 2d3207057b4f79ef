//! `mcpspec record`: a real client (mcpspec itself, or a script writing JSON-RPC lines)
//! talks to the example server through the recording proxy; the scenarios written from
//! the session validate and pass against the same server.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

/// The client's session: ids handed from one request to the next, an error, a tool error.
const SESSION: &str = r#"
scenario: client-session
steps:
  - name: list
    request: { method: tools/list }
  - name: create
    request: { method: tools/call, params: { name: create_note, arguments: { title: groceries, body: milk } } }
    capture: { id: "$.structuredContent.id" }
  - name: read
    request: { method: resources/read, params: { uri: "note://{{ id }}" } }
  - name: echo
    request: { method: tools/call, params: { name: echo, arguments: { text: "hello" } } }
  - name: divide by zero
    request: { method: tools/call, params: { name: divide, arguments: { a: 1, b: 0 } } }
    expect:
      - isError: true
  - name: missing
    request: { method: resources/read, params: { uri: "note://nope" } }
    expect:
      - error: { code: [-32002, -32602] }
"#;

/// `mcpspec record --out DIR [extra…] -- example-server [flags…]` as a `--stdio` line.
fn recorder(out: &Path, extra: &[&str], flags: &[&str]) -> String {
    let mut words = vec![
        mcpspec().display().to_string(),
        "record".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    words.extend(extra.iter().map(|s| s.to_string()));
    words.push("--".into());
    words.push(example_server().display().to_string());
    words.extend(flags.iter().map(|s| s.to_string()));
    shell_words::join(&words)
}

/// Run `client` through the recorder as the client mcpspec, in `era`.
fn record_with_mcpspec(client: &str, era: &str, out: &Path, extra: &[&str], flags: &[&str]) -> Run {
    let (_dir, file) = scenario_file("client.yaml", client);
    run(&[
        "run",
        file.to_str().unwrap(),
        "--era",
        era,
        "--jobs",
        "1",
        "--stdio",
        &recorder(out, extra, flags),
    ])
}

/// `SESSION` recorded over stdio in the legacy era: its folder (kept while the guard lives).
fn legacy_session() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let client = record_with_mcpspec(SESSION, "legacy", &out, &[], &[]);
    assert_eq!(client.code, 0, "{client:?}");
    (dir, out)
}

/// `mcpspec record --replay TAPE` to the server `to` (`--url URL`, or `-- SERVER…`).
fn replay_tape(tape: &Path, to: &[&str]) -> Run {
    let mut args = vec!["record", "--replay", tape.to_str().unwrap()];
    args.extend_from_slice(to);
    run(&args)
}

fn written(out: &Path) -> String {
    let mut text = String::new();
    for entry in walk(out) {
        text.push_str(&std::fs::read_to_string(&entry).unwrap_or_default());
    }
    text
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn replay(out: &Path, flags: &[&str], extra: &[&str]) -> Run {
    let scenarios = out.join("scenarios");
    let validated = run(&["validate", scenarios.to_str().unwrap()]);
    assert_eq!(validated.code, 0, "{validated:?}");
    let target = stdio_target(flags);
    let mut args = vec!["run", scenarios.to_str().unwrap(), "--stdio", &target];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn a_session_becomes_scenarios_that_pass_in_both_eras() {
    for era in ["legacy", "modern"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        let client = record_with_mcpspec(SESSION, era, &out, &[], &[]);
        assert_eq!(client.code, 0, "the client through the proxy: {client:?}");
        let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
        assert_contains(&text, &format!("eras: [{era}]"));
        // The created note's id is captured and templated into the read that used it.
        assert_contains(&text, "create_note_id: \"$.structuredContent.id\"");
        assert_contains(&text, "uri: \"note://{{ create_note_id }}\"");
        assert_contains(&text, "name: \"read note://<create_note_id>\"");
        assert_contains(&text, "isError: true");
        assert_contains(&text, "error: { code: ");
        // The UUID itself is written nowhere in the scenario.
        let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-").unwrap();
        assert!(!uuid.is_match(&text), "{text}");
        let again = replay(&out, &[], &[]);
        assert_eq!(
            again.code, 0,
            "{era}: the recorded scenarios against the same server: {again:?}\n{text}"
        );
        assert_contains(&again.stdout, "6 passed");
    }
}

#[test]
fn an_era_neutral_session_is_written_for_both_eras_only_when_it_passes_in_both() {
    let neutral = r#"
scenario: neutral
steps:
  - name: list
    request: { method: tools/list }
  - name: echo
    request: { method: tools/call, params: { name: echo, arguments: { text: "hello" } } }
"#;
    for era in ["legacy", "modern"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        let client = record_with_mcpspec(neutral, era, &out, &[], &[]);
        assert_eq!(client.code, 0, "{client:?}");
        let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
        assert_contains(&text, "eras: [legacy, modern]");
        let config = std::fs::read_to_string(out.join("mcpspec.yaml")).unwrap();
        assert_contains(&config, "eras: [legacy, modern]");
        let again = replay(&out, &[], &[]);
        assert_eq!(again.code, 0, "{era}: {again:?}\n{text}");
        assert_contains(&again.stdout, "recorded-session@legacy");
        assert_contains(&again.stdout, "recorded-session@modern");
    }
    // Nothing era-specific either, but a missing resource is -32002 in legacy and -32602 in
    // modern: the other era's run fails, the recorded era stays, and the comment says why.
    let (_dir, out) = legacy_session();
    let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
    assert_contains(
        &text,
        "# legacy only: the session used nothing era-specific, but in the modern era they did not pass: `read note://nope`: error: expected error code -32002",
    );
    assert_contains(&text, "eras: [legacy]\n");
    // An era-specific method: the recorded era, without a run in the other.
    let bound = r#"
scenario: bound
steps:
  - name: level
    request: { method: logging/setLevel, params: { level: info } }
"#;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    // (The example server has no logging: the step fails for the client, and is recorded.)
    record_with_mcpspec(bound, "legacy", &out, &[], &[]);
    let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
    assert_contains(
        &text,
        "# legacy only: it used `logging/setLevel`, which one era does not have\neras: [legacy]",
    );
}

/// The client of the book's "When the server asks back" chapter: the written `client:`
/// script answers as the recorded client did.
const ASKS: &str = r#"
scenario: asks
client:
  capabilities:
    roots: {listChanged: true}
    sampling: {}
    elicitation: {form: true}
  roots:
    - uri: "file:///work/demo"
      name: project
  sampling:
    - when: {path: "$.params.messages[0].content.text", contains: secret}
      refuse: true
    - text: A two-line summary.
      model: scripted-model
  elicitation:
    - when: {path: "$.params.message", contains: delete}
      action: decline
    - action: accept
      content: {note: "approved by mcpspec"}
steps:
  - name: summary
    request: { method: tools/call, params: {name: summarize, arguments: {text: a long story}} }
  - name: refused
    request: { method: tools/call, params: {name: summarize, arguments: {text: the secret plan}} }
  - name: roots
    request: { method: tools/call, params: {name: client_roots, arguments: {}} }
  - name: deploy
    request: { method: tools/call, params: {name: ask_confirmation, arguments: {action: deploy}} }
  - name: delete
    request: { method: tools/call, params: {name: ask_confirmation, arguments: {action: delete all}} }
"#;

#[test]
fn the_servers_requests_are_answered_as_the_client_answered_them() {
    for era in ["legacy", "modern"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        let client = record_with_mcpspec(ASKS, era, &out, &[], &["--interactive"]);
        assert_eq!(client.code, 0, "{client:?}");
        let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
        for part in [
            "roots: {listChanged: true}",
            "- uri: \"file:///work/demo\"",
            "refuse: true",
            "text: \"A two-line summary.\"",
            "action: decline",
            "content: { confirm: true, note: \"approved by mcpspec\" }",
        ] {
            assert_contains(&text, part);
        }
        let again = replay(&out, &["--interactive"], &[]);
        assert_eq!(again.code, 0, "{era}: {again:?}\n{text}");
        assert_contains(&again.stdout, "5 passed");
    }
}

#[test]
fn no_secret_reaches_the_recording() {
    let token = "tok-7Hq2xV9pLmN4sR8w";
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZTEyMyJ9.c2lnbmF0dXJlLWJ5dGVz";
    let openai = "sk-proj-9f8e7d6c5b4a3928171605";
    let session = format!(
        r#"
scenario: secrets
steps:
  - name: token in an argument
    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: "{token}" }} }} }}
  - name: token inside text
    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: "Authorization: Bearer {token} and {jwt}" }} }} }}
  - name: a key shaped like one
    request: {{ method: tools/call, params: {{ name: create_note, arguments: {{ title: keys, body: "{openai}" }} }} }}
"#
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let (_d, file) = scenario_file("client.yaml", &session);
    // The server's command line carries the token too.
    let line = shell_words::join([
        mcpspec().display().to_string(),
        "record".into(),
        "--out".into(),
        out.display().to_string(),
        "--".into(),
        "env".into(),
        format!("UPSTREAM_API_KEY={token}"),
        example_server().display().to_string(),
    ]);
    let client = run_in(
        &repo_root(),
        &[
            "run",
            file.to_str().unwrap(),
            "--era",
            "legacy",
            "--jobs",
            "1",
            "--stdio",
            &line,
        ],
        &[("SERVICE_API_TOKEN", token)],
    );
    assert_eq!(client.code, 0, "{client:?}");
    let all = written(&out);
    for secret in [token, jwt, openai] {
        // Every stretch of 6 bytes of the secret: no piece of it is left either.
        for w in secret.as_bytes().windows(6) {
            let piece = std::str::from_utf8(w).unwrap();
            if piece.chars().all(|c| c.is_ascii_alphanumeric())
                && !["eyJhbG", "ciOiJI"].contains(&piece)
            {
                assert!(
                    !all.contains(piece),
                    "`{piece}` of a secret is in the recording:\n{all}"
                );
            }
        }
    }
    // The known secret is a parameter of the scenario, and replays from the environment.
    let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
    assert_contains(&text, "text: \"{{ service_api_token }}\"");
    assert_contains(&text, "parameters: [service_api_token]");
    let scenarios = out.join("scenarios");
    let again = run_in(
        &repo_root(),
        &[
            "run",
            scenarios.to_str().unwrap(),
            "--stdio",
            &stdio_target(&[]),
            "--set",
            "service_api_token=env:SERVICE_API_TOKEN",
        ],
        &[("SERVICE_API_TOKEN", token)],
    );
    assert_eq!(again.code, 0, "{again:?}\n{text}");
}

/// A client written by hand: JSON-RPC lines to the recorder's stdin, replies read back.
struct ScriptedClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl ScriptedClient {
    fn start(out: &Path, flags: &[&str]) -> ScriptedClient {
        ScriptedClient::start_with(out, &[], flags)
    }

    /// `mcpspec record --out OUT [extra…] -- example-server [flags…]`, initialized.
    fn start_with(out: &Path, extra: &[&str], flags: &[&str]) -> ScriptedClient {
        let mut words = vec![
            "record".to_string(),
            "--out".into(),
            out.display().to_string(),
        ];
        words.extend(extra.iter().map(|s| s.to_string()));
        words.push("--".into());
        words.push(example_server().display().to_string());
        words.extend(flags.iter().map(|s| s.to_string()));
        let mut child = Command::new(mcpspec())
            .args(&words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut client = ScriptedClient {
            child,
            stdin,
            stdout,
        };
        client.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}"#);
        client.reply();
        client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        client
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
    }

    fn reply(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// Close stdin and wait for the recorder (bounded); its stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin);
        let stderr = drain(self.child.stderr.take().unwrap());
        let code = wait_limited(&mut self.child, Duration::from_secs(60));
        (code, stderr.join().unwrap())
    }
}

#[test]
fn an_interrupted_recording_writes_the_session_within_the_grace() {
    for signal in ["INT", "TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        let mut client = ScriptedClient::start_with(&out, &["--check"], &[]);
        client.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"before the signal"}}}"#);
        assert!(client.reply().contains("before the signal"));
        // The client is still attached (its stdin open): only the signal ends the session.
        let sent = std::time::Instant::now();
        let killed = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(client.child.id().to_string())
            .status()
            .unwrap();
        assert!(killed.success());
        let stderr = drain(client.child.stderr.take().unwrap());
        let code = wait_limited(&mut client.child, Duration::from_secs(10));
        let took = sent.elapsed();
        let stderr = stderr.join().unwrap();
        assert_eq!(code, Some(0), "SIG{signal}: {stderr}");
        assert!(
            took < Duration::from_millis(1900),
            "SIG{signal}: the recorder took {took:?} to exit: {stderr}"
        );
        let tape = std::fs::read_to_string(out.join("session.tape.jsonl")).unwrap();
        let last: serde_json::Value = serde_json::from_str(tape.lines().last().unwrap()).unwrap();
        assert_eq!(last["end"], "interrupted", "{last}");
        let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
        assert_contains(
            &text,
            &format!("(it ended: interrupted — mcpspec got SIG{signal})"),
        );
        assert_contains(&text, "name: \"call echo\"");
        assert_contains(&stderr, "--check: not run (interrupted)");
        drop(client);
        let again = replay(&out, &[], &[]);
        assert_eq!(again.code, 0, "{again:?}\n{text}");
    }
}

#[test]
fn a_server_that_crashes_mid_session_leaves_everything_up_to_the_crash() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let mut client = ScriptedClient::start(&out, &["--defect", "crash-after-calls=3"]);
    for i in 1..=2 {
        client.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"n{i}"}}}}}}"#));
        assert!(client.reply().contains(&format!("n{i}")));
    }
    client.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"n3"}}}"#);
    // The server exits: the recorder ends the session and closes the client's side.
    assert_eq!(client.reply(), "");
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_contains(&stderr, "the server crashed");
    let tape = std::fs::read_to_string(out.join("session.tape.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(tape.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "end");
    assert_eq!(last["end"], "serverCrashed", "{last}");
    let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
    assert_contains(&text, "THE SERVER CRASHED");
    assert_contains(&text, "name: \"call echo\"");
    assert_contains(&text, "name: \"call echo #2\"");
    assert!(
        !text.contains("echo #3"),
        "the unanswered call is no step:\n{text}"
    );
    assert_contains(&stderr, "got no answer before the session ended");
}

#[test]
fn a_long_session_records_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let mut client = ScriptedClient::start(&out, &[]);
    let pid = client.child.id();
    // 10,000 messages: 4,000 calls and their replies, 2,000 notifications between them, each
    // call's text 1 KiB so the session is ~10 MB on the wire.
    let text = "x".repeat(1024);
    for i in 1..=4000 {
        client.send(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}{i}"}}}}}}"#));
        if i % 2 == 0 {
            client.send(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#);
        }
        assert!(client.reply().contains(&format!("{text}{i}")));
    }
    let peak = peak_rss_kib(pid);
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0), "{stderr}");
    let tape = std::fs::read_to_string(out.join("session.tape.jsonl")).unwrap();
    assert_eq!(
        tape.lines().count(),
        2 + 1 + 4000 * 2 + 2000 + 1,
        "handshake, calls, notifications, end"
    );
    if let Some(peak) = peak {
        // The tape is streamed: the recorder holds no session in memory (~10 MB went by).
        assert!(peak < 48 * 1024, "peak RSS {peak} KiB while recording");
    }
    assert_contains(&stderr, "notifications the client sent are not replayed");
}

/// The peak resident size of a process so far (Linux), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[test]
fn a_malformed_line_is_forwarded_as_is_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let mut client = ScriptedClient::start(&out, &[]);
    client.send("{not json");
    let reply = client.reply();
    assert!(
        reply.contains("-32700"),
        "the server saw the line as sent: {reply}"
    );
    let (code, stderr) = client.finish();
    assert_eq!(code, Some(0));
    assert_contains(&stderr, "1 line on the wire were not JSON");
    let tape = std::fs::read_to_string(out.join("session.tape.jsonl")).unwrap();
    assert_contains(&tape, r#""kind":"malformed","ms":"#);
    assert_contains(&tape, r#""text":"{not json""#);
}

#[test]
fn check_golden_and_split_from_a_tape() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    // --check runs the scenarios right after the session.
    let client = record_with_mcpspec(SESSION, "legacy", &out, &["--check"], &[]);
    assert_eq!(client.code, 0, "{client:?}");
    // Written again from the tape: goldens, one scenario per tool.
    let again = dir.path().join("again");
    let tape = out.join("session.tape.jsonl");
    let target = stdio_target(&[]);
    let from_tape = run(&[
        "record",
        "--out",
        again.to_str().unwrap(),
        "--from-tape",
        tape.to_str().unwrap(),
        "--expect",
        "golden",
        "--split",
        "tool",
        "--check",
        "--stdio",
        &target,
    ]);
    assert_eq!(from_tape.code, 0, "{from_tape:?}");
    let files: Vec<String> = walk(&again.join("scenarios"))
        .iter()
        .map(|p| p.strip_prefix(&again).unwrap().display().to_string())
        .collect();
    assert!(
        files.contains(&"scenarios/recorded-session-create-note.yaml".to_string()),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("scenarios/__snapshots__/recorded-session-create-note/")),
        "{files:?}"
    );
    // The read of the created note carries the create it needs.
    let echo = std::fs::read_to_string(again.join("scenarios/recorded-session-echo.yaml")).unwrap();
    assert_contains(&echo, "snapshot: call-echo");
}

/// The recorder as an HTTP reverse proxy in front of `upstream`; its stderr so far.
struct HttpRecorder {
    child: std::process::Child,
    url: String,
    stderr: std::thread::JoinHandle<String>,
}

impl HttpRecorder {
    fn start(out: &Path, upstream: &str) -> HttpRecorder {
        let mut child = Command::new(mcpspec())
            .args([
                "record",
                "--out",
                out.to_str().unwrap(),
                "--url",
                upstream,
                "--listen",
                "127.0.0.1:0",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("mcpspec record: listening on ")
            .unwrap_or_else(|| panic!("no address: {line}"))
            .to_string();
        let stderr = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
            rest
        });
        HttpRecorder { child, url, stderr }
    }

    /// Wait for the session's end (the client's DELETE), else end it with SIGTERM.
    fn finish(mut self, signal: bool) -> (Option<i32>, String) {
        if signal {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(self.child.id().to_string())
                .status();
        }
        let code = wait_limited(&mut self.child, Duration::from_secs(30));
        (code, self.stderr.join().unwrap())
    }
}

/// The client session `SESSION` in `era` through a recorder in front of `upstream`, until
/// the recording ends.
fn record_over_http(out: &Path, upstream: &str, era: &str) {
    let recorder = HttpRecorder::start(out, upstream);
    let (_d, file) = scenario_file("client.yaml", SESSION);
    let client = run(&[
        "run",
        file.to_str().unwrap(),
        "--era",
        era,
        "--jobs",
        "1",
        "--url",
        &recorder.url,
    ]);
    assert_eq!(
        client.code, 0,
        "{era}: the client through the proxy: {client:?}"
    );
    // Legacy: the client's DELETE of its session ends the recording; modern: SIGTERM.
    let (code, stderr) = recorder.finish(era == "modern");
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn an_http_session_is_recorded_through_the_reverse_proxy_in_both_eras() {
    let server = HttpServer::start(&[]);
    for era in ["legacy", "modern"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        record_over_http(&out, &server.url, era);
        let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
        assert_contains(&text, "uri: \"note://{{ create_note_id }}\"");
        let config = std::fs::read_to_string(out.join("mcpspec.yaml")).unwrap();
        assert_contains(&config, &format!("url: \"{}\"", server.url));
        let again = run(&[
            "run",
            out.join("scenarios").to_str().unwrap(),
            "--url",
            &server.url,
        ]);
        assert_eq!(again.code, 0, "{era}: {again:?}\n{text}");
        assert_contains(&again.stdout, "6 passed");
    }
}

#[test]
fn a_session_with_server_everything_round_trips() {
    let entry = repo_root()
        .join("tests/interop/everything-2026.8.31/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "run `npm ci` in tests/interop/everything-2026.8.31 (.ci/run does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec");
    let session = r#"
scenario: everything
steps:
  - name: list
    request: { method: tools/list }
  - name: echo
    request: { method: tools/call, params: { name: echo, arguments: { message: hello } } }
  - name: sum
    request: { method: tools/call, params: { name: get-sum, arguments: { a: 2, b: 3 } } }
  - name: structured
    request: { method: tools/call, params: { name: get-structured-content, arguments: { location: New York } } }
"#;
    let (_d, file) = scenario_file("client.yaml", session);
    let line = shell_words::join([
        mcpspec().display().to_string(),
        "record".into(),
        "--out".into(),
        out.display().to_string(),
        "--".into(),
        "node".into(),
        entry.display().to_string(),
        "stdio".into(),
    ]);
    let client = run(&[
        "run",
        file.to_str().unwrap(),
        "--era",
        "legacy",
        "--jobs",
        "1",
        "--stdio",
        &line,
    ]);
    assert_eq!(client.code, 0, "{client:?}");
    let text = std::fs::read_to_string(out.join("scenarios/recorded-session.yaml")).unwrap();
    assert_contains(&text, "name: \"call get-sum\"");
    let target = shell_words::join([
        "node".to_string(),
        entry.display().to_string(),
        "stdio".into(),
    ]);
    let again = run(&[
        "run",
        out.join("scenarios").to_str().unwrap(),
        "--stdio",
        &target,
    ]);
    assert_eq!(again.code, 0, "{again:?}\n{text}");
    assert_contains(&again.stdout, "4 passed");

    // Over Streamable HTTP (server-everything speaks the legacy era only).
    let mut server = Command::new("node")
        .arg("--import")
        .arg(repo_root().join("tests/interop/everything-2026.8.31/listen-loopback.mjs"))
        .arg(&entry)
        .arg("streamableHttp")
        .env("PORT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("listening on ").map(str::to_string))
        .expect("server-everything listens");
    std::thread::spawn(move || lines.for_each(drop));
    let http_out = dir.path().join("rec-http");
    let recorder = HttpRecorder::start(&http_out, &url);
    let client = run(&[
        "run",
        file.to_str().unwrap(),
        "--era",
        "legacy",
        "--jobs",
        "1",
        "--url",
        &recorder.url,
    ]);
    let (code, stderr) = recorder.finish(false);
    assert_eq!(client.code, 0, "{client:?}");
    assert_eq!(code, Some(0), "{stderr}");
    let again = run(&[
        "run",
        http_out.join("scenarios").to_str().unwrap(),
        "--url",
        &url,
    ]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(again.code, 0, "{again:?}");
    assert_contains(&again.stdout, "4 passed");
}

#[test]
fn a_replay_shows_where_the_server_answers_differently_now() {
    let (_dir, out) = legacy_session();
    let tape = out.join("session.tape.jsonl");
    let server = example_server().display().to_string();
    // The same server: the new note's id is followed (the read uses it), nothing differs.
    let same = replay_tape(&tape, &["--", &server]);
    assert_eq!(same.code, 0, "{same:?}");
    assert_contains(&same.stdout, "Replay: 7 request(s), 0 answered differently");
    // A next release whose tool gained a required parameter: the list differs, shown as a diff.
    let changed = replay_tape(&tape, &["--", &server, "--change", "add-required-param"]);
    assert_eq!(changed.code, 1, "{changed:?}");
    assert_contains(&changed.stdout, "DIFFERS  tools/list (id ");
    assert_contains(&changed.stdout, "+            \"country\"");
    assert_contains(&changed.stdout, "1 answered differently");
}

#[test]
fn a_replay_over_http_takes_the_new_session_in_both_eras() {
    let recorded_at = HttpServer::start(&[]);
    let fresh = HttpServer::start(&[]);
    let changed = HttpServer::start(&["--change", "add-required-param"]);
    for era in ["legacy", "modern"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        record_over_http(&out, &recorded_at.url, era);
        let tape = out.join("session.tape.jsonl");
        // Another server process: a legacy session there is a new one (the recorded id is
        // unknown to it), the new note's id is followed.
        let same = replay_tape(&tape, &["--url", &fresh.url]);
        assert_eq!(same.code, 0, "{era}: {same:?}");
        assert_contains(&same.stdout, "Replay: 7 request(s), 0 answered differently");
        let now = replay_tape(&tape, &["--url", &changed.url]);
        assert_eq!(now.code, 1, "{era}: {now:?}");
        assert_contains(&now.stdout, "DIFFERS  tools/list (id ");
        assert_contains(&now.stdout, "+            \"country\"");
        assert_contains(&now.stdout, "1 answered differently");
    }
    // Not an MCP endpoint: what came instead of each answer.
    let (_dir, out) = legacy_session();
    let wrong = fresh.url.replace("/mcp", "/nowhere");
    let tape = out.join("session.tape.jsonl");
    let lost = replay_tape(&tape, &["--url", &wrong]);
    assert_eq!(lost.code, 1, "{lost:?}");
    assert_contains(&lost.stdout, "+HTTP 404 Not Found");
    // Recording over HTTP still needs the address the client connects to.
    let no_listen = run(&[
        "record",
        "--out",
        out.to_str().unwrap(),
        "--url",
        &fresh.url,
    ]);
    assert_ne!(no_listen.code, 0, "{no_listen:?}");
    assert_contains(&no_listen.stderr, "--url needs --listen ADDR:PORT");
}

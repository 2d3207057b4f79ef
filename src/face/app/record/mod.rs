//! `mcpspec record`: stand between a real client and the server, then write what happened
//! as scenarios (see the book's "From a session to scenarios").
//!
//! Everything the session said goes to the tape first (scrubbed of secrets, streamed to
//! disk); the scenarios are written from the tape, so `--from-tape` can write them again
//! with other options, and a crash mid-session leaves a tape up to the crash.

mod render;
mod session;

use std::path::{Path, PathBuf};

use crate::face::cli::{RecordArgs, exit};
use crate::run::record::tape::TAPE_SUFFIX;
use crate::run::record::{End, Scrubber, TapeWriter, read_tape, stdio};

pub fn record(args: RecordArgs) -> i32 {
    if let Some(tape) = &args.replay {
        return replay(&args, tape);
    }
    if let Err(e) = std::fs::create_dir_all(args.out()) {
        errln!(
            "mcpspec record: cannot create {}: {e}",
            args.out().display()
        );
        return exit::INVALID_INPUT;
    }
    let (tape, session_name) = match &args.from_tape {
        Some(tape) => (tape.clone(), None),
        None => {
            let relay = match (&args.url, args.listen) {
                (Some(url), Some(listen)) => http_relay(url, listen),
                (Some(_), None) => {
                    errln!(
                        "mcpspec record: --url needs --listen ADDR:PORT, where the client connects instead of the server"
                    );
                    return exit::INVALID_INPUT;
                }
                _ if args.command.is_empty() => {
                    errln!(
                        "mcpspec record: give the server's command after `--` (mcpspec record --out DIR -- SERVER ARGS…), or --from-tape FILE"
                    );
                    return exit::INVALID_INPUT;
                }
                _ => Ok(Relay::Stdio(&args.command)),
            };
            match relay.and_then(|r| record_session(r, args.out(), scrubber(&args.secret_env))) {
                Ok(recorded) => recorded,
                Err(e) => {
                    errln!("mcpspec record: {e}");
                    return exit::UNREACHABLE;
                }
            }
        }
    };
    let code = write_scenarios(&args, &tape, session_name.as_deref());
    if code != 0 || !args.check {
        return code;
    }
    if crate::ground::signals::received().is_some() {
        // The grace after a signal is for writing the session, not for running it.
        errln!(
            "mcpspec record --check: not run (interrupted); run `mcpspec run {}` to check",
            args.out().join(render::SCENARIO_DIR).display()
        );
        return code;
    }
    check(&args)
}

/// The tape's scrubber: credential-named variables of the environment, and the ones named
/// with `--secret-env` whatever their names.
fn scrubber(extra: &[String]) -> Scrubber {
    Scrubber::from_env(std::env::vars(), extra)
}

/// Where a recording goes.
enum Relay<'a> {
    Stdio(&'a [String]),
    Http {
        upstream: reqwest::Url,
        listen: std::net::SocketAddr,
    },
}

/// Record one session (stdio or HTTP) onto a new tape in `out`; the tape's path and the
/// session's name.
fn record_session(
    relay: Relay,
    out: &Path,
    scrubber: Scrubber,
) -> std::io::Result<(PathBuf, Option<String>)> {
    let (tape, name) = TapeWriter::create_in(out, scrubber)?;
    let tape_path = out.join(format!("{name}{TAPE_SUFFIX}"));
    let runtime = super::runtime();
    let session = runtime.block_on(async {
        crate::ground::signals::install();
        crate::ground::signals::defer_exit();
        match relay {
            Relay::Stdio(command) => stdio::relay(command, tape).await,
            Relay::Http { upstream, listen } => {
                crate::run::record::http::relay(listen, upstream, tape, |addr| {
                    errln!("mcpspec record: listening on http://{addr}/mcp");
                })
                .await
            }
        }
    })?;
    report_session(&session, &tape_path);
    Ok((tape_path, Some(name)))
}

/// The HTTP relay of `--url` and `--listen` (a loopback address only).
fn http_relay(url: &str, listen: std::net::SocketAddr) -> std::io::Result<Relay<'static>> {
    let upstream =
        reqwest::Url::parse(url).map_err(|e| std::io::Error::other(format!("--url {url}: {e}")))?;
    if !listen.ip().is_loopback() {
        return Err(std::io::Error::other(format!(
            "--listen {listen}: only a loopback address (127.0.0.1, [::1]) is listened on"
        )));
    }
    Ok(Relay::Http { upstream, listen })
}

fn report_session(session: &crate::run::record::stdio::Session, tape_path: &Path) {
    errln!(
        "mcpspec record: {} recorded ({}){}; tape: {}",
        plural(session.messages, "message"),
        session.detail,
        if session.malformed > 0 {
            format!(", {} not JSON", plural(session.malformed, "line"))
        } else {
            String::new()
        },
        tape_path.display()
    );
    if session.end == End::ServerCrashed {
        errln!(
            "mcpspec record: the server crashed; the recording holds everything up to the crash"
        );
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Read the tape and write the scenarios (and `mcpspec.yaml` when the server's command is
/// known), then print the notes.
fn write_scenarios(args: &RecordArgs, tape: &Path, session_name: Option<&str>) -> i32 {
    let entries = match read_tape(tape) {
        Ok(e) => e,
        Err(e) => {
            errln!("mcpspec record: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let session = session::Session::read(&entries);
    let name = match (&args.name, session_name) {
        (Some(name), _) => name.clone(),
        (None, Some(session)) => format!("recorded-{session}"),
        (None, None) => tape
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(TAPE_SUFFIX))
            .map_or("recorded-session".into(), |s| format!("recorded-{s}")),
    };
    let mut options = render::Options {
        name,
        expect: args.expect,
        split: args.split,
        eras: first_eras(args, &session),
    };
    let mut written = match write_rendered(args, &session, &options) {
        Ok(w) => w,
        Err(code) => return code,
    };
    if options.eras == render::Eras::Both {
        let other = other_era(&session);
        match passes_in(args, other) {
            Ok(()) => written.0.notes.push(format!(
                "the session used nothing era-specific and its scenarios pass in the {other} era too: written for both eras"
            )),
            Err(why) => {
                options.eras = render::Eras::Only(format!(
                    "the session used nothing era-specific, but in the {other} era {why}"
                ));
                written = match write_rendered(args, &session, &options) {
                    Ok(w) => w,
                    Err(code) => return code,
                };
            }
        }
    }
    let (rendered, scenarios) = written;
    if !args.command.is_empty() || args.url.is_some() {
        let config = config_text(args, &session, &options.eras, &rendered.parameters);
        let path = args.out().join("mcpspec.yaml");
        if let Err(e) = crate::ground::files::write_whole(&path, config) {
            errln!("mcpspec record: cannot write {}: {e}", path.display());
            return exit::INVALID_INPUT;
        }
    }
    errln!(
        "mcpspec record: wrote {} to {}",
        plural(scenarios as u64, "scenario"),
        args.out().join(render::SCENARIO_DIR).display()
    );
    for note in &rendered.notes {
        errln!("  note: {note}");
    }
    if !rendered.parameters.is_empty() {
        let list: Vec<String> = rendered
            .parameters
            .iter()
            .map(|p| format!("--set {p}=env:{}", p.to_ascii_uppercase()))
            .collect();
        errln!(
            "  note: secrets the client sent are parameters now; run with {}",
            list.join(" ")
        );
    }
    0
}

/// Render the session with `options` and write its files; what was rendered and how many
/// scenarios were written.
fn write_rendered(
    args: &RecordArgs,
    session: &session::Session,
    options: &render::Options,
) -> Result<(render::Rendered, usize), i32> {
    let rendered = render::render(session, options);
    let mut scenarios = 0;
    for file in &rendered.files {
        let path = args.out().join(&file.path);
        let ok = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| crate::ground::files::write_whole(&path, &file.text));
        if let Err(e) = ok {
            errln!("mcpspec record: cannot write {}: {e}", path.display());
            return Err(exit::INVALID_INPUT);
        }
        if path.extension().is_some_and(|e| e == "yaml") {
            scenarios += 1;
        }
    }
    Ok((rendered, scenarios))
}

/// The eras to write first: both when the session used nothing era-specific and can be
/// run in the other era to see (then [`passes_in`] decides), else the recorded one and why.
fn first_eras(args: &RecordArgs, session: &session::Session) -> render::Eras {
    let other = other_era(session);
    if session.era.is_none() {
        return render::Eras::Only("the client's era is not on the tape".into());
    }
    if let Some(why) = session.era_bound() {
        return render::Eras::Only(why);
    }
    if crate::ground::signals::received().is_some() {
        return render::Eras::Only(format!(
            "the session used nothing era-specific, but the recording was interrupted before the scenarios were run in the {other} era"
        ));
    }
    if run_command(args).is_err() {
        return render::Eras::Only(format!(
            "the session used nothing era-specific, but there was no server to run the scenarios against in the {other} era (give --stdio with --from-tape)"
        ));
    }
    render::Eras::Both
}

/// The era the session was not recorded in.
fn other_era(session: &session::Session) -> &'static str {
    match session.era {
        Some(session::EraUsed::Modern) => session::EraUsed::Legacy.label(),
        _ => session::EraUsed::Modern.label(),
    }
}

/// Run the written scenarios in `era` against the recorded server, quietly: `Err` says how
/// they failed.
fn passes_in(args: &RecordArgs, era: &str) -> Result<(), String> {
    let mut cmd = run_command(args)?;
    cmd.arg("--era").arg(era);
    cmd.stdin(std::process::Stdio::null());
    let out = cmd
        .output()
        .map_err(|e| format!("the scenarios could not be run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = first_failure(&stdout)
        .or_else(|| {
            stderr
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let first =
        crate::ground::redact::known().redact(&crate::ground::redact::shorten(first.trim(), 200));
    Err(if first.is_empty() {
        format!(
            "they did not pass (exit {})",
            out.status.code().unwrap_or(-1)
        )
    } else {
        format!("they did not pass: {first}")
    })
}

/// `mcpspec.yaml` of the recording folder: the server as a target (its command line with
/// secret-looking words masked), the scenarios as paths.
fn config_text(
    args: &RecordArgs,
    session: &session::Session,
    eras: &render::Eras,
    parameters: &std::collections::BTreeSet<String>,
) -> String {
    let redactor = crate::ground::redact::known();
    let words: Vec<String> = args
        .command
        .iter()
        .map(|w| redactor.redact(&scrubber(&args.secret_env).text(w)))
        .collect();
    let command = shell_words::join(&words);
    let target = match &args.url {
        Some(url) => format!(
            "url: {}",
            crate::ground::yaml::write::quoted(&crate::ground::redact::safe_url(url))
        ),
        None => format!("stdio: {}", crate::ground::yaml::write::quoted(&command)),
    };
    let era = match eras {
        render::Eras::Both => "legacy, modern",
        render::Eras::Only(_) => session.era.unwrap_or(session::EraUsed::Legacy).label(),
    };
    let mut out = String::from(
        "# Written by `mcpspec record`: `mcpspec run` in this folder replays the recorded session.\n",
    );
    out.push_str(&format!(
        "targets:\n  recorded:\n    {target}\ndefaultTarget: recorded\neras: [{era}]\npaths: [{}]\n",
        render::SCENARIO_DIR
    ));
    if command.contains(crate::ground::redact::MASK) || command.contains("<param:") {
        out.push_str("# A secret on the server's command line is masked above: put it back from the environment.\n");
    }
    for p in parameters {
        out.push_str(&format!(
            "# the scenarios need --set {p}=env:{}\n",
            p.to_ascii_uppercase()
        ));
    }
    out
}

/// `--check`: run the written scenarios against the same server, as `mcpspec run` would.
fn check(args: &RecordArgs) -> i32 {
    let mut cmd = match run_command(args) {
        Ok(cmd) => cmd,
        Err(e) => {
            errln!("mcpspec record --check: {e}");
            return exit::INVALID_INPUT;
        }
    };
    if let Some(era) = read_era(args.out()) {
        cmd.arg("--era").arg(era);
    }
    errln!("mcpspec record --check: running the scenarios against the server");
    match cmd.status() {
        Ok(status) => status.code().unwrap_or(exit::INVALID_INPUT),
        Err(e) => {
            errln!("mcpspec record --check: {e}");
            exit::INVALID_INPUT
        }
    }
}

/// `mcpspec run` of the written scenarios against the recorded server (with the
/// parameters they need); `Err` when the server is not known.
fn run_command(args: &RecordArgs) -> Result<std::process::Command, String> {
    let me = std::env::current_exe().map_err(|_| "cannot find the mcpspec executable")?;
    let mut cmd = std::process::Command::new(me);
    cmd.arg("run").arg(args.out().join(render::SCENARIO_DIR));
    if !args.command.is_empty() {
        cmd.arg("--stdio").arg(shell_words::join(&args.command));
    } else if let Some(url) = &args.url {
        cmd.arg("--url").arg(url);
    } else if let Some(target) = &args.target {
        cmd.arg("--stdio").arg(target);
    } else {
        return Err("with --from-tape, give the server with --stdio".into());
    }
    for p in scenario_parameters(args.out()) {
        cmd.arg("--set")
            .arg(format!("{p}=env:{}", p.to_ascii_uppercase()));
    }
    Ok(cmd)
}

/// The first failed step of a run's console report and why (`` `read note://nope`: error:
/// expected error code -32002, got -32602 ``).
fn first_failure(report: &str) -> Option<String> {
    let mut lines = report.lines();
    while let Some(line) = lines.next() {
        let step = line
            .strip_prefix("  ")
            .map(str::trim_start)
            .and_then(|l| l.strip_prefix("FAIL").or_else(|| l.strip_prefix("ERROR")));
        if let Some(step) = step {
            let why = lines.find(|l| !l.trim().is_empty()).unwrap_or_default();
            return Some(format!("`{}`: {}", step.trim(), why.trim()));
        }
    }
    None
}

/// The era the scenarios were written for (from their `eras:` line); none when they were
/// written for both (each runs in its own).
fn read_era(out: &Path) -> Option<String> {
    scenario_texts(out)
        .into_iter()
        .find_map(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("eras: [")
                    .map(|r| r.trim_end_matches(']').to_string())
            })
        })
        .filter(|era| !era.contains(','))
}

fn scenario_parameters(out: &Path) -> Vec<String> {
    let mut params = std::collections::BTreeSet::new();
    for t in scenario_texts(out) {
        for l in t.lines() {
            if let Some(r) = l.trim().strip_prefix("parameters: [") {
                let list = r.split(']').next().unwrap_or_default();
                params.extend(list.split(", ").map(str::to_string));
            }
        }
    }
    params.into_iter().collect()
}

fn scenario_texts(out: &Path) -> Vec<String> {
    let dir: PathBuf = out.join(render::SCENARIO_DIR);
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
    paths.sort();
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// `--replay TAPE -- SERVER` (or `--url URL`): the recorded client side sent again; a
/// diff per answer that changed.
fn replay(args: &RecordArgs, tape: &Path) -> i32 {
    use crate::run::record::replay::Server;
    let server = match &args.url {
        Some(url) => match reqwest::Url::parse(url) {
            Ok(u) => Server::Http(u),
            Err(e) => {
                errln!("mcpspec record --replay: --url {url}: {e}");
                return exit::INVALID_INPUT;
            }
        },
        None if args.command.is_empty() => {
            errln!("mcpspec record --replay: give the server's command after `--`, or its --url");
            return exit::INVALID_INPUT;
        }
        None => Server::Stdio(&args.command),
    };
    let entries = match read_tape(tape) {
        Ok(e) => e,
        Err(e) => {
            errln!("mcpspec record: {e}");
            return exit::INVALID_INPUT;
        }
    };
    let runtime = super::runtime();
    let replayed = runtime.block_on(crate::run::record::replay::replay(
        &entries,
        server,
        args.timeout,
    ));
    let replayed = match replayed {
        Ok(r) => r,
        Err(e) => {
            errln!("mcpspec record --replay: {e}");
            return exit::UNREACHABLE;
        }
    };
    show_replay(&replayed)
}

/// The replay's report on stdout: each answer that changed, as a diff.
fn show_replay(r: &crate::run::record::replay::Replayed) -> i32 {
    use crate::results::report::diff::{Tag, unified};
    let mut out = String::new();
    for d in &r.differences {
        out.push_str(&format!("DIFFERS  {}\n", d.request));
        match (&d.recorded, &d.now) {
            (Some(was), Some(now)) => {
                out.push_str("    diff (- recorded, + now):\n");
                for (tag, line) in unified(was, now) {
                    let mark = match tag {
                        Tag::Equal => ' ',
                        Tag::Delete => '-',
                        Tag::Insert => '+',
                    };
                    out.push_str(&format!("    {mark}{line}\n"));
                }
            }
            (Some(_), None) => out.push_str("    no answer now (the recording has one)\n"),
            (None, Some(_)) => out.push_str("    an answer now (the recording has none)\n"),
            (None, None) => {}
        }
    }
    out.push_str(&format!(
        "Replay: {} request(s), {} answered differently{}\n",
        r.requests,
        r.differences.len(),
        r.stopped
            .as_ref()
            .map(|s| format!("; stopped: {s}"))
            .unwrap_or_default()
    ));
    out!("{}", crate::ground::redact::known().redact(&out));
    if r.differences.is_empty() && r.stopped.is_none() {
        exit::OK
    } else {
        exit::FAILED
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_failed_step_and_why() {
        let report = "FAIL  recorded-session@modern (2026-07-28) 0.090s\n  PASS  list tools\n  FAIL  read note://nope\n      error: expected error code -32002, got -32602\n        --> x.yaml:43:9\nSummary: 1 suites\n";
        assert_eq!(
            super::first_failure(report).as_deref(),
            Some("`read note://nope`: error: expected error code -32002, got -32602")
        );
        assert_eq!(super::first_failure("Summary: 1 suites, 1 passed\n"), None);
    }
}

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
    let rendered = render::render(
        &session,
        &render::Options {
            name,
            expect: args.expect,
            split: args.split,
        },
    );
    let mut written = Vec::new();
    for file in &rendered.files {
        let path = args.out().join(&file.path);
        let ok = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| crate::ground::files::write_whole(&path, &file.text));
        if let Err(e) = ok {
            errln!("mcpspec record: cannot write {}: {e}", path.display());
            return exit::INVALID_INPUT;
        }
        written.push(path);
    }
    if !args.command.is_empty() || args.url.is_some() {
        let config = config_text(args, &session, &rendered.parameters);
        let path = args.out().join("mcpspec.yaml");
        if let Err(e) = crate::ground::files::write_whole(&path, config) {
            errln!("mcpspec record: cannot write {}: {e}", path.display());
            return exit::INVALID_INPUT;
        }
    }
    let scenarios = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .count();
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

/// `mcpspec.yaml` of the recording folder: the server as a target (its command line with
/// secret-looking words masked), the scenarios as paths.
fn config_text(
    args: &RecordArgs,
    session: &session::Session,
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
    let era = session.era.unwrap_or(session::EraUsed::Legacy).label();
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
    let Ok(me) = std::env::current_exe() else {
        errln!("mcpspec record --check: cannot find the mcpspec executable");
        return exit::INVALID_INPUT;
    };
    let mut cmd = std::process::Command::new(me);
    cmd.arg("run").arg(args.out().join(render::SCENARIO_DIR));
    if !args.command.is_empty() {
        cmd.arg("--stdio").arg(shell_words::join(&args.command));
    } else if let Some(url) = &args.url {
        cmd.arg("--url").arg(url);
    } else if let Some(target) = &args.target {
        cmd.arg("--stdio").arg(target);
    } else {
        errln!("mcpspec record --check: with --from-tape, give the server with --stdio");
        return exit::INVALID_INPUT;
    }
    if let Some(era) = read_era(args.out()) {
        cmd.arg("--era").arg(era);
    }
    for p in scenario_parameters(args.out()) {
        cmd.arg("--set")
            .arg(format!("{p}=env:{}", p.to_ascii_uppercase()));
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

/// The era the scenarios were written for (from their `eras:` line).
fn read_era(out: &Path) -> Option<String> {
    scenario_texts(out).into_iter().find_map(|t| {
        t.lines().find_map(|l| {
            l.strip_prefix("eras: [")
                .map(|r| r.trim_end_matches(']').to_string())
        })
    })
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

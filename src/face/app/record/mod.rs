//! `mcpspec record`: stand between a real client and the server, then write what happened
//! as scenarios (see the book's "From a session to scenarios").
//!
//! Everything the session said goes to the tape first (scrubbed of secrets, streamed to
//! disk); the scenarios are written from the tape, so `--from-tape` can write them again
//! with other options, and a crash mid-session leaves a tape up to the crash.

mod check;
mod eras;
mod render;
mod replay;
mod session;

use std::path::{Path, PathBuf};

use crate::face::cli::{RecordArgs, exit};
use crate::run::record::tape::TAPE_SUFFIX;
use crate::run::record::{End, Scrubber, TapeWriter, read_tape, stdio};

pub fn record(args: RecordArgs) -> i32 {
    if let Some(tape) = &args.replay {
        return replay::replay(&args, tape);
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
    check::check(&args)
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
    let runtime = super::runtime::runtime();
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

fn report_session(session: &crate::run::record::stdio::RelaySummary, tape_path: &Path) {
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
        eras: eras::first_eras(args, &session),
    };
    let mut written = match write_rendered(args, &session, &options) {
        Ok(w) => w,
        Err(code) => return code,
    };
    if options.eras == render::Eras::Both {
        let other = eras::other_era(&session);
        match eras::passes_in(args, other) {
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

//! `--replay`: the recorded client side sent again, and the answers that changed shown.

use std::path::Path;

use crate::face::cli::{RecordArgs, exit};
use crate::run::record::read_tape;

/// `--replay TAPE -- SERVER` (or `--url URL`): the recorded client side sent again; a
/// diff per answer that changed.
pub(super) fn replay(args: &RecordArgs, tape: &Path) -> i32 {
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
    let runtime = crate::face::app::runtime::runtime();
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

//! `mcpspec record`: the arguments of a recording.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "The client's MCP config launches `mcpspec record --out DIR -- SERVER ARGS…` \
instead of the server: every message is forwarded unchanged both ways and kept (secrets scrubbed) in \
DIR/session.tape.jsonl; when the client disconnects (or on Ctrl-C/SIGTERM) the session is written as \
scenarios in DIR/scenarios, with DIR/mcpspec.yaml to run them again. Nothing is written to stdout \
but the server's own output."
)]
pub struct RecordArgs {
    /// The recording folder (created if missing): the tape, the scenarios, mcpspec.yaml.
    #[arg(long, value_name = "DIR", required_unless_present = "replay")]
    pub out: Option<PathBuf>,
    /// The scenario's id (and file name), default `recorded-session`.
    #[arg(long, value_name = "ID")]
    pub name: Option<String>,
    /// What the expectations hold of each answer: its shape and stable values, a golden
    /// file, or every value.
    #[arg(long, value_enum, default_value_t = ExpectMode::Shape)]
    pub expect: ExpectMode,
    /// One scenario for the session, or one per tool called.
    #[arg(long, value_enum, default_value_t = Split::Session)]
    pub split: Split,
    /// Run the written scenarios against the same server right after recording.
    #[arg(long)]
    pub check: bool,
    /// Write the scenarios from an existing tape instead of recording a session.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    pub from_tape: Option<PathBuf>,
    /// With --from-tape and --check: the server's command line to check against.
    #[arg(long = "stdio", value_name = "COMMAND LINE", requires = "from_tape")]
    pub target: Option<String>,
    /// Send the client side of a recorded session (a tape) again to the server after `--`
    /// (or at --url) and show, per answer, where the server now answers differently (exit 1
    /// if any does).
    #[arg(long, value_name = "TAPE", conflicts_with_all = ["from_tape", "check", "listen"])]
    pub replay: Option<PathBuf>,
    /// With --replay: how long to wait for each answer (default 30s).
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| crate::language::dsl::limits::duration(s, &crate::language::dsl::limits::TIMEOUT), default_value = "30s")]
    pub timeout: std::time::Duration,
    /// An environment variable whose value is a secret whatever its name (repeatable;
    /// credential-named ones — *TOKEN*, *SECRET*, *KEY*… — always are).
    #[arg(long, value_name = "VAR")]
    pub secret_env: Vec<String>,
    /// Streamable HTTP: the server's URL; mcpspec listens on --listen and forwards there
    /// (with --replay: the session is sent there).
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "from_tape"])]
    pub url: Option<String>,
    /// Streamable HTTP: where the client connects instead of the server, a loopback
    /// `ADDR:PORT` (port 0 picks one; the address is printed to stderr).
    #[arg(long, value_name = "ADDR:PORT", requires = "url")]
    pub listen: Option<std::net::SocketAddr>,
    /// The server's command line, after `--`.
    #[arg(last = true, value_name = "SERVER")]
    pub command: Vec<String>,
}

impl RecordArgs {
    /// The recording folder (`--out`; required unless `--replay`).
    pub fn out(&self) -> &std::path::Path {
        self.out.as_deref().unwrap_or(std::path::Path::new("."))
    }
}

/// What the expectations hold of each answer.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExpectMode {
    /// The answer's shape and its stable values (default).
    #[default]
    Shape,
    /// A golden file per answer (`snapshot:`), volatile parts sanitized.
    Golden,
    /// Every value of the answer (volatile ones by pattern).
    Exact,
}

/// How the session is cut into scenario files.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Split {
    /// One scenario for the whole session.
    #[default]
    Session,
    /// One scenario per tool called (with the earlier steps whose values it uses).
    Tool,
}

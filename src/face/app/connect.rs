//! Opening one connection for a command that talks to a server directly (`call`,
//! `snapshot`), and what a failed connection prints and exits with.

use crate::face::cli::{UsageError, exit};
use crate::protocol::era::Era;
use crate::run::client::{ConnectErrorKind, Connection};

use super::inputs::usage;

fn connect_exit(kind: ConnectErrorKind) -> i32 {
    match kind {
        ConnectErrorKind::Start | ConnectErrorKind::Unreachable => exit::UNREACHABLE,
        ConnectErrorKind::Auth => exit::AUTH_REQUIRED,
        ConnectErrorKind::Protocol => exit::FAILED,
    }
}

pub(crate) async fn open(
    args: &crate::face::cli::TargetArgs,
    era: &str,
) -> Result<(Connection, Vec<String>), i32> {
    let (target, secrets) = args.to_target().map_err(usage)?;
    let era = Era::parse(era).map_err(|e| usage(UsageError(format!("--era: {e}"))))?;
    crate::ground::signals::install();
    match Connection::open(&target, &era.label, &era.request).await {
        Ok(c) => Ok((c, secrets)),
        Err(e) => Err(connect_failed(&e, &secrets)),
    }
}

/// Print why a connection failed (redacted, with the server's last stderr lines); the
/// exit code that goes with it.
pub(crate) fn connect_failed(e: &crate::run::client::ConnectError, secrets: &[String]) -> i32 {
    errln!(
        "error: {}",
        crate::ground::redact::for_terminal(&e.message, secrets)
    );
    if let Some(tail) = &e.stderr_tail {
        errln!(
            "server stderr (last lines):\n{}",
            crate::ground::redact::for_terminal(tail, secrets)
        );
    }
    connect_exit(e.kind)
}

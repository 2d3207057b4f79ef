//! `mcpspec call`: one request to the server, its response printed.

use serde_json::Value;

use crate::face::cli::{CallArgs, UsageError, exit};

use crate::face::app::connect::open;
use crate::face::app::inputs::usage;

pub(super) async fn call(args: CallArgs) -> i32 {
    let params = match args
        .params
        .as_deref()
        .map(serde_json::from_str::<Value>)
        .transpose()
    {
        Ok(p) => p,
        Err(e) => return usage(UsageError(format!("--params is not valid JSON: {e}"))),
    };
    let (mut conn, secrets) = match open(&args.target, &args.era).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let id = conn.next_id();
    let out = conn.build_plain(&args.method, params, Some(id));
    let n = &conn.negotiated;
    errln!(
        "# era {} ({}){}",
        n.kind.as_str(),
        n.revision,
        n.note
            .as_ref()
            .map(|x| format!(": {x}"))
            .unwrap_or_default()
    );
    let code = match conn.send(&out).await {
        Ok(ex) => match &ex.response {
            Some(resp) => {
                let text = serde_json::to_string_pretty(resp).unwrap_or_default();
                outln!("{}", crate::ground::redact::for_terminal(&text, &secrets));
                if resp.get("error").is_some() {
                    exit::FAILED
                } else {
                    exit::OK
                }
            }
            None => {
                let why = crate::language::assert::describe_no_response(&ex);
                errln!(
                    "error: {}",
                    crate::ground::redact::for_terminal(&why, &secrets)
                );
                exit::FAILED
            }
        },
        Err(e) => {
            errln!(
                "error: {}",
                crate::ground::redact::for_terminal(&e.to_string(), &secrets)
            );
            exit::FAILED
        }
    };
    conn.close().await;
    code
}
